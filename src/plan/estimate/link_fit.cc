#include "plan/estimate/link_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "base/error.h"
#include "base/stats.h"

namespace dynacomm::plan {

namespace {

void check(const std::vector<TransferSample>& samples) {
  for (const auto& s : samples)
    if (!(s.bytes >= 0) || !std::isfinite(s.ms) || !(s.weight > 0) || !std::isfinite(s.weight))
      throw InvalidInput(
          "link fit: a transfer sample has negative bytes, a non-finite time or "
          "a non-positive weight");
}

// How far the line of `bps` and `overhead_ms` is off the transfers: each one's error
// relative to the larger of its time and the line's (so in [0, 1]: a transfer delayed 50x
// counts no more than one the line gets wholly wrong), weighted by its bytes (the large
// transfers take the link's time, and a token bucket's burst serves the small ones faster
// than its rate).
double line_error(const std::vector<TransferSample>& s, double bps, double overhead_ms) {
  double sum = 0, weight = 0;
  for (const TransferSample& t : s) {
    const double predicted = overhead_ms + 8000.0 * t.bytes / bps;
    const double larger = std::max({t.ms, predicted, 1e-9});
    sum += (t.bytes + 1) * std::abs(t.ms - predicted) / larger;
    weight += t.bytes + 1;
  }
  return weight > 0 ? sum / weight : 0;
}

}  // namespace

bool tells_bandwidth(const std::vector<TransferSample>& s, const LinkFit& f, double other_bps) {
  if (s.empty() || !(f.bandwidth_bps > 0)) return false;
  double smallest = std::numeric_limits<double>::infinity(), largest = 0;
  std::vector<double> residuals;
  for (const TransferSample& t : s) {
    smallest = std::min(smallest, t.bytes);
    largest = std::max(largest, t.bytes);
    residuals.push_back(t.ms - f.overhead_ms - 8000.0 * t.bytes / f.bandwidth_bps);
  }
  const double centre = median(residuals);
  for (double& r : residuals) r = std::abs(r - centre);
  const double spread_ms = 8000.0 * (largest - smallest) / std::max(f.bandwidth_bps, other_bps);
  return spread_ms > 0 && spread_ms >= 4 * median(residuals);
}

LinkFit planned_link(const LinkFit& fit, const std::vector<TransferSample>& samples,
                     double given_bps) {
  if (fit.bandwidth_fitted && fit.bandwidth_bps > 0) {
    if (fit.bandwidth_bps > 0.25 * given_bps && fit.bandwidth_bps < 1.5 * given_bps) return fit;
    if (!(given_bps > 0)) return fit;
    const double given_overhead = fit_overhead(samples, given_bps);
    if (tells_bandwidth(samples, fit) &&
        2 * line_error(samples, fit.bandwidth_bps, fit.overhead_ms) <=
            line_error(samples, given_bps, given_overhead))
      return fit;
  }
  LinkFit p = fit;
  p.bandwidth_bps = given_bps;
  p.bandwidth_fitted = false;
  p.overhead_ms = fit_overhead(samples, given_bps);
  return p;
}

double fit_overhead(const std::vector<TransferSample>& samples, double bps) {
  check(samples);
  if (samples.empty() || !(bps > 0)) return 0;
  std::vector<std::pair<double, double>> residuals;
  for (const auto& s : samples) residuals.emplace_back(s.ms - 8000.0 * s.bytes / bps, s.weight);
  return std::max(0.0, weighted_median(std::move(residuals)));
}

double fit_bandwidth(const std::vector<TransferSample>& samples, double overhead_ms) {
  check(samples);
  std::vector<std::pair<double, double>> ms_per_byte;
  for (const auto& s : samples)
    if (s.bytes > 0 && s.ms > overhead_ms)
      ms_per_byte.emplace_back((s.ms - overhead_ms) / s.bytes, s.weight * s.bytes);
  if (ms_per_byte.empty()) return 0;
  const double m = weighted_median(std::move(ms_per_byte));
  return m > 0 ? 8000.0 / m : 0;
}

LinkFit fit_link(const std::vector<TransferSample>& samples, double fallback_bps,
                 double min_spread) {
  check(samples);
  LinkFit f;
  f.samples = samples.size();
  double largest = 0;
  for (const auto& s : samples) largest = std::max(largest, s.bytes);
  std::vector<std::pair<double, double>> slopes;  // ms per byte, weight
  for (std::size_t i = 0; i < samples.size(); ++i)
    for (std::size_t j = i + 1; j < samples.size(); ++j) {
      const double dx = samples[j].bytes - samples[i].bytes;
      if (std::abs(dx) < min_spread * largest || dx == 0) continue;
      slopes.emplace_back((samples[j].ms - samples[i].ms) / dx,
                          samples[i].weight * samples[j].weight);
    }
  if (slopes.size() >= 3) {
    const double ms_per_byte = weighted_median(std::move(slopes));
    if (ms_per_byte > 0) {
      f.bandwidth_bps = 8000.0 / ms_per_byte;
      f.bandwidth_fitted = true;
    }
  }
  if (!f.bandwidth_fitted) f.bandwidth_bps = fallback_bps;
  f.overhead_ms = fit_overhead(samples, f.bandwidth_bps);
  return f;
}

AggregationFit fit_aggregation(const std::vector<TransferSample>& samples) {
  AggregationFit a;
  a.samples = samples.size();
  const LinkFit line = fit_link(samples);  // no fallback: no slope, no "bandwidth"
  if (line.bandwidth_fitted) {
    a.ms = line.overhead_ms;
    a.ms_per_mb = 8e9 / line.bandwidth_bps;
  } else {
    a.ms = fit_overhead(samples, std::numeric_limits<double>::infinity());  // the median
  }
  return a;
}

}  // namespace dynacomm::plan
