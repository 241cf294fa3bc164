// A rotation's measured iterations predicted again after the run, each from the online
// estimates of the iterations before it (what a re-planning task would have seen then):
// a prediction that follows the machine's drift over a long run, which the warm-up's
// cannot. Reads what rank 0 logged (rotation.json, worker/rotation_log.h), out of the
// timed work.
//
//   const auto p = repredict(log, plans, job.worker_options());
//   write_predictions(folder, p);                             // predictions.csv
#pragma once

#include <cstdint>
#include <vector>

#include "plan/model/plan.h"
#include "report/run_folder.h"
#include "worker/rotation_log.h"
#include "worker/worker.h"

namespace dynacomm::cli::bench {

struct Prediction {
  std::int64_t iteration = 0;
  double predicted_ms = 0, ideal_ms = 0;
  // Full duplex, several workers: the period with the spread of the last 4 iterations'
  // unit times as measured (plan::predict_duplex_workers_ms; 0: not computed).
  double workers_ms = 0;
};

// One per iteration past the warm-up with a plan (plans[k] is plan id k + 1). `o`: the
// job's estimator and planner options (its compute spread is the log's).
std::vector<Prediction> repredict(const worker::RotationLog& log,
                                  const std::vector<plan::Plan>& plans,
                                  const worker::WorkerOptions& o);

void write_predictions(const report::RunFolder& folder, const std::vector<Prediction>& p);

}  // namespace dynacomm::cli::bench
