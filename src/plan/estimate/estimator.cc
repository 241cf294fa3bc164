#include "plan/estimate/estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "base/error.h"
#include "base/stats.h"

namespace dynacomm::plan {

namespace {

double recency_weight(std::int64_t newest, std::int64_t iteration, double half_life) {
  return std::exp2(-static_cast<double>(newest - iteration) / half_life);
}

}  // namespace

void EstimatorOptions::validate() const {
  if (window < 1) throw InvalidInput("estimator: the window must be at least 1 iteration");
  if (!(half_life > 0) || !std::isfinite(half_life))
    throw InvalidInput("estimator: the half-life must be a positive number of iterations");
  if (max_transfers < 3) throw InvalidInput("estimator: keep at least 3 transfers");
}

UnitTimeEstimator::UnitTimeEstimator(std::size_t units, EstimatorOptions options)
    : units_(units), options_(options) {
  options_.validate();
}

void UnitTimeEstimator::add(std::int64_t iteration, const std::vector<double>& forward_ms,
                            const std::vector<double>& backward_ms) {
  if (forward_ms.size() != units_ || backward_ms.size() != units_)
    throw InvalidInput("compute estimator: expected " + std::to_string(units_) +
                       " unit times, got " + std::to_string(forward_ms.size()) + " forward and " +
                       std::to_string(backward_ms.size()) + " backward");
  for (std::size_t u = 0; u < units_; ++u)
    if (!std::isfinite(forward_ms[u]) || !std::isfinite(backward_ms[u]) || forward_ms[u] < 0 ||
        backward_ms[u] < 0)
      throw InvalidInput("compute estimator: unit " + std::to_string(u) +
                         " has a negative or non-finite time");
  iterations_.push_back({iteration, forward_ms, backward_ms});
  while (!iterations_.empty() && iterations_.front().iteration <= iteration - options_.window)
    iterations_.pop_front();
}

void UnitTimeEstimator::pace(std::int64_t iteration, double factor) {
  if (!(factor >= 1) || !std::isfinite(factor))
    throw InvalidInput("compute estimator: the pace of iteration " + std::to_string(iteration) +
                       " must be a finite factor >= 1, got " + std::to_string(factor));
  for (Iteration& it : iterations_)
    if (it.iteration == iteration) it.pace = factor;
}

void UnitTimeEstimator::apply(ModelProfile& profile) const {
  if (profile.units.size() != units_)
    throw InvalidInput("compute estimator: the profile has " +
                       std::to_string(profile.units.size()) + " units, the estimator " +
                       std::to_string(units_));
  if (iterations_.empty()) return;
  const std::int64_t newest = iterations_.back().iteration;
  std::vector<double> weights;
  for (const Iteration& it : iterations_)
    weights.push_back(recency_weight(newest, it.iteration, options_.half_life));
  // Each pass's total: the weighted median of the iterations' totals. The sum of the
  // units' medians falls short of it when a disturbance (a preempted core) hits a
  // different unit in each iteration: no unit's median sees it, every iteration's total
  // does. The units' medians give the shape, scaled to that total. An iteration paced by a
  // slower worker counts at that worker's total.
  auto median_total = [&](std::vector<double> Iteration::*pass) {
    std::vector<std::pair<double, double>> totals;
    for (std::size_t i = 0; i < iterations_.size(); ++i) {
      const std::vector<double>& v = iterations_[i].*pass;
      totals.emplace_back(iterations_[i].pace * std::accumulate(v.begin(), v.end(), 0.0),
                          weights[i]);
    }
    return weighted_median(std::move(totals));
  };
  const double forward_total = median_total(&Iteration::forward);
  const double backward_total = median_total(&Iteration::backward);
  double forward_sum = 0, backward_sum = 0;
  for (std::size_t u = 0; u < units_; ++u) {
    std::vector<std::pair<double, double>> f, b;
    for (std::size_t i = 0; i < iterations_.size(); ++i) {
      f.emplace_back(iterations_[i].forward[u], weights[i]);
      b.emplace_back(iterations_[i].backward[u], weights[i]);
    }
    profile.units[u].forward_ms = weighted_median(std::move(f));
    profile.units[u].backward_ms = weighted_median(std::move(b));
    forward_sum += profile.units[u].forward_ms;
    backward_sum += profile.units[u].backward_ms;
  }
  for (std::size_t u = 0; u < units_; ++u) {
    if (forward_sum > 0) profile.units[u].forward_ms *= forward_total / forward_sum;
    if (backward_sum > 0) profile.units[u].backward_ms *= backward_total / backward_sum;
  }
}

double UnitTimeEstimator::total_ms() const {
  if (iterations_.empty()) return 0;
  ModelProfile p;
  p.units.resize(units_);
  apply(p);
  double total = 0;
  for (const auto& u : p.units) total += u.forward_ms + u.backward_ms;
  return total;
}

LinkEstimator::LinkEstimator(EstimatorOptions options) : options_(options) { options_.validate(); }

void LinkEstimator::add(std::int64_t iteration, double bytes, double ms) {
  if (!(bytes >= 0) || !std::isfinite(bytes) || !std::isfinite(ms))
    throw InvalidInput("link estimator: a transfer has negative bytes or a non-finite time");
  samples_.push_back({iteration, bytes, std::max(0.0, ms)});
  while (!samples_.empty() && (samples_.front().iteration <= iteration - options_.window ||
                               samples_.size() > options_.max_transfers))
    samples_.pop_front();
}

std::vector<TransferSample> LinkEstimator::weighted() const {
  std::vector<TransferSample> out;
  if (samples_.empty()) return out;
  std::int64_t newest = samples_.front().iteration;
  for (const Sample& s : samples_) newest = std::max(newest, s.iteration);
  for (const Sample& s : samples_)
    out.push_back({s.bytes, s.ms, recency_weight(newest, s.iteration, options_.half_life)});
  return out;
}

LinkFit LinkEstimator::estimate(double fallback_bps) {
  const std::vector<TransferSample> s = weighted();
  LinkFit f = fit_link(s, 0);
  if (f.bandwidth_fitted && tells_bandwidth(s, f, held_.bandwidth_bps)) {
    held_ = {f.overhead_ms, f.bandwidth_bps};
    return f;
  }
  if (held_.overhead_ms < 0) return fit_link(s, fallback_bps);  // nothing to hold yet
  // One figure held, the other fitted: the bytes' time or the overhead, whichever
  // dominates these transfers at the held figures.
  std::vector<double> bytes;
  for (const TransferSample& t : s) bytes.push_back(t.bytes);
  const bool bytes_dominate =
      bytes.empty() || 8000.0 * median(bytes) / held_.bandwidth_bps >= held_.overhead_ms;
  // A bandwidth fitted so is what these transfers tell: it is held from now on (a link that
  // slowed under dense pushes keeps its new bandwidth when small pushes follow). An overhead
  // fitted so is not: it absorbs whatever the held bandwidth misses, and held, it would
  // make the overhead dominate every window after.
  f.bandwidth_fitted = true;
  if (!bytes_dominate) {
    f.bandwidth_bps = held_.bandwidth_bps;
    f.overhead_ms = fit_overhead(s, held_.bandwidth_bps);
    return f;
  }
  f.overhead_ms = held_.overhead_ms;
  f.bandwidth_bps = fit_bandwidth(s, held_.overhead_ms);
  f.bandwidth_fitted = f.bandwidth_bps > 0;
  if (!f.bandwidth_fitted)
    f.bandwidth_bps = fallback_bps;
  else
    held_.bandwidth_bps = f.bandwidth_bps;
  return f;
}

}  // namespace dynacomm::plan
