#include "cli/bench/repredict.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "plan/model/duplex.h"
#include "plan/model/simulate.h"
#include "ps/sync_policy.h"
#include "worker/estimates.h"
#include "worker/metrics.h"

namespace dynacomm::cli::bench {

namespace {

using worker::RotationLog;
using worker::UnitSample;

// The workers' spread: the last 4 iterations' unit times as measured before `it`, one
// per worker and iteration in turn (the others taken to be like this one in distribution).
double workers_ms(const RotationLog& log, const plan::LinkProfile& now, const plan::Plan& p,
                  std::int64_t it) {
  const auto end = std::partition_point(log.wall.begin(), log.wall.end(),
                                        [&](const UnitSample& c) { return c.iteration < it; });
  std::vector<plan::ModelProfile> samples;
  for (auto c = end - std::min<std::ptrdiff_t>(4, end - log.wall.begin()); c != end; ++c) {
    plan::ModelProfile m = log.profile;
    for (std::size_t u = 0; u < m.units.size(); ++u) {
      m.units[u].forward_ms = c->forward[u];
      m.units[u].backward_ms = c->backward[u];
    }
    samples.push_back(std::move(m));
  }
  plan::LinkProfile measured_under_load = now;  // the times carry the stretch
  measured_under_load.compute_stretch_down = measured_under_load.compute_stretch_up = 1;
  return samples.empty()
             ? 0
             : plan::predict_duplex_workers_ms(samples, log.workers, measured_under_load, p);
}

// The estimators as a re-planning task at iteration `it` would have had them: fed, in
// log order, everything known before it.
struct Replay {
  explicit Replay(const RotationLog& log, const plan::EstimatorOptions& o)
      : log(log), compute(log.profile.units.size(), o), down(o), up(o), aggregation(o) {
    transfers = log.transfers;
    std::stable_sort(transfers.begin(), transfers.end(),
                     [](const auto& a, const auto& b) { return a.iteration < b.iteration; });
  }
  void advance_to(std::int64_t it) {
    const std::vector<UnitSample>& c = log.compute;
    for (; next_sample < c.size() && c[next_sample].iteration < it; ++next_sample)
      compute.add(c[next_sample].iteration, c[next_sample].forward, c[next_sample].backward);
    // The pace of t - 1 arrives during t: known from t + 1 on.
    for (; next_pace < c.size() && c[next_pace].iteration < it - 1; ++next_pace)
      if (c[next_pace].pace >= 1) compute.pace(c[next_pace].iteration, c[next_pace].pace);
    for (; next_transfer < transfers.size() && transfers[next_transfer].iteration < it;
         ++next_transfer) {
      const RotationLog::Transfer& t = transfers[next_transfer];
      (t.up ? up : down).add(t.iteration, t.bytes, t.service_ms);
    }
    for (; next_update < log.updates.size() && log.updates[next_update].iteration < it;
         ++next_update)
      aggregation.add(log.updates[next_update].iteration, log.updates[next_update].bytes,
                      log.updates[next_update].ms);
  }

  const RotationLog& log;
  std::vector<RotationLog::Transfer> transfers;
  plan::UnitTimeEstimator compute;
  plan::LinkEstimator down, up;
  plan::AggregationEstimator aggregation;
  std::size_t next_sample = 0, next_pace = 0, next_transfer = 0, next_update = 0;
};

std::string cell(double x) { return x > 0 ? std::to_string(x) : ""; }

}  // namespace

std::vector<Prediction> repredict(const RotationLog& log, const std::vector<plan::Plan>& plans,
                                  const worker::WorkerOptions& o) {
  plan::PlannerOptions planner = o.planner;  // as the worker planned, with its spread
  planner.workers = log.workers;
  planner.compute_spread = log.compute_spread;
  planner.pulls_answered_at_once = ps::is_asp(o.sync);  // as worker/calibration.cc sets it
  Replay r(log, o.estimator);
  std::vector<Prediction> out;
  for (const RotationLog::Iteration& i : log.iterations) {
    r.advance_to(i.iteration);
    if (i.iteration <= log.warmup || i.plan_id < 1 || r.compute.empty()) continue;
    if (static_cast<std::size_t>(i.plan_id) > plans.size())
      throw Error("rotation log: iteration " + std::to_string(i.iteration) + " ran plan " +
                  std::to_string(i.plan_id) + ", the run has " + std::to_string(plans.size()));
    plan::LinkProfile then = log.given;
    if (i.stretch_down > 0 && i.stretch_up > 0) {  // 0: none fitted yet
      then.compute_stretch_down = i.stretch_down;
      then.compute_stretch_up = i.stretch_up;
    }
    const worker::Replanned now = worker::estimate(r.compute, r.down, r.up, r.aggregation, {},
                                                   log.profile, then, log.latency_ms);
    r.down.hold(now.held_down);  // as the re-planning task hands them back
    r.up.hold(now.held_up);
    const plan::Plan& p = plans[static_cast<std::size_t>(i.plan_id - 1)];
    Prediction pr{i.iteration, plan::predict_plan_ms(now.profile, now.link, p, planner),
                  plan::ideal_ms(now.profile, now.link, p), 0};
    // Worker 0's only, and resnet18's 306 slices take about 0.4 s each.
    if (p.full_duplex && log.workers > 1) pr.workers_ms = workers_ms(log, now.link, p, i.iteration);
    out.push_back(pr);
  }
  return out;
}

void write_predictions(const report::RunFolder& folder, const std::vector<Prediction>& p) {
  std::vector<std::vector<std::string>> rows;
  for (const Prediction& x : p)
    rows.push_back(
        {std::to_string(x.iteration), cell(x.predicted_ms), cell(x.ideal_ms), cell(x.workers_ms)});
  std::vector<std::string> names;
  for (const worker::MetricsColumn& c : worker::prediction_columns()) names.push_back(c.name);
  folder.write_csv("predictions.csv", names, rows);
}

}  // namespace dynacomm::cli::bench
