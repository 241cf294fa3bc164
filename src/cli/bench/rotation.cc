#include "cli/bench/rotation.h"

#include <fstream>

#include "base/error.h"
#include "base/stats.h"

namespace dynacomm::cli::bench {

Measured measured_iterations(const worker::MetricsTable& metrics,
                             const std::vector<Prediction>& predictions, int warmup, int block,
                             int settle) {
  std::map<std::int64_t, const Prediction*> predicted;
  for (const Prediction& p : predictions) predicted[p.iteration] = &p;
  const auto& it = metrics.at(worker::metrics::kIteration);
  const auto& ms = metrics.at(worker::metrics::kIterationMs);
  const auto& plan_id = metrics.at(worker::metrics::kPlanId);
  const auto& accuracy =
      metrics.at(worker::metrics::kTestAccuracy);  // >= 0: an epoch's evaluation ran
  const auto& slowest =
      metrics.at(worker::metrics::kPredictedSlowestMs);  // any worker's, the largest
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
    const int id = static_cast<int>(plan_id[i]);
    if (const auto p = predicted.find(static_cast<std::int64_t>(it[i])); p != predicted.end()) {
      // From the estimates before it.
      if (p->second->predicted_ms > 0) online_by_plan[id].push_back(p->second->predicted_ms);
      if (p->second->ideal_ms > 0) ideal_by_plan[id].push_back(p->second->ideal_ms);
      if (p->second->workers_ms > 0) spread_by_plan[id].push_back(p->second->workers_ms);
    }
    if (slowest[i] > 0) slowest_by_plan[id].push_back(slowest[i]);
    if (stretch_down[i] >= 1) online_down.push_back(stretch_down[i]);
    if (stretch_up[i] >= 1) online_up.push_back(stretch_up[i]);
  }
  return m;
}

std::vector<Prediction> repredict_run(const std::string& dir, const RunSummary& summary,
                                      const worker::WorkerOptions& o) {
  const std::string path = dir + "/rotation.json";
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot be opened (rank 0 writes it for a rotation)");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw Error(path + ": not valid JSON");
  const worker::RotationLog log = worker::rotation_log_from_json(j, path);
  std::vector<plan::Plan> plans;
  for (const RunSummary::Plan& p : summary.plans) {
    // A sliced plan indexes atoms: as many as its segments cover (validated).
    int n = static_cast<int>(log.profile.units.size());
    const nlohmann::json& pull = p.plan.at("pull");
    if (p.plan.value("atom_params", 0) > 0 && !pull.empty() && pull.back().size() == 2 &&
        pull.back()[1].is_number_integer())
      n = pull.back()[1].get<int>() + 1;
    plans.push_back(
        plan::plan_from_json(p.plan, n, dir + "/summary.json: plan " + std::to_string(p.id)));
  }
  const std::vector<Prediction> predictions = repredict(log, plans, o);
  write_predictions(report::RunFolder(dir), predictions);
  return predictions;
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
