// A worker's share of the training data and the job's length in iterations.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "data/fashion_mnist.h"
#include "model/model.h"
#include "worker/worker.h"

namespace dynacomm::worker {

struct DataShare {
  std::vector<std::int64_t> mine;    // this rank's training images, in index order
  std::int64_t steps_per_epoch = 0;  // the smallest share's batches: every rank runs as many
  std::int64_t total = 0;            // iterations of the job
};

// Partitions the first train_samples images across the workers (a caller's batches,
// o.external: their count). Throws InvalidInput when
// there is nothing to run.
DataShare share_of(const WorkerOptions& o, const data::Dataset& train);

// This rank's samples in epoch `epoch`'s order (1-based; the same on a rejoin).
std::vector<std::int64_t> epoch_order(const WorkerOptions& o, const DataShare& share, int epoch);

// The job's model (o.model, o.seed's initial weights) for the data's shape and classes, or
// the caller's (o.external).
std::unique_ptr<model::Model> model_for(const WorkerOptions& o, const data::Dataset& train);

}  // namespace dynacomm::worker
