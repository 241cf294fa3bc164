#include "worker/time_to_accuracy.h"

namespace dynacomm::worker {

TimeToAccuracy time_to_accuracy(const std::vector<IterationRecord>& iterations, double target) {
  TimeToAccuracy t;
  t.target = target;
  double eval_ms = 0;
  std::int64_t up = 0, down = 0;
  for (std::size_t i = 0; i < iterations.size(); ++i) {
    const IterationRecord& r = iterations[i];
    up += r.bytes_up;
    down += r.bytes_down;
    eval_ms += r.eval_ms;
    if (r.test_accuracy < 0 || r.test_accuracy < target) continue;
    t.iteration = r.iteration;
    t.accuracy = r.test_accuracy;
    t.eval_s = eval_ms / 1e3;
    // start_s holds the evaluations before this iteration, ms its own: all left out.
    t.wall_s = r.start_s + (r.ms - eval_ms) / 1e3;
    t.iterations = static_cast<std::int64_t>(i) + 1;
    t.bytes_up = up;
    t.bytes_down = down;
    return t;
  }
  return t;
}

}  // namespace dynacomm::worker
