#include "plan/planners/ring_buckets.h"

#include "plan/planners/dynacomm.h"

namespace dynacomm::plan {

std::vector<Segment> optimal_ring_buckets(const ModelProfile& profile, const RingCost& cost) {
  profile.validate();
  return optimal_push(profile, cost.as_push_link()).segments;
}

std::vector<Segment> fixed_ring_buckets(const ModelProfile& profile, std::int64_t cap_bytes,
                                        std::int64_t first_cap_bytes) {
  profile.validate();
  std::vector<Segment> out;
  std::int64_t filled = 0;
  int top = profile.num_units() - 1;
  for (int u = top; u >= 0; --u) {
    filled += profile.units[u].up_bytes();
    const std::int64_t cap = out.empty() ? first_cap_bytes : cap_bytes;
    if (filled >= cap || u == 0) {
      out.push_back({u, top});
      top = u - 1;
      filled = 0;
    }
  }
  return out;
}

}  // namespace dynacomm::plan
