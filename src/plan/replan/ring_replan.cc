#include "plan/replan/ring_replan.h"

#include <algorithm>
#include <cmath>

#include "plan/planners/ring_buckets.h"

namespace dynacomm::plan {

RingCost refit_ring_cost(const RingCost& warm, const std::vector<TransferSample>& recent) {
  const LinkFit fit = fit_link(recent);
  if (fit.bandwidth_fitted && fit.bandwidth_bps > 0) return {fit.overhead_ms, fit.bandwidth_bps};
  std::vector<double> bps;
  for (const TransferSample& s : recent)
    if (s.bytes > 0 && s.ms > warm.fixed_ms) bps.push_back(s.bytes * 8e3 / (s.ms - warm.fixed_ms));
  if (bps.empty()) return warm;
  const auto mid = bps.begin() + static_cast<std::ptrdiff_t>(bps.size() / 2);
  std::nth_element(bps.begin(), mid, bps.end());
  double median = *mid;
  if (bps.size() % 2 == 0) median = (median + *std::max_element(bps.begin(), mid)) / 2;
  return {warm.fixed_ms, median};
}

std::optional<std::vector<Segment>> ring_probe(const ModelProfile& profile,
                                               const std::vector<TransferSample>& recent) {
  const int units = profile.num_units();
  if (units < 2 || fit_link(recent).bandwidth_fitted) return std::nullopt;
  double total = 0;
  for (const UnitProfile& u : profile.units) total += static_cast<double>(u.bytes);
  int split = units - 1;  // the first bucket is split..units-1
  double best = -1, tail = 0;
  for (int k = units - 1; k >= 1; --k) {
    tail += static_cast<double>(profile.units[static_cast<std::size_t>(k)].bytes);
    const double off = std::abs(tail - total / 3);
    if (best < 0 || off < best) {
      best = off;
      split = k;
    }
  }
  return std::vector<Segment>{{split, units - 1}, {0, split - 1}};
}

RingReplan replan_ring(const ModelProfile& profile, const RingCost& cost,
                       const std::vector<Segment>& current, double threshold) {
  RingReplan r;
  r.buckets = optimal_ring_buckets(profile, cost);
  r.current_ms = simulate_ring(profile, cost, current);
  r.best_ms = simulate_ring(profile, cost, r.buckets);
  r.change = r.buckets != current && r.best_ms < r.current_ms * (1 - threshold);
  return r;
}

}  // namespace dynacomm::plan
