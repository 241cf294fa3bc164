// How a re-planning policy's run followed the link trace: its iterations, the trace's
// change windows, and per window how soon it came within 10% of the oracle.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "plan/replan/trace_file.h"

namespace dynacomm::cli::bench {

// One policy's run on the trace: every iteration after warm-up but the job's last (whose
// time includes fetching the final model for evaluation).
struct PolicyRun {
  std::string name;
  std::vector<double> start_s, ms;
  std::vector<std::int64_t> iteration;
  std::vector<bool> evaluated;  // rank 0 evaluated the model in it: not in the statistics
  nlohmann::json plan_changes = nlohmann::json::array();
  double ideal_ms = 0;
};

// The link's changes, each as [change, next change) in s.
std::vector<std::pair<double, double>> change_windows(
    const std::vector<plan::LinkTracePoint>& rows);
// A run's iteration times that started in window w, without those with an evaluation.
std::vector<double> in_window(const PolicyRun& r, std::pair<double, double> w);
// How a run followed the link's change in window w, against the oracle: a JSON entry, and
// its two table cells appended to md.
nlohmann::json after_change(const PolicyRun& r, const PolicyRun* oracle,
                            std::pair<double, double> w, std::string& md);

}  // namespace dynacomm::cli::bench
