// dynacomm-fd: the full-duplex, cross-iteration plan with the shortest predicted
// steady-state period (plan/duplex.h; docs/full-duplex.md says what it is optimal over).
// Two families are searched, and the fastest plan kept (ties: the first found):
//  - in pull order (the PS answers in the plan's order; pushes in backward order):
//    plan_duplex's search over segmentations and pull orders, over whole units and over
//    units cut into slices of each size in the options (plan/slicing.h) that leaves at
//    most 3 pieces per unit on average (the search grows with the pieces);
//  - by priority (the ready piece lowest in the model goes first, both ways, with a
//    credit of unacknowledged push bytes): every slice size in the options, each piece
//    its own transmission, credits of 1..16 pieces. This family holds the plans of the
//    `p3` and `bytescheduler` peers at their default sizes, so dynacomm-fd is never
//    predicted slower than they are.
// Among plans predicted equal (where compute bounds the period, many are): first the one
// whose period is shortest when every ack comes back a round trip (2 x latency) late, then
// the one whose period is shortest on the same link at half the bandwidth: the plans that
// hold up best when acks queue behind other workers' bursts of parameters (below) and
// when the edge link slows. Late acks: mobilenetv2's shipped profile at 95/96 Mbit/s,
// 10 ms, P3's slices with P3's credit (4 slices) and with 8 are both predicted 806.1 ms;
// with acks 20 ms late the 4-slice credit stalls the uplink (862.2 ms), 8 does not. In
// the 4-worker job at 100 Mbit/s the acks waited on the downlink 10-14 ms at the median,
// 55-60 ms at the 90th percentile: the PS releases a unit when the last worker's
// gradient is in, in bursts one worker's model does not have. Half the bandwidth,
// measured where it mattered (an earlier session, same setting): every
// full-duplex plan predicted 1215.0 ms; the first found (whole units in pull order)
// measured 1724 ms, P3's slices under priority (the better one at half the bandwidth)
// 1334 ms, in the same job.
#include <algorithm>
#include <cmath>

#include "plan/duplex.h"
#include "plan/planner.h"
#include "plan/slicing.h"

namespace dynacomm::plan {

Plan plan_dynacomm_fd(const ModelProfile& profile, const LinkProfile& link,
                      const PlannerOptions& options) {
  DuplexOptions late;  // the first tie-break: acks a round trip late
  late.ack_delay_ms = 2 * link.latency_ms;
  LinkProfile slower = link;  // the second: the same link at half the bandwidth
  slower.down_bps /= 2;
  slower.up_bps /= 2;
  Plan best = plan_duplex(profile, link);
  double best_ms = simulate_duplex(profile, link, best).period_ms;
  double best_late_ms = simulate_duplex(profile, link, best, late).period_ms;
  double best_slower_ms = simulate_duplex(profile, slower, best).period_ms;
  auto consider = [&](Plan p, const ModelProfile& atoms, std::int64_t slice) {
    const double ms = simulate_duplex(atoms, link, p).period_ms;
    if (ms > best_ms * (1 + 1e-9)) return;
    const double late_ms = simulate_duplex(atoms, link, p, late).period_ms;
    const double slower_ms = simulate_duplex(atoms, slower, p).period_ms;
    const bool faster = ms < best_ms * (1 - 1e-9);
    const bool sturdier = late_ms < best_late_ms * (1 - 1e-9);
    const bool as_sturdy = late_ms <= best_late_ms * (1 + 1e-9);
    if (faster || sturdier || (as_sturdy && slower_ms < best_slower_ms * (1 - 1e-9))) {
      p.atom_params = slice;
      best = std::move(p);
      best_ms = std::min(best_ms, ms);  // a tie never raises the bar
      best_late_ms = late_ms;
      best_slower_ms = slower_ms;
    }
  };
  for (std::int64_t slice : options.fd_slice_params) {
    const Slicing s = Slicing::make(profile, slice);
    const ModelProfile atoms = s.atom_profile(profile);
    if (s.num_atoms() > profile.num_units() && s.num_atoms() <= 3 * profile.num_units())
      consider(plan_duplex(atoms, link), atoms, slice);
    for (int pieces : {1, 2, 4, 8, 16})  // by priority: every piece alone
      consider(priority_plan(s, static_cast<std::int64_t>(pieces) * slice * 4), atoms, slice);
  }
  best.scheduler = "dynacomm-fd";
  return best;
}

}  // namespace dynacomm::plan
