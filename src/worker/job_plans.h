// The plans a worker runs after its warm-up, and the job protocol that keeps a job's
// full-duplex plans one (ps/server.h): each worker offers the ones it made with its
// prediction, and every worker runs, for each, the plan of the worker that predicted
// itself slowest with it.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "plan/model/slicing.h"
#include "plan/planners/planner.h"
#include "worker/comm.h"
#include "worker/worker.h"

namespace dynacomm::worker {

// A plan another worker made, as the PS handed it over (`whose` names it): parsed and
// checked against this worker's model and the job's atoms; an Error saying why not.
plan::Plan plan_from_peer(const nlohmann::json& j, const plan::ModelProfile& profile,
                          const plan::Slicing& slicing, const std::string& whose);

// The scheduler's plan (or one per strategy of a rotation) for the warm-up's figures,
// each with its prediction and ideal, ids from 1; with several workers the full-duplex
// ones are agreed through the PS (Timeout / Error naming the wait). --scheduler auto:
// every strategy is planned, and the one predicted fastest for the job is the only plan
// returned; `choice` says which and why, `ranking` lists every strategy's prediction for the
// job, fastest first.
std::vector<WorkerResult::PlanInfo> first_plans(Comm& comm, const WorkerOptions& o,
                                                const plan::ModelProfile& profile,
                                                const plan::LinkProfile& link,
                                                const plan::PlannerOptions& planner,
                                                const plan::Slicing& slicing,
                                                std::ostream& progress, std::string& choice,
                                                std::vector<WorkerResult::Ranked>& ranking);

}  // namespace dynacomm::worker
