// A rotation's (dynacomm bench's) measured iterations predicted again after the run, each
// from the online estimates of the iterations before it (what a re-planning task would
// have seen then): a prediction that follows the machine's drift over a long run, which
// the warm-up's cannot. Out of the timed work; fills IterationRecord::predicted_ms,
// ideal_ms and (rank 0, full-duplex plans, several workers) predicted_workers_ms.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "plan/estimate/estimator.h"
#include "worker/calibration.h"
#include "worker/comm.h"
#include "worker/stretch_tracker.h"
#include "worker/worker.h"

namespace dynacomm::worker {

// Everything a rotation's iterations measured, kept for the re-prediction.
struct RotationLog {
  std::vector<UnitSample> compute;  // unit times as the estimators got them
  std::vector<UnitSample> wall;     // the same iterations' unit times as measured
  std::vector<Comm::LinkEvent> transfers;
  std::vector<std::pair<std::int64_t, plan::TransferSample>> updates;  // the PS's, by iteration
};

void repredict_rotation(const WorkerOptions& o, const RotationLog& log,
                        const plan::ModelProfile& profile, const plan::LinkProfile& given,
                        const StretchTracker& tracker, const plan::PlannerOptions& planner,
                        double latency_ms, WorkerResult& result);

}  // namespace dynacomm::worker
