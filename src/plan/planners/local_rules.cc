#include "plan/planners/local_rules.h"

#include <algorithm>

namespace dynacomm::plan::detail {

Prefix::Prefix(const ModelProfile& profile, const LinkProfile& link) {
  const int n = profile.num_units();
  down_ms.assign(n + 1, 0);
  up_ms.assign(n + 1, 0);
  forward_ms.assign(n + 1, 0);
  backward_done_ms.assign(n, 0);
  for (int u = 0; u < n; ++u) {
    down_ms[u + 1] =
        down_ms[u] + static_cast<double>(profile.units[u].down_bytes()) * 8e3 / link.down_bps;
    up_ms[u + 1] = up_ms[u] + static_cast<double>(profile.units[u].up_bytes()) * 8e3 / link.up_bps;
    forward_ms[u + 1] = forward_ms[u] + profile.units[u].forward_ms;
  }
  double t = 0;
  for (int u = n - 1; u >= 0; --u) {
    t += profile.units[u].backward_ms;
    backward_done_ms[u] = t;
  }
}

Plan plan_by_local_rules(const ModelProfile& profile, const LinkProfile& link, PullRule pull,
                         PushRule push) {
  const int n = profile.num_units();
  const Prefix pre(profile, link);
  Plan plan;

  double downlink_free = 2 * link.latency_ms, compute_free = 0;
  int first = 0;
  for (int last = 0; last < n; ++last) {
    if (last + 1 < n && pull(pre, link, first, last, downlink_free, compute_free)) continue;
    plan.pull.push_back({first, last});
    downlink_free += link.overhead_down_ms + pre.down(first, last);
    compute_free = std::max(compute_free, downlink_free) + pre.forward(first, last);
    first = last + 1;
  }

  // The push decisions depend only on backward times relative to each other, so the
  // forward pass is taken to end at 0 here.
  double uplink_free = 0;
  int top = n - 1;
  for (int low = n - 1; low >= 0; --low) {
    if (low > 0 && push(pre, link, low, top, uplink_free)) continue;
    plan.push.push_back({low, top});
    uplink_free =
        std::max(uplink_free, pre.backward_done_ms[low]) + link.overhead_up_ms + pre.up(low, top);
    top = low - 1;
  }
  return plan;
}

}  // namespace dynacomm::plan::detail
