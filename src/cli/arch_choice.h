// --arch auto for `train` and `bench`: before any process starts, the launcher profiles the
// model on this machine (as the workers will run it: their threads, their share of its
// cores), predicts each architecture that fits the job's other flags from that profile,
// the slowest worker's edge link and the PS's link (plan/planners/architecture.h), and runs
// the fastest. The predictions and the choice go into the run's summary.json
// ("arch_choice") and its log.
#pragma once

#include <string>
#include <vector>

#include "cli/job_flags.h"
#include "plan/planners/architecture.h"

namespace dynacomm::cli {

// The architectures the job's flags allow (each one's validate_job passes); throws the
// PS's InvalidInput when none does.
std::vector<std::string> architectures_that_fit(const JobFlags& job,
                                                const std::vector<JobFlags>& per_worker);

// Chooses, and sets the choice on `job` and every worker's flags. `threads`: each worker's
// compute threads.
plan::ArchitectureChoice choose_job_architecture(JobFlags& job, std::vector<JobFlags>& per_worker,
                                                 int threads);

}  // namespace dynacomm::cli
