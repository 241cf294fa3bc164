#include "plan/replan/ring_replan.h"

#include <algorithm>

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
