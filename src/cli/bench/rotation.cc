#include "cli/bench/rotation.h"

#include "base/stats.h"

namespace dynacomm::cli::bench {

Measured measured_iterations(const worker::MetricsTable& metrics, int warmup, int block,
                             int settle) {
  const auto& it = metrics.at(worker::metrics::kIteration);
  const auto& ms = metrics.at(worker::metrics::kIterationMs);
  const auto& plan_id = metrics.at(worker::metrics::kPlanId);
  const auto& accuracy =
      metrics.at(worker::metrics::kTestAccuracy);  // >= 0: an epoch's evaluation ran
  const auto& online = metrics.at(worker::metrics::kPredictedMs);    // from the estimates before it
  const auto& online_ideal = metrics.at(worker::metrics::kIdealMs);  // likewise
  const auto& slowest =
      metrics.at(worker::metrics::kPredictedSlowestMs);  // any worker's, the largest
  const auto& spread =
      metrics.at(worker::metrics::kPredictedWorkersMs);  // W workers' spread, online
  const auto& stretch_down = metrics.at(worker::metrics::kStretchDown);  // as refitted online
  const auto& stretch_up = metrics.at(worker::metrics::kStretchUp);
  Measured m;
  auto& [by_plan, online_by_plan, ideal_by_plan, slowest_by_plan, spread_by_plan, online_down,
         online_up] = m;
  for (std::size_t i = 0; i < it.size(); ++i) {
    const auto k = static_cast<std::int64_t>(it[i]) - warmup;
    // Not measured: warm-up, the first --settle iterations of a turn (the first carries the
    // previous strategy's last push; a full-duplex turn after a phase-separated one starts
    // without its pulls in flight and its workers out of step), an iteration with an epoch's
    // evaluation in it and the one after (rank 0 evaluates while the others wait, then
    // computes alone for a while: 556 ms against about 1700 for mobilenetv2 with 4 workers
    // on 2 cores), and the job's last iteration (rank 0's time for it includes fetching
    // the whole final model).
    const bool near_evaluation = accuracy[i] >= 0 || (i > 0 && accuracy[i - 1] >= 0);
    if (k < 0 || k % block < settle || near_evaluation || i + 1 == it.size()) continue;
    by_plan[static_cast<int>(plan_id[i])].push_back(ms[i]);
    if (online[i] > 0) online_by_plan[static_cast<int>(plan_id[i])].push_back(online[i]);
    if (online_ideal[i] > 0) ideal_by_plan[static_cast<int>(plan_id[i])].push_back(online_ideal[i]);
    if (slowest[i] > 0) slowest_by_plan[static_cast<int>(plan_id[i])].push_back(slowest[i]);
    if (spread[i] > 0) spread_by_plan[static_cast<int>(plan_id[i])].push_back(spread[i]);
    if (stretch_down[i] >= 1) online_down.push_back(stretch_down[i]);
    if (stretch_up[i] >= 1) online_up.push_back(stretch_up[i]);
  }
  return m;
}

double phase_separated_ideal(const RunSummary& summary,
                             std::map<int, std::vector<double>>& ideal_by_plan) {
  std::vector<double> ideals;
  for (const auto& p : summary.plans)
    if (!p.full_duplex())
      for (double x : ideal_by_plan[p.id]) ideals.push_back(x);
  return median(ideals);
}

}  // namespace dynacomm::cli::bench
