// metrics.csv: one row per iteration of a cluster job, written by rank 0; predictions.csv:
// a bench rotation's iterations predicted again after the run (cli/bench/repredict.h). The
// one definition of their columns (names and meaning), used by the writers, the bench's
// reader and bench/fd_replay.py (which reads the same names).
//
//   write_metrics_csv(folder, result);                       // the run's metrics.csv
//   MetricsTable m = read_metrics_csv("runs/x/metrics.csv");
//   const std::vector<double>& ms = m.at(metrics::kIterationMs);
#pragma once

#include <map>
#include <string>
#include <vector>

#include "report/run_folder.h"
#include "worker/worker.h"

namespace dynacomm::worker {

namespace metrics {
inline constexpr const char* kIteration = "iteration";
inline constexpr const char* kEpoch = "epoch";
inline constexpr const char* kStartS = "start_s";
inline constexpr const char* kIterationMs = "iteration_ms";
inline constexpr const char* kLoss = "loss";
inline constexpr const char* kBytesUp = "bytes_up";
inline constexpr const char* kBytesDown = "bytes_down";
inline constexpr const char* kPlanId = "plan_id";
inline constexpr const char* kPullSegments = "pull_segments";
inline constexpr const char* kPushSegments = "push_segments";
inline constexpr const char* kTestAccuracy = "test_accuracy";
inline constexpr const char* kEvalMs = "eval_ms";
inline constexpr const char* kPlanChange = "plan_change";
inline constexpr const char* kPredictedGainMs = "predicted_gain_ms";
inline constexpr const char* kPredictedMs = "predicted_ms";
inline constexpr const char* kIdealMs = "ideal_ms";
inline constexpr const char* kPredictedSlowestMs = "predicted_slowest_ms";
inline constexpr const char* kPredictedWorkersMs = "predicted_workers_ms";
inline constexpr const char* kComputeMs = "compute_ms";
inline constexpr const char* kComputeCpuMs = "compute_cpu_ms";
inline constexpr const char* kStretchDown = "stretch_down";
inline constexpr const char* kStretchUp = "stretch_up";
}  // namespace metrics

struct MetricsColumn {
  const char* name;
  const char* meaning;  // units included; an empty cell where it says "empty"
};
// Every column, in file order.
const std::vector<MetricsColumn>& metrics_columns();
const std::vector<MetricsColumn>& prediction_columns();  // predictions.csv

// Writes metrics.csv from rank 0's result (atomically, through the run folder).
void write_metrics_csv(const report::RunFolder& folder, const WorkerResult& result);

// metrics.csv as columns by name: numbers (NaN where a cell is empty or text), and text.
struct MetricsTable {
  std::map<std::string, std::vector<double>> numbers;
  std::map<std::string, std::vector<std::string>> text;
  // Throws Error naming the column when the file lacks it.
  const std::vector<double>& at(const std::string& column) const;
};
// Throws Error naming the file when it cannot be read.
MetricsTable read_metrics_csv(const std::string& path);

}  // namespace dynacomm::worker
