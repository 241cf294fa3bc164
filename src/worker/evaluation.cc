#include "worker/evaluation.h"

#include <cstdio>

#include "train/local_training.h"

namespace dynacomm::worker {

void evaluate_now(model::Model& model, const data::Dataset& test, const WorkerOptions& o,
                  RunLog& log, WorkerResult& result, bool final, bool epoch_end,
                  bool after_update) {
  const auto began = Clock::now();
  const double accuracy = train::evaluate(model, test, o.test_samples, 256).accuracy;
  if (!result.iterations.empty()) {
    IterationRecord& r = result.iterations.back();
    r.test_accuracy = accuracy;
    r.eval_ms = final ? 0 : ms_between(began, Clock::now());
  }
  result.last_test_accuracy = accuracy;
  if (epoch_end || final) result.epoch_test_accuracy.push_back(accuracy);
  if (final) result.test_accuracy = accuracy;
  if (!final) log.status(result, "training", true);
  char s[80];
  std::snprintf(s, sizeof s,
                final || after_update ? "test acc %.2f%%" : "test acc %.2f%% (before the last update)",
                100 * accuracy);
  if (epoch_end || final) log.bar_finish(s);
}

}  // namespace dynacomm::worker
