// Exhaustive planners, for tests: they try every segmentation and simulate each, so they
// share nothing with the DP but the simulator. A partition of units 0..L-1 into consecutive
// segments is a bit mask of L-1 bits: bit i set means a cut between unit i and unit i+1.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"

namespace dynacomm::plan {

struct BruteForceResult {
  Plan plan;
  double iteration_ms = 0;
};

// Ascending segments for a cut mask.
std::vector<Segment> segments_from_cuts(int num_units, std::uint32_t cuts);

// All pull x push partitions: 4^(L-1) simulations. Throws InvalidInput for L > 10.
BruteForceResult brute_force_joint(const ModelProfile& profile, const LinkProfile& link);
// All pull partitions with the push fixed, and vice versa: 2^(L-1) simulations each.
// Throws InvalidInput for L > 20.
BruteForceResult brute_force_pull(const ModelProfile& profile, const LinkProfile& link,
                                  const std::vector<Segment>& push);
BruteForceResult brute_force_push(const ModelProfile& profile, const LinkProfile& link,
                                  const std::vector<Segment>& pull);

}  // namespace dynacomm::plan
