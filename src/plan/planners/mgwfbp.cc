// MG-WFBP (Shi et al., INFOCOM 2019): merge a layer's gradients into the next layer's
// message when merging is not slower than sending the two apart.
//
// Push (the direction the rule was designed for): compare the time both the open segment
// and the next unit (one below) have reached the PS, merged vs. apart; merge on a tie.
// Pull (the mirror): compare the time the forward pass has got through the next unit,
// with that unit merged into the open segment vs. sent as its own segment.
#include <algorithm>

#include "plan/planners/local_rules.h"

namespace dynacomm::plan {

namespace {

bool merge_pull(const detail::Prefix& pre, const LinkProfile& link, int first, int last,
                double downlink_free, double compute_free) {
  const int next = last + 1;
  const double ad = link.overhead_down_ms;
  double merged_arrival = downlink_free + ad + pre.down(first, next);
  double merged = std::max(compute_free, merged_arrival) + pre.forward(first, next);
  double arrival = downlink_free + ad + pre.down(first, last);
  double done = std::max(compute_free, arrival) + pre.forward(first, last);
  double apart = std::max(done, arrival + ad + pre.down(next, next)) + pre.forward(next, next);
  return merged <= apart;
}

bool merge_push(const detail::Prefix& pre, const LinkProfile& link, int first, int last,
                double uplink_free) {
  const int next = first - 1;
  const double au = link.overhead_up_ms;
  const double* ready = pre.backward_done_ms.data();
  double merged = std::max(uplink_free, ready[next]) + au + pre.up(next, last);
  double sent = std::max(uplink_free, ready[first]) + au + pre.up(first, last);
  double apart = std::max(sent, ready[next]) + au + pre.up(next, next);
  return merged <= apart;
}

}  // namespace

Plan plan_mgwfbp(const ModelProfile& profile, const LinkProfile& link, const PlannerOptions&) {
  return detail::plan_by_local_rules(profile, link, merge_pull, merge_push);
}

}  // namespace dynacomm::plan
