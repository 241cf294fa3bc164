#include "worker/repredict.h"

#include <algorithm>
#include <tuple>

#include "plan/model/duplex.h"
#include "plan/model/simulate.h"
#include "worker/estimates.h"

namespace dynacomm::worker {

namespace {

// The workers' spread: the last 4 iterations' unit times as measured before `it`, one
// per worker and iteration in turn (the others taken to be like this one in distribution).
double workers_ms(const WorkerOptions& o, const RotationLog& log, const plan::ModelProfile& profile,
                  const plan::LinkProfile& now, const plan::Plan& p, std::int64_t it) {
  const auto end = std::partition_point(log.wall.begin(), log.wall.end(),
                                        [&](const UnitSample& c) { return c.iteration < it; });
  std::vector<plan::ModelProfile> samples;
  for (auto c = end - std::min<std::ptrdiff_t>(4, end - log.wall.begin()); c != end; ++c) {
    plan::ModelProfile m = profile;
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
             : plan::predict_duplex_workers_ms(samples, o.workers, measured_under_load, p);
}

}  // namespace

void repredict_rotation(const WorkerOptions& o, const RotationLog& log,
                        const plan::ModelProfile& profile, const plan::LinkProfile& given,
                        const StretchTracker& tracker, const plan::PlannerOptions& planner,
                        double latency_ms, WorkerResult& result) {
  const std::size_t n_units = profile.units.size();
  plan::UnitTimeEstimator c(n_units, o.estimator);
  plan::LinkEstimator down(o.estimator), up(o.estimator);
  plan::AggregationEstimator aggregation(o.estimator);
  std::size_t next_sample = 0, next_pace = 0, next_update = 0;
  std::vector<std::pair<std::int64_t, const Comm::LinkEvent*>> events;
  for (const Comm::LinkEvent& e : log.transfers) events.emplace_back(e.iteration, &e);
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t next_event = 0;
  const std::vector<UnitSample>& compute = log.compute;
  for (IterationRecord& r : result.iterations) {
    for (; next_sample < compute.size() && compute[next_sample].iteration < r.iteration;
         ++next_sample)
      c.add(compute[next_sample].iteration, compute[next_sample].forward,
            compute[next_sample].backward);
    // The pace of t - 1 arrives during t: known from t + 1 on.
    for (; next_pace < compute.size() && compute[next_pace].iteration < r.iteration - 1;
         ++next_pace)
      if (compute[next_pace].pace >= 1)
        c.pace(compute[next_pace].iteration, compute[next_pace].pace);
    for (; next_event < events.size() && events[next_event].first < r.iteration; ++next_event) {
      const Comm::LinkEvent& e = *events[next_event].second;
      (e.up ? up : down).add(e.iteration, static_cast<double>(e.bytes), e.service_ms);
    }
    for (; next_update < log.updates.size() && log.updates[next_update].first < r.iteration;
         ++next_update)
      aggregation.add(log.updates[next_update].first, log.updates[next_update].second.bytes,
                      log.updates[next_update].second.ms);
    if (r.iteration <= o.warmup || r.plan_id < 1 || c.empty()) continue;
    plan::LinkProfile then = given;
    if (const auto st = tracker.stretch_at(r.iteration))
      std::tie(then.compute_stretch_down, then.compute_stretch_up) = *st;
    const Replanned now = estimate(c, down, up, aggregation, profile, then, latency_ms);
    down.hold_overhead(now.held_down_ms);  // as the re-planning task hands them back
    up.hold_overhead(now.held_up_ms);
    const plan::Plan& p = result.plans[static_cast<std::size_t>(r.plan_id - 1)].plan;
    r.predicted_ms = plan::predict_plan_ms(now.profile, now.link, p, planner);
    r.ideal_ms = plan::ideal_ms(now.profile, now.link, p);
    // Rank 0's only: it writes metrics.csv, and resnet18's 306 slices take about 0.4 s each.
    if (p.full_duplex && o.workers > 1 && o.rank == 0)
      r.predicted_workers_ms = workers_ms(o, log, profile, now.link, p, r.iteration);
  }
}

}  // namespace dynacomm::worker
