#include "plan/duplex.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace dynacomm::plan {

void DuplexPlan::validate(int num_units) const {
  plan.validate(num_units);
  if (pull_order.empty()) return;
  std::vector<bool> seen(plan.pull.size(), false);
  if (pull_order.size() != plan.pull.size())
    throw InvalidInput("duplex plan: the pull order has " + std::to_string(pull_order.size()) +
                       " entries for " + std::to_string(plan.pull.size()) + " pull segments");
  for (int k : pull_order) {
    if (k < 0 || static_cast<std::size_t>(k) >= plan.pull.size() || seen[static_cast<std::size_t>(k)])
      throw InvalidInput("duplex plan: the pull order is not a permutation of the pull segments "
                         "(entry " + std::to_string(k) + ")");
    seen[static_cast<std::size_t>(k)] = true;
  }
}

namespace {

// The state the next iteration depends on, relative to nothing: compared across iterations
// to find the repeat.
struct State {
  double forward_start, backward_end, down_free, up_free;
};

bool repeats(const std::vector<State>& s, std::size_t t, std::size_t c) {
  if (t < 3 * c) return false;
  const double scale = std::max(1.0, std::abs(s[t].forward_start));
  const double tol = 1e-9 * scale;
  auto field = [&](std::size_t i, int f) {
    const State& x = s[i];
    return f == 0 ? x.forward_start : f == 1 ? x.backward_end : f == 2 ? x.down_free : x.up_free;
  };
  for (int f = 0; f < 4; ++f) {
    const double d1 = field(t, f) - field(t - c, f), d2 = field(t - c, f) - field(t - 2 * c, f),
                 d3 = field(t - 2 * c, f) - field(t - 3 * c, f);
    const double step = s[t].forward_start - s[t - c].forward_start;
    if (std::abs(d1 - d2) > tol || std::abs(d2 - d3) > tol || std::abs(d1 - step) > tol)
      return false;
  }
  return true;
}

}  // namespace

DuplexResult simulate_duplex(const ModelProfile& profile, const LinkProfile& link,
                             const DuplexPlan& dp, const DuplexOptions& o) {
  profile.validate();
  link.validate();
  const int L = static_cast<int>(profile.units.size());
  dp.validate(L);
  if (o.max_iterations < 4 || o.max_cycle < 1 || !(o.aggregation_ms >= 0))
    throw InvalidInput("duplex simulation: max_iterations >= 4, max_cycle >= 1 and "
                       "aggregation_ms >= 0 are required");
  const Plan& p = dp.plan;
  std::vector<int> order = dp.pull_order;
  if (order.empty())
    for (std::size_t k = 0; k < p.pull.size(); ++k) order.push_back(static_cast<int>(k));
  std::vector<int> pull_seg(static_cast<std::size_t>(L));
  std::vector<std::int64_t> pull_bytes(p.pull.size(), 0), push_bytes(p.push.size(), 0);
  for (std::size_t k = 0; k < p.pull.size(); ++k)
    for (int u = p.pull[k].first; u <= p.pull[k].last; ++u) {
      pull_seg[static_cast<std::size_t>(u)] = static_cast<int>(k);
      pull_bytes[k] += profile.units[static_cast<std::size_t>(u)].bytes;
    }
  for (std::size_t k = 0; k < p.push.size(); ++k)
    for (int u = p.push[k].first; u <= p.push[k].last; ++u)
      push_bytes[k] += profile.units[static_cast<std::size_t>(u)].bytes;

  const double lat = link.latency_ms;
  std::vector<double> exists(static_cast<std::size_t>(L), 0.0);  // parameters for t at the PS
  std::vector<double> arrive(p.pull.size()), end_backward(static_cast<std::size_t>(L));
  double request = lat, backward_end = 0, down_free = 0, up_free = 0;
  std::vector<State> states;
  DuplexResult r;
  for (int t = 0; t < o.max_iterations; ++t) {
    for (int k : order) {  // the downlink, in pull order
      const Segment& s = p.pull[static_cast<std::size_t>(k)];
      double ready = request;
      for (int u = s.first; u <= s.last; ++u) ready = std::max(ready, exists[static_cast<std::size_t>(u)]);
      const double start = std::max(ready, down_free);
      down_free = start + link.down_ms(pull_bytes[static_cast<std::size_t>(k)]);
      arrive[static_cast<std::size_t>(k)] = down_free + lat;
    }
    double now = backward_end, forward_start = 0;  // forward, bottom-up
    for (int u = 0; u < L; ++u) {
      now = std::max(now, arrive[static_cast<std::size_t>(pull_seg[static_cast<std::size_t>(u)])]);
      if (u == 0) forward_start = now;
      now += profile.units[static_cast<std::size_t>(u)].forward_ms;
    }
    request = now + lat;  // the next iteration's requests leave as backward starts
    for (int u = L - 1; u >= 0; --u) {  // backward, top-down
      now += profile.units[static_cast<std::size_t>(u)].backward_ms;
      end_backward[static_cast<std::size_t>(u)] = now;
    }
    backward_end = now;
    for (std::size_t k = 0; k < p.push.size(); ++k) {  // the uplink, in send order
      const Segment& s = p.push[k];
      const double start = std::max(end_backward[static_cast<std::size_t>(s.first)], up_free);
      up_free = start + link.up_ms(push_bytes[k]);
      for (int u = s.first; u <= s.last; ++u)
        exists[static_cast<std::size_t>(u)] = up_free + lat + o.aggregation_ms;
    }
    states.push_back({forward_start, backward_end, down_free, up_free});
    r.forward_start_ms.push_back(forward_start);
    for (int c = 1; c <= o.max_cycle; ++c)
      if (repeats(states, static_cast<std::size_t>(t), static_cast<std::size_t>(c))) {
        r.converged = true;
        r.cycle = c;
        r.transient = t - 3 * c;
        r.period_ms = (states[static_cast<std::size_t>(t)].forward_start -
                       states[static_cast<std::size_t>(t - c)].forward_start) / c;
        return r;
      }
  }
  const std::size_t n = states.size(), h = n / 2;
  r.period_ms = (states[n - 1].forward_start - states[h].forward_start) / static_cast<double>(n - 1 - h);
  return r;
}

}  // namespace dynacomm::plan
