// Small statistics helpers for measurements.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace dynacomm {

// Median of the values (the mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Weighted median of (value, weight) pairs: the smallest value whose cumulative weight
// reaches half the total; 0 for none.
inline double weighted_median(std::vector<std::pair<double, double>> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double total = 0;
  for (const auto& p : v) total += p.second;
  double seen = 0;
  for (const auto& p : v) {
    seen += p.second;
    if (seen >= total / 2) return p.first;
  }
  return v.back().first;
}

}  // namespace dynacomm
