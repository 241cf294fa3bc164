// Small helpers every part of the bench shares: a comma list, statistics of a sample,
// number formatting, one traced iteration as a Gantt row.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/svg_chart.h"

namespace dynacomm::cli::bench {

std::vector<std::string> split(const std::string& s);  // "a,b,,c" -> {a, b, c}

struct Stats {
  double median = 0, min = 0, max = 0;
  std::vector<double> values;
};
Stats stats_of(std::vector<double> v);

// The links of a bench's header: "kernel tbf (netns, TCP cubic)" or "user-space emulation".
std::string links_description(const std::string& net);

std::string fmt(const char* f, double v);  // printf of one number
std::string online_cell(double x);         // "%.1f", or "-" when x <= 0

// The intervals of one traced iteration of worker 0, from the merged trace; for a
// full-duplex plan with the neighbouring iterations' overlapping work and the period
// (report::GanttRow). Empty when the iteration was not traced.
report::GanttRow gantt_row(const nlohmann::json& trace, const std::string& label,
                           std::int64_t iteration, bool full_duplex);

}  // namespace dynacomm::cli::bench
