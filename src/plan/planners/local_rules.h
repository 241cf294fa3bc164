// Shared state for the one-pass "local rule" planners (greedy, mgwfbp): both walk the pull
// in forward order and the push in backward order, deciding at each unit whether to add it
// to the open segment or to close the segment, from the profiled times alone.
#pragma once

#include <vector>

#include "plan/planners/planner.h"

namespace dynacomm::plan::detail {

// Time the data of units [first, last] takes on the link, without the fixed cost, ms.
struct Prefix {
  std::vector<double> down_ms, up_ms, forward_ms;  // prefix sums, size L+1
  std::vector<double> backward_done_ms;            // E_u with forward ending at 0, size L

  Prefix(const ModelProfile& profile, const LinkProfile& link);
  double down(int first, int last) const { return down_ms[last + 1] - down_ms[first]; }
  double up(int first, int last) const { return up_ms[last + 1] - up_ms[first]; }
  double forward(int first, int last) const { return forward_ms[last + 1] - forward_ms[first]; }
};

// Pull rule: given the open segment [first, last], the time the downlink is free before it,
// and the time compute is free before it, return true to add unit last+1 to it.
using PullRule = bool (*)(const Prefix&, const LinkProfile&, int first, int last,
                          double downlink_free, double compute_free);
// Push rule: given the open segment [first, last] (first = its lowest unit) and the time
// the uplink is free before it, return true to add unit first-1 to it.
using PushRule = bool (*)(const Prefix&, const LinkProfile&, int first, int last,
                          double uplink_free);

Plan plan_by_local_rules(const ModelProfile& profile, const LinkProfile& link, PullRule pull,
                         PushRule push);

}  // namespace dynacomm::plan::detail
