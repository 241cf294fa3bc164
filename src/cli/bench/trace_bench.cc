#include "cli/bench/trace_bench.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/error.h"
#include "base/stats.h"
#include "cli/bench/common.h"
#include "cli/bench/trace_report.h"
#include "cli/bench/trace_windows.h"
#include "cli/cluster_job.h"
#include "cluster/local_cluster.h"
#include "plan/replan/trace_file.h"
#include "report/run_folder.h"
#include "worker/metrics.h"

namespace dynacomm::cli::bench {

plan::ReplanMode policy_mode(const std::string& name) {
  if (name == "dynacomm") return plan::ReplanMode::kDynamic;
  if (name == "dynacomm-static") return plan::ReplanMode::kStatic;
  if (name == "dynacomm-epoch") return plan::ReplanMode::kEpoch;
  if (name == "oracle") return plan::ReplanMode::kOracle;
  throw InvalidInput("bench: unknown policy '" + name +
                     "' (known: dynacomm, dynacomm-static, dynacomm-epoch, oracle)");
}

namespace {

// One job per policy on the same trace, one after the other; epoch_iterations: the jobs'.
std::vector<PolicyRun> run_policies(const BenchFlags& f, const JobFlags& base,
                                    const std::vector<std::string>& policies,
                                    const std::string& out, int threads,
                                    std::int64_t& epoch_iterations) {
  std::vector<PolicyRun> runs;
  for (const std::string& name : policies) {
    JobFlags j = base;
    j.replan = plan::to_string(policy_mode(name));
    const std::vector<JobFlags> per_worker = per_worker_flags(j, {});
    const std::string dir = out + "/" + name;
    std::fprintf(
        stderr,
        "bench: %s, policy %s (--replan %s) on %s, %lld iterations after "
        "warm-up\n",
        j.model.c_str(), name.c_str(), j.replan.c_str(),
        base.link_trace.empty() ? base.device_slowdown_trace.c_str() : base.link_trace.c_str(),
        static_cast<long long>(f.iterations));
    // Under --net netns the job makes (and removes) its own namespaces.
    const RunSummary summary =
        run_cluster_job(j, per_worker, dir, threads, nullptr, {"bench " + name, 0, 0});
    const worker::MetricsTable m = worker::read_metrics_csv(dir + "/metrics.csv");
    const auto& it = m.at(worker::metrics::kIteration);
    PolicyRun run;
    run.name = name;
    run.ideal_ms = summary.ideal_ms;
    for (std::size_t i = 0; i + 1 < it.size(); ++i) {
      if (it[i] < j.warmup) continue;
      run.iteration.push_back(static_cast<std::int64_t>(it[i]));
      run.start_s.push_back(m.at(worker::metrics::kStartS)[i]);
      run.ms.push_back(m.at(worker::metrics::kIterationMs)[i]);
      run.evaluated.push_back(m.at(worker::metrics::kTestAccuracy)[i] >= 0);
    }
    for (const auto& c : summary.plan_changes) run.plan_changes.push_back(to_json(c));
    epoch_iterations = summary.iterations_per_epoch;
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace

void run_trace_bench(const BenchFlags& f) {
  JobFlags base = f.job;
  const std::vector<std::string> policies = split(f.policies);
  if (policies.empty()) throw InvalidInput("bench: --policies names no policy");
  for (const auto& p : policies) (void)policy_mode(p);
  if (!f.sweep.empty() || !f.peers.empty())
    throw InvalidInput(
        "bench: --link-trace compares re-planning policies; it does not combine "
        "with --sweep-bandwidth or --peers");
  if (f.iterations < 1) throw InvalidInput("bench: --iterations must be at least 1");
  base.rotation.clear();
  base.iterations = base.warmup + f.iterations + 1;  // + the last, not measured
  base.epochs = 1000;                                // --iterations ends the run
  if (base.test_samples == 0) base.test_samples = 1000;
  validate_job(base, per_worker_flags(base, {}));  // before anything starts, traces included
  plan::LinkTrace trace;
  if (!base.link_trace.empty()) trace = plan::load_link_trace(base.link_trace);
  if (trace.by_iteration)
    throw InvalidInput("bench --link-trace " + base.link_trace +
                       ": its charts and windows are in seconds; give a trace keyed by time_s");

  const std::string out = f.out.empty() ? "runs/bench-" + base.model + "-trace" : f.out;
  report::RunFolder folder(out);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = f.threads > 0 ? f.threads : std::max(1, cores / base.workers);
  cluster::install_interrupt_handler();

  std::int64_t epoch_iterations = 0;
  const std::vector<PolicyRun> runs =
      run_policies(f, base, policies, out, threads, epoch_iterations);

  write_trace_report(f, base, trace.for_worker(0), runs, epoch_iterations, out);
}

}  // namespace dynacomm::cli::bench
