// Time to a target test accuracy, the figure of merit for a user on a slow link: from rank
// 0's iterations (worker/worker.h), each evaluation recorded on the iteration after which
// it ran, the first that reached the target, the training time to it and the bytes moved.
//
//   TimeToAccuracy t = time_to_accuracy(result.iterations, 0.88);
//   if (t.reached()) ... t.wall_s, t.iteration, t.bytes_up
#pragma once

#include <cstdint>
#include <vector>

#include "worker/worker.h"

namespace dynacomm::worker {

struct TimeToAccuracy {
  double target = 0;
  std::int64_t iteration = -1;  // the first whose evaluated weights reached it; -1: none did
  double accuracy = 0;          // that evaluation's
  // From the job's start to the end of that iteration, with the time of the evaluations
  // before it (and its own) left out: what training alone took, warm-up and planning in.
  double wall_s = 0;
  double eval_s = 0;  // the evaluations' time left out
  std::int64_t iterations = 0;                // run to get there (from the first recorded)
  std::int64_t bytes_up = 0, bytes_down = 0;  // this worker's, to the end of that iteration
  bool reached() const { return iteration >= 0; }
};

// `iterations` in order; target in (0, 1].
TimeToAccuracy time_to_accuracy(const std::vector<IterationRecord>& iterations, double target);

}  // namespace dynacomm::worker
