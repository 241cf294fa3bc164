// Charts as standalone SVG files, readable by a person: title, axis labels with units,
// ticks, legend. No plotting dependency.
//
//   BarChart c{"resnet18, 100 Mbit/s", "iteration time (ms)", {{"sequential", 9925, 9800,
//              10100}, {"dynacomm", 7438, 7300, 7600}}};
//   std::string svg = render(c);           // bars = medians, whiskers = min..max
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace dynacomm::report {

struct Bar {
  std::string label;
  double value, low, high;  // whisker from low to high
  std::string note;         // printed above the bar (e.g. "1.31x")
};
struct BarChart {
  std::string title, y_label;
  std::vector<Bar> bars;
};

struct Series {
  std::string name;
  std::vector<double> x, y;
};
struct LineChart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  bool log_x = false;
  // Continuous x (a time axis): round ticks instead of one per distinct x, no markers,
  // and optionally a fixed range (NaN: from the data), so stacked charts line up.
  bool continuous_x = false;
  double x_min = std::nan(""), x_max = std::nan("");
};

// One row per strategy, three lanes each (compute, downlink, uplink), time from 0 (the
// iteration's start). A full-duplex row shows the steady state: the neighbouring
// iterations' work that overlaps this one, drawn faded (`context`), and the period (the next
// iteration's start) as a marker, so a span longer than the period reads as overlap.
struct Interval {
  double start_ms, end_ms;
  int lane;          // 0 compute, 1 downlink, 2 uplink
  std::string kind;  // "forward", "backward", "pull", "push": sets the colour
  bool context = false;  // the previous or next iteration's, not this one's
};
struct GanttRow {
  std::string label;
  std::vector<Interval> intervals;
  double period_ms = 0;  // > 0: where the next iteration starts, marked
};
struct GanttChart {
  std::string title;
  std::vector<GanttRow> rows;
};

std::string render(const BarChart& chart);
std::string render(const LineChart& chart);
std::string render(const GanttChart& chart);
// Charts one above the other in one SVG (e.g. iteration times over a link trace).
std::string stack(const std::vector<std::string>& svgs);

// "Nice" axis ticks covering [lo, hi]: about `count` round numbers.
std::vector<double> nice_ticks(double lo, double hi, int count = 5);

}  // namespace dynacomm::report
