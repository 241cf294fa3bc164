// Rank 0's evaluation of the weights in its model on the test set, recorded in the run's
// result and shown: shared by the PS worker (worker.h) and the all-reduce one
// (ring_worker.h).
#pragma once

#include "data/fashion_mnist.h"
#include "model/model.h"
#include "worker/run_log.h"
#include "worker/worker.h"

namespace dynacomm::worker {

// The accuracy is recorded on the last iteration (`final`: the job's weights after its last
// update, outside every iteration's time; `epoch_end`: an epoch's). `after_update`: the
// weights already hold the last iteration's update (all-reduce), else they are the ones it
// pulled (the PS's), which the bar says.
void evaluate_now(model::Model& model, const data::Dataset& test, const WorkerOptions& o,
                  RunLog& log, WorkerResult& result, bool final, bool epoch_end,
                  bool after_update);

}  // namespace dynacomm::worker
