// The warm-up: what its iterations measured (every unit's compute, every transfer, the
// PS's updates) and, at its end, the fits the first plans are made from (plan/estimate/link_fit.h,
// plan/estimate/compute_stretch.h): the link, compute at idle-link speed, its stretch under busy
// links, the PS's aggregation, and the spread of this worker's compute. Training thread.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "plan/estimate/compute_stretch.h"
#include "plan/estimate/estimator.h"
#include "plan/estimate/link_fit.h"
#include "plan/model/profile.h"
#include "plan/planners/planner.h"
#include "worker/estimates.h"
#include "worker/rotation_log.h"
#include "worker/stretch_tracker.h"
#include "worker/unit_times.h"
#include "worker/worker.h"

namespace dynacomm::worker {

// The fits at the warm-up's end.
struct Calibrated {
  plan::LinkProfile link;        // what the first plans are made for
  plan::PlannerOptions planner;  // with the workers and this worker's compute spread
  plan::LinkFit measured_down, measured_up;
  plan::ComputeStretch compute_stretch;  // spans 0: not fitted
  plan::AggregationFit aggregation;
};

class Calibration {
 public:
  Calibration(const WorkerOptions& o, std::size_t units);

  // A transfer of a warm-up iteration (the bytes and the link's service time).
  void add_transfer(std::int64_t iteration, bool up, double bytes, double service_ms);
  void add_updates(const std::vector<plan::TransferSample>& updates);
  // A warm-up iteration's units (wall and CPU); the cold first one is not estimated from.
  void add_units(std::int64_t it, const UnitTimes& t, bool cpu_valid);
  // The barrier's pace of iteration `it` (known one iteration later).
  void pace(std::int64_t it, double factor);

  // At iteration `it` == the warm-up's length: fits everything. With the CPU marks known,
  // the stretch goes into `tracker` and `given`, and the estimators, the warm-up's unit
  // times and `log` are converted to idle-link speed. `profile` gets the warm-up's unit
  // times; `link` is the starting link (the given bandwidths, the transport's overhead).
  Calibrated finish(std::int64_t it, StretchTracker& tracker, Estimators& estimators,
                    std::vector<UnitSample>& log, plan::ModelProfile& profile,
                    plan::LinkProfile& given, plan::LinkProfile link);

 private:
  const WorkerOptions& o_;
  std::size_t units_;
  plan::EstimatorOptions weights_;  // all the warm-up's iterations alike
  plan::UnitTimeEstimator compute_;
  std::vector<plan::TransferSample> down_, up_, updates_;
  std::vector<UnitSample> cpu_;         // CPU ms per unit
  std::vector<UnitSample> units_seen_;  // what compute_ was given
  std::map<std::int64_t, double> paces_;
  bool cpu_known_ = true;  // every warm-up iteration's CPU marks came from one thread
};

}  // namespace dynacomm::worker
