#include "plan/planners/dynacomm.h"

#include <algorithm>
#include <limits>

#include "plan/planners/local_rules.h"

namespace dynacomm::plan {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

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
  out.end_ms = best;
  for (int k = n, m = best_m; m > 0; --m) {
    int j = choice[static_cast<std::size_t>(m) * (n + 1) + k];
    out.segments.push_back({j, k - 1});
    k = j;
  }
  std::reverse(out.segments.begin(), out.segments.end());
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
  out.end_ms = lf[0];
  for (int i = 0; i < n; i = next[i]) out.segments.push_back({i, next[i] - 1});
  out.segments = reverse_to_send_order(std::move(out.segments));
  return out;
}

Plan plan_dynacomm(const ModelProfile& profile, const LinkProfile& link, const PlannerOptions&) {
  return Plan{"dynacomm", optimal_pull(profile, link).segments,
              optimal_push(profile, link).segments};
}

}  // namespace dynacomm::plan
