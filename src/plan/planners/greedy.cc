// iBatch-style greedy batching: extend a segment while that does not delay the compute
// waiting on it. Locally, not globally, optimal.
//
// Pull (the direction the rule was designed for): the forward of the open segment's first
// unit cannot start before compute is free anyway; as long as the segment, grown by the
// next unit, still arrives by then, growing it delays nothing and saves a transmission.
// Push (the mirror): the open segment cannot leave before the uplink is free anyway; as
// long as the next unit's gradient is ready by then, waiting for it delays nothing.
#include "plan/planners/local_rules.h"

namespace dynacomm::plan {

namespace {

bool grow_pull(const detail::Prefix& pre, const LinkProfile& link, int first, int last,
               double downlink_free, double compute_free) {
  double arrival_if_grown = downlink_free + link.overhead_down_ms + pre.down(first, last + 1);
  return arrival_if_grown <= compute_free;
}

bool grow_push(const detail::Prefix& pre, const LinkProfile&, int first, int, double uplink_free) {
  return pre.backward_done_ms[first - 1] <= uplink_free;
}

}  // namespace

Plan plan_greedy(const ModelProfile& profile, const LinkProfile& link, const PlannerOptions&) {
  return detail::plan_by_local_rules(profile, link, grow_pull, grow_push);
}

}  // namespace dynacomm::plan
