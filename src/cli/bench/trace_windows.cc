#include "cli/bench/trace_windows.h"

#include "base/stats.h"
#include "cli/bench/common.h"

namespace dynacomm::cli::bench {

// The link's changes, each as [change, next change) in s.
std::vector<std::pair<double, double>> change_windows(
    const std::vector<plan::LinkTracePoint>& rows) {
  std::vector<std::pair<double, double>> windows;  // [change, next change)
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].down_bps != rows[i - 1].down_bps || rows[i].up_bps != rows[i - 1].up_bps ||
        rows[i].latency_ms != rows[i - 1].latency_ms)
      windows.push_back({rows[i].time_s, 1e300});
  for (std::size_t i = 0; i + 1 < windows.size(); ++i) windows[i].second = windows[i + 1].first;
  return windows;
}

// A run's iteration times that started in window w, without those with an evaluation.
std::vector<double> in_window(const PolicyRun& r, std::pair<double, double> w) {
  std::vector<double> v;
  for (std::size_t i = 0; i < r.ms.size(); ++i)
    if (r.start_s[i] >= w.first && r.start_s[i] < w.second && !r.evaluated[i]) v.push_back(r.ms[i]);
  return v;
}

// How a run followed the link's change in window w, against the oracle: a JSON entry and
// its two table cells.
nlohmann::json after_change(const PolicyRun& r, const PolicyRun* oracle,
                            std::pair<double, double> w, std::string& md) {
  const std::vector<double> mine = in_window(r, w);
  std::vector<double> ref = oracle ? in_window(*oracle, w) : std::vector<double>{};
  // The oracle's settled time: its iterations in the window after the first two.
  if (ref.size() > 2) ref.erase(ref.begin(), ref.begin() + 2);
  const double reference = ref.empty() ? 0 : median(ref);
  int settled = -1;  // 1-based: the iteration from which 3 in a row have a median within 10%
  for (std::size_t k = 0; reference > 0 && k + 3 <= mine.size() && settled < 0; ++k)
    if (median(std::vector<double>(mine.begin() + static_cast<long>(k),
                                   mine.begin() + static_cast<long>(k) + 3)) <= 1.1 * reference)
      settled = static_cast<int>(k) + 1;
  const std::vector<double> later(mine.size() > 5 ? mine.begin() + 5 : mine.end(), mine.end());
  const double later_median = later.empty() ? 0 : median(later);
  const nlohmann::json entry = {
      {"change_s", w.first},
      {"iterations", mine.size()},
      {"iterations_to_within_10pct_of_oracle", settled > 0 ? nlohmann::json(settled) : nullptr},
      {"median_ms_from_6th",
       later.empty() ? nlohmann::json(nullptr) : nlohmann::json(later_median)},
      {"oracle_ms", reference > 0 ? nlohmann::json(reference) : nullptr}};
  md += " " +
        (reference <= 0 ? std::string("-")
         : settled > 0  ? std::to_string(settled)
                        : "not within " + std::to_string(mine.size())) +
        " | " + (later.empty() ? std::string("-") : fmt("%.1f", later_median)) +
        (reference > 0 && !later.empty() ? fmt(" (%.2fx)", later_median / reference) : "") + " |";
  return entry;
}

}  // namespace dynacomm::cli::bench
