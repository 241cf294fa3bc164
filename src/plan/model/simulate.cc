#include "plan/model/simulate.h"

#include <algorithm>

#include "plan/model/duplex.h"
#include "plan/model/slicing.h"
#include "plan/planners/planner.h"

namespace dynacomm::plan {

const char* to_string(EventKind k) {
  switch (k) {
    case EventKind::kPull:
      return "pull";
    case EventKind::kForward:
      return "forward";
    case EventKind::kBackward:
      return "backward";
    case EventKind::kPush:
      return "push";
  }
  return "?";
}

double compute_end(double start, double work_ms, double busy_until, double stretch) {
  if (start >= busy_until || stretch == 1) return start + work_ms;
  const double slow_work = (busy_until - start) / stretch;  // done before the link frees
  if (work_ms <= slow_work) return start + work_ms * stretch;
  return busy_until + (work_ms - slow_work);
}

double simulate_unchecked(const ModelProfile& profile, const LinkProfile& link, const Plan& plan,
                          Timeline* timeline) {
  const auto& units = profile.units;
  if (timeline) timeline->events.clear();
  auto record = [&](EventKind k, int i, double s, double e) {
    if (timeline) timeline->events.push_back({k, i, s, e});
  };

  // Pulls go back to back from one round trip in: the downlink carries data until the last
  // one has arrived, whatever compute does.
  double downlink_free = 2 * link.latency_ms;  // first byte can arrive one round trip in
  std::vector<double> arrived(plan.pull.size());
  for (std::size_t j = 0; j < plan.pull.size(); ++j) {
    const Segment& s = plan.pull[j];
    std::int64_t bytes = 0;
    for (int u = s.first; u <= s.last; ++u) bytes += units[u].down_bytes();
    arrived[j] = downlink_free + link.down_ms(bytes);
    record(EventKind::kPull, static_cast<int>(j), downlink_free, arrived[j]);
    downlink_free = arrived[j];
  }
  // Forward of each pull segment's units once it has arrived, stretched while the downlink
  // is still busy.
  double compute_free = 0;
  for (std::size_t j = 0; j < plan.pull.size(); ++j) {
    compute_free = std::max(compute_free, arrived[j]);
    for (int u = plan.pull[j].first; u <= plan.pull[j].last; ++u) {
      double end =
          compute_end(compute_free, units[u].forward_ms, downlink_free, link.compute_stretch_down);
      record(EventKind::kForward, u, compute_free, end);
      compute_free = end;
    }
  }
  const double forward_end = compute_free;

  // Backward, top unit first. Push segments are interleaved with it: a segment can go as
  // soon as the backward of its lowest unit has finished and the uplink is free. From the
  // first push on, the uplink is busy from where backward stands until uplink_free (a push
  // starts when backward reaches it, or straight after the one before), and backward runs
  // stretched while it is.
  double uplink_free = 0;
  int next_backward = profile.num_units() - 1;
  for (std::size_t j = 0; j < plan.push.size(); ++j) {
    const Segment& s = plan.push[j];
    for (; next_backward >= s.first; --next_backward) {
      double end = compute_end(compute_free, units[next_backward].backward_ms, uplink_free,
                               link.compute_stretch_up);
      record(EventKind::kBackward, next_backward, compute_free, end);
      compute_free = end;
    }
    std::int64_t bytes = 0;
    for (int u = s.first; u <= s.last; ++u) bytes += units[u].up_bytes();
    double start = std::max(uplink_free, compute_free);
    uplink_free = start + link.up_ms(bytes);
    record(EventKind::kPush, static_cast<int>(j), start, uplink_free);
  }
  const double iteration = uplink_free + link.latency_ms;
  if (timeline) {
    timeline->forward_end_ms = forward_end;
    timeline->backward_end_ms = compute_free;
    timeline->iteration_ms = iteration;
    // Events were recorded in processing order; present each kind in time order.
    std::stable_sort(timeline->events.begin(), timeline->events.end(),
                     [](const Event& a, const Event& b) { return a.kind < b.kind; });
  }
  return iteration;
}

double simulate(const ModelProfile& profile, const LinkProfile& link, const Plan& plan,
                Timeline* timeline) {
  profile.validate();
  link.validate();
  plan.validate(profile.num_units());
  return simulate_unchecked(profile, link, plan, timeline);
}

double predict_ms(const ModelProfile& profile, const LinkProfile& link, const Plan& plan) {
  if (plan.atom_params > 0)  // over the atom profile: same model, finer units
    return predict_ms(Slicing::make(profile, plan.atom_params).atom_profile(profile), link, [&] {
      Plan p = plan;
      p.atom_params = 0;
      return p;
    }());
  if (plan.full_duplex) return predict_duplex_ms(profile, link, plan);
  return simulate(profile, link, plan);
}

double ideal_ms(const ModelProfile& profile, const LinkProfile& link, const Plan& plan) {
  return plan.full_duplex ? ideal_duplex_ms(profile, link) : ideal_ms(profile, link);
}

double ideal_ms(const ModelProfile& profile, const LinkProfile& link) {
  return simulate(profile, link.without_overhead(),
                  make_plan("layerwise", profile, link, PlannerOptions{}));
}

}  // namespace dynacomm::plan
