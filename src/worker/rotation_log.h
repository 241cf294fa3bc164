// rotation.json: what a rotation's (dynacomm bench's) iterations measured, as the online
// estimators got it, written by rank 0 for the bench to predict each iteration again
// after the run (cli/bench/repredict.h). The one definition of that file.
//
//   result.rotation_log = log;                            // the worker, at the run's end
//   folder.write_json("rotation.json", to_json(log));    // the worker command
//   RotationLog back = rotation_log_from_json(json);      // Error naming what is wrong
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "plan/model/profile.h"

namespace dynacomm::worker {

// One iteration's unit times (ms, per unit) and the BSP barrier's factor for it (>= 1;
// 0: none came).
struct UnitSample {
  std::int64_t iteration = 0;
  std::vector<double> forward, backward;
  double pace = 0;
};

struct RotationLog {
  struct Transfer {
    std::int64_t iteration = 0;
    bool up = false;
    double bytes = 0, service_ms = 0;
  };
  struct Update {  // the PS's aggregation of units, reported with a pull reply
    std::int64_t iteration = 0;
    double bytes = 0, ms = 0;
  };
  struct Iteration {  // as it ran: its plan (0: warm-up) and the stretch then (0: none)
    std::int64_t iteration = 0;
    int plan_id = 0;
    double stretch_down = 0, stretch_up = 0;
  };

  int warmup = 0, workers = 1;
  double latency_ms = 0;                             // the transport's, outside the link
  plan::LinkProfile given;                           // the job's link as asked
  plan::ModelProfile profile;                        // the warm-up's
  std::vector<plan::ComputeFactors> compute_spread;  // the warm-up's, for the planner
  std::vector<UnitSample> compute;                   // unit times as the estimators got them
  std::vector<UnitSample> wall;                      // the same iterations' unit times as measured
  std::vector<Transfer> transfers;
  std::vector<Update> updates;
  std::vector<Iteration> iterations;
};

nlohmann::json to_json(const RotationLog& log);
// Error naming the field that is missing or of the wrong type.
RotationLog rotation_log_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace dynacomm::worker
