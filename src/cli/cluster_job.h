// Running a PS and N workers as processes on this machine: the one path `dynacomm train`
// and `dynacomm bench` share.
//
//   std::vector<JobFlags> w = per_worker_flags(job, {"1:10mbit,2mbit,50ms"});
//   RunSummary summary = run_cluster_job(job, w, "runs/x", /*threads=*/1, nullptr);
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/job_flags.h"
#include "cli/run_summary.h"
#include "cluster/netns.h"
#include "cluster/status.h"

namespace dynacomm::cli {

// The job's flags for every worker, with the per-worker link overrides
// "R:down,up,latency" and device slowdowns "R:FACTOR" applied; throws InvalidInput naming a
// bad override.
std::vector<JobFlags> per_worker_flags(const JobFlags& job, const std::vector<std::string>& links,
                                       const std::vector<std::string>& slowdowns = {});
// The flags of those overrides, --link and --worker-slowdown (repeatable), their help
// text after `when` ("": always).
void add_worker_overrides(CLI::App* cmd, std::vector<std::string>& links,
                          std::vector<std::string>& slowdowns, const std::string& when);

// Starts the PS and the workers (with --net netns in `topology`'s namespaces, made here
// when null), shows the combined progress line, waits, merges the traces into
// run_dir/trace.json and returns rank 0's summary.json (cli/run_summary.h). Throws Error naming the
// process that failed.
// `style`: how the progress line reads (a bench's label and turns; cluster/status.h).
// `control`: restarts of failed workers, and more arguments for the PS (checkpoints).
struct JobControl {
  int max_restarts = 0;  // a failed worker is started again up to this many times in all,
                         // and rejoins the job (said on the progress display)
  std::vector<std::string> ps_args;
  // The PS's checkpoints: a PS that fails with one there (and restarts left) is started
  // again from it, with every worker ("": a failed PS stops the job).
  std::string checkpoint_dir;
  std::vector<std::vector<std::string>> worker_args;  // by rank (CURVE keys)
  // Ctrl-C stops the workers at their next iteration, and they save (train); 0: at once.
  std::chrono::milliseconds graceful_interrupt{0};
  // --target-accuracy stops the job once rank 0's evaluation reaches it; false: it trains
  // on to its end (the final accuracy after the same epochs; the time to it still said).
  bool stop_at_target = true;
};
RunSummary run_cluster_job(const JobFlags& job, const std::vector<JobFlags>& per_worker,
                           const std::string& run_dir, int threads,
                           cluster::NetnsTopology* topology, const cluster::StatusStyle& style = {},
                           const JobControl& control = {});

// Checks every flag of the job and of each worker (options, traces for their ranks, the
// data folder) as the PS and the workers would, so a bad value fails before anything
// starts. Throws InvalidInput naming it.
void validate_job(const JobFlags& job, const std::vector<JobFlags>& per_worker);

// The link rates of every worker, and of the PS's link (--ps-link), for a NetnsTopology.
std::vector<cluster::EdgeLinkRates> link_rates(const std::vector<JobFlags>& per_worker);
cluster::CloudLinkRates cloud_rates(const JobFlags& job);

}  // namespace dynacomm::cli
