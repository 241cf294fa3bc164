#include "cli/bench/common.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "base/stats.h"
#include "cluster/netns.h"

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

namespace {
struct TracedEvent {
  std::int64_t iteration;
  report::Interval interval;
};
// Worker 0's traced events of iterations first..last, with their iteration.
std::vector<TracedEvent> traced_events(const nlohmann::json& trace, std::int64_t first,
                                       std::int64_t last) {
  std::vector<TracedEvent> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("pid", -1) != 0 || !e.contains("args") ||
        !e["args"].is_object())
      continue;
    const std::int64_t it = e["args"].value("iteration", std::int64_t{-1});
    if (it < first || it > last) continue;
    const std::string cat = e.value("cat", "");
    const int lane = cat == "pull" ? 1 : cat == "push" ? 2 : 0;
    const double s = e["ts"].get<double>() / 1000, d = e["dur"].get<double>() / 1000;
    out.push_back({it, {s, s + d, lane, cat, false}});
  }
  return out;
}
}  // namespace

report::GanttRow gantt_row(const nlohmann::json& trace, const std::string& label,
                           std::int64_t iteration, bool full_duplex) {
  report::GanttRow row{label, {}, 0};
  const std::vector<TracedEvent> events =
      traced_events(trace, iteration - (full_duplex ? 1 : 0), iteration + (full_duplex ? 1 : 0));
  // Phase-separated: the iteration starts with its pulls. Full duplex: with its forward
  // pass (its pulls went out during the previous backward), and the next one's forward
  // starts a period later.
  double t0 = 1e300, next = 1e300, own_begin = 1e300, own_end = -1e300;
  for (const TracedEvent& e : events) {
    const report::Interval& i = e.interval;
    if (e.iteration == iteration) {
      own_begin = std::min(own_begin, i.start_ms);
      own_end = std::max(own_end, i.end_ms);
      if (full_duplex ? i.kind == "forward" : i.kind != "push") t0 = std::min(t0, i.start_ms);
    } else if (e.iteration == iteration + 1 && i.kind == "forward") {
      next = std::min(next, i.start_ms);
    }
  }
  if (t0 == 1e300) return row;  // not traced
  for (const TracedEvent& e : events) {
    report::Interval i = e.interval;
    if (e.iteration != iteration) {  // the neighbours, where they overlap this iteration
      i.start_ms = std::max(i.start_ms, own_begin);
      i.end_ms = std::min(i.end_ms, own_end);
      if (i.end_ms <= i.start_ms) continue;
      i.context = true;
    }
    row.intervals.push_back({i.start_ms - t0, i.end_ms - t0, i.lane, i.kind, i.context});
  }
  if (full_duplex && next < 1e300) row.period_ms = next - t0;
  return row;
}

std::string links_description(const std::string& net) {
  if (net != "netns") return "user-space emulation";
  const std::string cc = cluster::NetnsTopology::congestion_control();
  return "kernel tbf (netns, TCP " + (cc.empty() ? std::string("congestion control unknown") : cc) +
         ")";
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string online_cell(double x) { return x > 0 ? fmt("%.1f", x) : std::string("-"); }

}  // namespace dynacomm::cli::bench
