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
// effective one (ring_as_push_link), so the DynaComm push DP plans buckets exactly.
//
//   double ms = ring_allreduce_ms(link, 4, 44 << 20);
//   double it = simulate_ring(profile, link, 4, buckets);
#pragma once

#include <cstdint>
#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"

namespace dynacomm::plan {

// T(bytes) above; 0 for one worker or no bytes.
double ring_allreduce_ms(const LinkProfile& link, int workers, std::int64_t bytes);

// The link whose up_ms(bytes) is T(bytes) (for one worker: an instant one), with no latency
// and no compute stretch on the way down; the push DP on it plans the ring's buckets.
LinkProfile ring_as_push_link(const LinkProfile& link, int workers);

// The iteration time of `buckets` (send order, as a Plan's push: the first holds unit L-1).
// Throws InvalidInput when the buckets do not cover the units in that order or workers < 1.
double simulate_ring(const ModelProfile& profile, const LinkProfile& link, int workers,
                     const std::vector<Segment>& buckets);

}  // namespace dynacomm::plan
