#include "cli/bench/common.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "base/stats.h"

namespace dynacomm::cli::bench {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) out.push_back(x);
  return out;
}

Stats stats_of(std::vector<double> v) {
  Stats s;
  s.values = v;
  if (v.empty()) return s;
  s.median = median(v);
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

// The intervals of one traced iteration of worker 0, from the merged trace.
report::GanttRow gantt_row(const nlohmann::json& trace, const std::string& label,
                           std::int64_t iteration) {
  report::GanttRow row{label, {}};
  double t0 = 1e300;
  std::vector<report::Interval> raw;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("pid", -1) != 0 || !e.contains("args") ||
        !e["args"].is_object() || e["args"].value("iteration", std::int64_t{-1}) != iteration)
      continue;
    const std::string cat = e.value("cat", "");
    const int lane = cat == "pull" ? 1 : cat == "push" ? 2 : 0;
    const double s = e["ts"].get<double>() / 1000, d = e["dur"].get<double>() / 1000;
    raw.push_back({s, s + d, lane, cat});
    if (cat != "push") t0 = std::min(t0, s);  // the iteration starts with its pulls
  }
  for (auto& i : raw) row.intervals.push_back({i.start_ms - t0, i.end_ms - t0, i.lane, i.kind});
  return row;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string online_cell(double x) { return x > 0 ? fmt("%.1f", x) : std::string("-"); }

}  // namespace dynacomm::cli::bench
