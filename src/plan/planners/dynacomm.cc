#include "plan/planners/dynacomm.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "plan/planners/local_rules.h"

namespace dynacomm::plan {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// Plans within this relative distance of the optimum count as optimal (floating-point sums
// taken in different orders differ in the last bits).
bool no_later(double t, double optimum) { return t <= optimum + 1e-10 * std::max(1.0, optimum); }

// End of the forward pass under a pull plan (segments ascending).
double pull_end(const detail::Prefix& pre, const LinkProfile& link,
                const std::vector<Segment>& segments) {
  double downlink = 2 * link.latency_ms, compute = 0;
  for (const Segment& s : segments) {
    downlink += link.overhead_down_ms + pre.down(s.first, s.last);
    compute = std::max(compute, downlink) + pre.forward(s.first, s.last);
  }
  return compute;
}

// End of the last push, the forward pass taken to end at 0 (segments in send order).
double push_end(const detail::Prefix& pre, const LinkProfile& link,
                const std::vector<Segment>& segments) {
  double uplink = 0;
  for (const Segment& s : segments)
    uplink = std::max(uplink, pre.backward_done_ms[s.first]) + link.overhead_up_ms +
             pre.up(s.first, s.last);
  return uplink;
}

// The tie-break among optimal plans: transmit as early as the optimum allows. Splits a
// segment wherever that does not delay the end, trying the split that sends the smallest
// first part first (pull: the lowest units, needed first; push: the highest units, ready
// first), until no split is free. With no per-transmission cost every split is free and
// the result is the layer-wise plan. The DP alone picks the fewest segments among equals,
// which on the measured links (fitted cost about 0) can leave the forward pass waiting for
// most of the model at once, with nothing in the model to say that this is risky.
template <typename EndFn, typename SplitFn>
void split_while_free(std::vector<Segment>& segments, double optimum, EndFn end, SplitFn split) {
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < segments.size() && !changed; ++i) {
      for (int at = 0; at < segments[i].last - segments[i].first && !changed; ++at) {
        std::vector<Segment> trial = segments;
        auto [front, back] = split(segments[i], at);
        trial[i] = front;
        trial.insert(trial.begin() + static_cast<std::ptrdiff_t>(i) + 1, back);
        if (no_later(end(trial), optimum)) {
          segments = std::move(trial);
          changed = true;
        }
      }
    }
  }
}
}  // namespace

DirectionPlan optimal_pull(const ModelProfile& profile, const LinkProfile& link) {
  const int n = profile.num_units();
  const detail::Prefix pre(profile, link);
  const double* X = pre.down_ms.data();     // data time of units 0..k-1 on the downlink
  const double* F = pre.forward_ms.data();  // forward time of units 0..k-1
  const double base = 2 * link.latency_ms;
  const double ad = link.overhead_down_ms;

  // ff_prev[j]: earliest end of forward of units 0..j-1 split into m-1 segments.
  // choice[m*(n+1)+k]: where the m-th segment starts when it ends at unit k-1.
  std::vector<double> ff_prev(n + 1, kInf), ff_cur(n + 1, kInf), g(n + 1, kInf);
  std::vector<int> choice(static_cast<std::size_t>(n + 1) * (n + 1), -1);
  ff_prev[0] = 0;
  double best = kInf;
  int best_m = 0;
  for (int m = 1; m <= n; ++m) {
    // Any plan with m segments ends forward no earlier than the m-th arrival plus the last
    // unit's forward; arrivals grow with m, so no larger m can do better either.
    if (base + m * ad + X[n] + profile.units[n - 1].forward_ms >= best) break;
    // max(ff, A) + F[k] - F[j] == F[k] + max(ff - F[j], A - F[j])
    for (int j = m - 1; j < n; ++j) g[j] = ff_prev[j] - F[j];
    std::fill(ff_cur.begin(), ff_cur.end(), kInf);
    int* row = choice.data() + static_cast<std::size_t>(m) * (n + 1);
    for (int k = m; k <= n; ++k) {
      const double arrival = base + m * ad + X[k];
      double v_best = kInf;
      int j_best = -1;
      for (int j = m - 1; j < k; ++j) {
        double v = std::max(g[j], arrival - F[j]);
        if (v < v_best) {
          v_best = v;
          j_best = j;
        }
      }
      ff_cur[k] = v_best + F[k];
      row[k] = j_best;
    }
    if (ff_cur[n] < best) {
      best = ff_cur[n];
      best_m = m;
    }
    std::swap(ff_prev, ff_cur);
  }

  DirectionPlan out;
  for (int k = n, m = best_m; m > 0; --m) {
    int j = choice[static_cast<std::size_t>(m) * (n + 1) + k];
    out.segments.push_back({j, k - 1});
    k = j;
  }
  std::reverse(out.segments.begin(), out.segments.end());
  // Sent first: the lowest units of a segment, as its own segment.
  split_while_free(
      out.segments, best, [&](const std::vector<Segment>& s) { return pull_end(pre, link, s); },
      [](Segment s, int at) {
        return std::pair<Segment, Segment>{{s.first, s.first + at}, {s.first + at + 1, s.last}};
      });
  out.end_ms = pull_end(pre, link, out.segments);
  return out;
}

DirectionPlan optimal_push(const ModelProfile& profile, const LinkProfile& link) {
  const int n = profile.num_units();
  const detail::Prefix pre(profile, link);
  const double* Y = pre.up_ms.data();
  const double* E = pre.backward_done_ms.data();
  const double au = link.overhead_up_ms;

  // lf[i]: earliest time all units i..n-1 have been pushed, when units i.. are sent as
  // the last segments; next[i]: one past the top unit of the segment starting at i.
  std::vector<double> lf(n + 1, 0);
  std::vector<int> next(n + 1, n);
  for (int i = n - 1; i >= 0; --i) {
    double v_best = kInf;
    for (int j = n; j > i; --j) {  // descending: ties go to the larger segment
      double v = std::max(lf[j], E[i]) + au + (Y[j] - Y[i]);
      if (v < v_best) {
        v_best = v;
        next[i] = j;
      }
    }
    lf[i] = v_best;
  }
  DirectionPlan out;
  for (int i = 0; i < n; i = next[i]) out.segments.push_back({i, next[i] - 1});
  out.segments = reverse_to_send_order(std::move(out.segments));
  // Sent first: the highest units of a segment (ready first), as its own segment.
  split_while_free(
      out.segments, lf[0], [&](const std::vector<Segment>& s) { return push_end(pre, link, s); },
      [](Segment s, int at) {
        return std::pair<Segment, Segment>{{s.last - at, s.last}, {s.first, s.last - at - 1}};
      });
  out.end_ms = push_end(pre, link, out.segments);
  return out;
}

Plan plan_dynacomm(const ModelProfile& profile, const LinkProfile& link, const PlannerOptions&) {
  return Plan{"dynacomm", optimal_pull(profile, link).segments,
              optimal_push(profile, link).segments};
}

}  // namespace dynacomm::plan
