// Buckets for ring all-reduce (--arch allreduce): which consecutive units' gradients are
// all-reduced together, in the order backward produces them.
//
//  - optimal: the DynaComm push DP (dynacomm.h) on the ring's cost (plan/model/ring.h), from
//    the measured profile and link: exact for that model (checked against brute force).
//  - fixed: PyTorch DDP's rule, for comparison: fill a bucket in backward order until it
//    holds `cap_bytes` (the first one `first_cap_bytes`: DDP's 25 MB and 1 MB), a unit never
//    split; a unit larger than the cap is a bucket of its own.
//
//   std::vector<Segment> b = optimal_ring_buckets(profile, RingCost::of(link, 4));
//   double ms = simulate_ring(profile, RingCost::of(link, 4), b);
#pragma once

#include <cstdint>
#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"
#include "plan/model/ring.h"

namespace dynacomm::plan {

std::vector<Segment> optimal_ring_buckets(const ModelProfile& profile, const RingCost& cost);

std::vector<Segment> fixed_ring_buckets(const ModelProfile& profile, std::int64_t cap_bytes,
                                        std::int64_t first_cap_bytes);

}  // namespace dynacomm::plan
