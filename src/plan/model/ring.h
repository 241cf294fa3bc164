// The cost of ring all-reduce (--arch allreduce), and of one iteration whose gradients are
// all-reduced in buckets that overlap the backward pass.
//
// Ring all-reduce of B bytes among P workers (reduce-scatter, then all-gather): 2(P-1)
// steps; in each, every worker sends B/P bytes to its right neighbour while it receives as
// many from its left one, and a step cannot start before the previous one's data has
// arrived. Each step costs one transmission's overhead plus the one-way latency, and the
// bytes cross the slower of the worker's two directions (it sends and receives at once):
//
//   T(B) = 2(P-1) * (overhead + latency) + 2(P-1)/P * B * 8 / min(down, up)
//
// (one worker: 0). The overhead is the larger of the link's two. An iteration (no pulls: the
// weights are local): forward, then backward; bucket b, a range of consecutive units sent in
// the order backward produces them, starts when backward has finished its lowest unit and
// the previous bucket is done, and takes T(its bytes). The iteration ends when backward and
// the last bucket are done (the optimiser step after it is the same for every plan and left
// out). This is the push side of the parameter-server model (simulate.h) on a link whose
// per-transmission cost is the ring's fixed part and whose bandwidth is the ring's
// effective one, so the DynaComm push DP plans buckets exactly
// (RingCost::as_push_link).
//
//   RingCost cost = RingCost::of(link, 4);
//   double it = simulate_ring(profile, cost, buckets);
#pragma once

#include <cstdint>
#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"

namespace dynacomm::plan {

// T(bytes) = fixed_ms + bytes * 8e3 / bps: from a link and a worker count (of), or fitted
// to measured all-reduces (the runtime's).
struct RingCost {
  double fixed_ms = 0;
  double bps = 0;  // the bucket's bytes over the ring, effective; 0: nothing travels
  double ms(std::int64_t bytes) const {
    return bytes <= 0 || bps <= 0 ? 0 : fixed_ms + static_cast<double>(bytes) * 8e3 / bps;
  }
  // Throws InvalidInput for workers < 1.
  static RingCost of(const LinkProfile& link, int workers);
  // The link whose up_ms(bytes) is ms(bytes), no latency: the push DP on it plans buckets.
  LinkProfile as_push_link() const;
};

// T(bytes) above for `link` and `workers`.
double ring_allreduce_ms(const LinkProfile& link, int workers, std::int64_t bytes);

// The iteration time of `buckets` (send order, as a Plan's push: the first holds unit L-1),
// backward running `stretch_up` times slower while a bucket is on the ring (simulate.h).
// Throws InvalidInput when the buckets do not cover the units in that order.
double simulate_ring(const ModelProfile& profile, const RingCost& cost,
                     const std::vector<Segment>& buckets, double stretch_up = 1);

}  // namespace dynacomm::plan
