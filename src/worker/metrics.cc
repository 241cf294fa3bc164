#include "worker/metrics.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "base/error.h"

namespace dynacomm::worker {

const std::vector<MetricsColumn>& metrics_columns() {
  using namespace metrics;
  static const std::vector<MetricsColumn> columns = {
      {kIteration, "iteration, from 0 (the warm-up's first)"},
      {kEpoch, "epoch, from 1"},
      {kStartS, "when the iteration started, s from the job's start"},
      {kIterationMs,
       "wall time of the iteration, ms (the last: until its update is in; the last of "
       "the warm-up: without the planning after it)"},
      {kLoss, "training loss of this worker's mini-batch"},
      {kBytesUp, "bytes pushed in the iteration"},
      {kBytesDown, "bytes pulled in the iteration"},
      {kPlanId, "plan in use (0: warm-up; summary.json plans[].id)"},
      {kPullSegments, "pull transmissions of the plan"},
      {kPushSegments, "push transmissions of the plan"},
      {kTestAccuracy,
       "rank 0's test accuracy of the weights this iteration pulled, evaluated after it "
       "(each epoch's end, every --eval-every iterations; the last row: the final weights), "
       "else -1"},
      {kEvalMs, "that evaluation's time inside iteration_ms, ms (empty: none)"},
      {kPlanChange, "why a new plan took effect at this iteration, else empty"},
      {kPredictedGainMs, "that change's predicted gain, ms, else empty"},
      {kPredictedSlowestMs, "the largest prediction any worker sent for it, ms"},
      {kComputeMs, "this worker's compute without gate waits, ms"},
      {kComputeCpuMs, "the training thread's CPU time in it, ms (empty: not known)"},
      {kStretchDown, "compute stretch under a busy downlink held at its start (empty: none)"},
      {kStretchUp, "compute stretch under a busy uplink held at its start (empty: none)"},
  };
  return columns;
}

const std::vector<MetricsColumn>& prediction_columns() {
  using namespace metrics;
  static const std::vector<MetricsColumn> columns = {
      {kIteration, "iteration, from 0 (a measured one after the warm-up)"},
      {kPredictedMs, "its plan's time predicted from the online estimates before it, ms"},
      {kIdealMs, "the ideal of its plan's model for those estimates, ms"},
      {kPredictedWorkersMs,
       "full duplex, several workers: the period with the spread of worker 0's last 4 "
       "iterations, ms (empty: not computed)"},
  };
  return columns;
}

namespace {

std::string cell(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", x);
  return b;
}
std::string positive(double x) { return x > 0 ? cell(x) : ""; }

// A CSV line's cells; a quoted cell may hold commas and doubled quotes.
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace

void write_metrics_csv(const report::RunFolder& folder, const WorkerResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (const IterationRecord& it : r.iterations) {
    rows.push_back(
        {std::to_string(it.iteration), std::to_string(it.epoch), cell(it.start_s), cell(it.ms),
         cell(it.loss), std::to_string(it.bytes_up), std::to_string(it.bytes_down),
         std::to_string(it.plan_id), std::to_string(it.pull_segments),
         std::to_string(it.push_segments), cell(it.test_accuracy), positive(it.eval_ms),
         it.plan_change, it.plan_change.empty() ? "" : cell(it.predicted_gain_ms),
         positive(it.predicted_slowest_ms), cell(it.compute_ms), positive(it.compute_cpu_ms),
         positive(it.stretch_down), positive(it.stretch_up)});
  }
  std::vector<std::string> names;
  for (const MetricsColumn& c : metrics_columns()) names.push_back(c.name);
  folder.write_csv("metrics.csv", names, rows);
}

const std::vector<double>& MetricsTable::at(const std::string& column) const {
  auto it = numbers.find(column);
  if (it == numbers.end()) throw Error("metrics.csv has no column " + column);
  return it->second;
}

MetricsTable read_metrics_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + " is missing");
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> names = csv_cells(line);
  MetricsTable m;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = csv_cells(line);
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string c = i < cells.size() ? cells[i] : "";
      char* end = nullptr;
      const double v = std::strtod(c.c_str(), &end);
      m.numbers[names[i]].push_back(!c.empty() && end && *end == 0 ? v : std::nan(""));
      m.text[names[i]].push_back(c);
    }
  }
  return m;
}

}  // namespace dynacomm::worker
