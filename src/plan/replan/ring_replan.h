// Re-planning the all-reduce buckets (--arch allreduce) while the job runs, from the ring's
// measured all-reduces: the plan-side half of what the ring worker does every
// --replan-interval iterations (worker/ring_replan.h).
//
// The link is what changes under a running job (a link trace, a shared uplink); the
// units' compute stays the warm-up's. The ring's cost is refitted to the recent
// all-reduces: both its fixed part (2(P-1) steps' overhead and latency) and its bandwidth
// when their sizes differ enough (plan/estimate/link_fit.h's robust fit), else (one bucket,
// or buckets of one size) only the bandwidth, with the fixed part kept from the last fit:
// each sample's bytes over its time less that part, their median. So from a plan of one
// bucket alone a change of latency would be read as one of bandwidth: when the recent sizes
// do not differ enough, the re-planner first runs one iteration with ring_probe's two
// unequal buckets (the weights do not depend on the buckets), then refits to both.
//
//   if (auto probe = ring_probe(profile, recent)) { run one iteration with *probe; ... }
//   RingCost now = refit_ring_cost(last, recent);
//   RingReplan r = replan_ring(profile, now, buckets, 0.05);
//   if (r.change) buckets = r.buckets;
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/estimate/link_fit.h"
#include "plan/model/plan.h"
#include "plan/model/profile.h"
#include "plan/model/ring.h"

namespace dynacomm::plan {

// The cost refitted to `recent` (each sample a bucket's bytes and the ms its all-reduce
// took), from `warm` (the last fit) as above; `warm` itself when no sample took longer than
// its fixed part.
RingCost refit_ring_cost(const RingCost& warm, const std::vector<TransferSample>& recent);

// Two buckets to run one iteration with when `recent`'s sizes do not differ enough to fit
// the fixed part (fit_link): the first (send order) holds the last units, up to where their
// bytes come nearest a third of the model's, the second the rest. nullopt when the sizes do
// differ enough, or the model has one unit.
std::optional<std::vector<Segment>> ring_probe(const ModelProfile& profile,
                                               const std::vector<TransferSample>& recent);

struct RingReplan {
  bool change = false;
  std::vector<Segment> buckets;  // the optimal buckets under the cost
  double current_ms = 0;         // the buckets in use, predicted under the cost
  double best_ms = 0;            // the optimal ones
};

// The optimal buckets under `cost`; a change when they are predicted faster than `current`
// by more than `threshold` (a fraction of current_ms), as the PS's dynamic re-planning.
RingReplan replan_ring(const ModelProfile& profile, const RingCost& cost,
                       const std::vector<Segment>& current, double threshold);

}  // namespace dynacomm::plan
