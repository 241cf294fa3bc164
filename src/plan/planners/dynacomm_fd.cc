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
// Among plans predicted equal (where compute bounds the period, many are), the one whose
// period is shortest on the same link at half the bandwidth: the plan that holds up best
// when the edge link slows. Measured where it mattered: mobilenetv2, 4 workers, 100 Mbit/s,
// every full-duplex plan predicted 1215.0 ms; the first found (whole units in pull order)
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
  LinkProfile slower = link;  // the tie-break's link
  slower.down_bps /= 2;
  slower.up_bps /= 2;
  Plan best = plan_duplex(profile, link);
  double best_ms = simulate_duplex(profile, link, best).period_ms;
  double best_slower_ms = simulate_duplex(profile, slower, best).period_ms;
  auto consider = [&](Plan p, const ModelProfile& atoms, std::int64_t slice) {
    const double ms = simulate_duplex(atoms, link, p).period_ms;
    if (ms > best_ms * (1 + 1e-9)) return;
    const double slower_ms = simulate_duplex(atoms, slower, p).period_ms;
    if (ms < best_ms * (1 - 1e-9) || slower_ms < best_slower_ms * (1 - 1e-9)) {
      p.atom_params = slice;
      best = std::move(p);
      best_ms = std::min(best_ms, ms);  // a tie never raises the bar
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
