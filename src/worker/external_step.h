// The seam for a training loop that lives outside the worker: the Python package's
// dynacomm.Worker (src/python/), whose user calls step(inputs, targets, loss_fn) with their
// own data. run_worker keeps everything else (joining, plans, gates, re-planning, pushes,
// the PS's updates); each iteration it asks this for the batch's loss instead of making the
// batch from a dataset, and says when the step's backward is done.
//
// Called on run_worker's thread. Header without libtorch: at::Tensor is only declared.
#pragma once

#include <cstdint>
#include <memory>

#include "model/model.h"

namespace at {
class Tensor;
}

namespace dynacomm::worker {

class ExternalStep {
 public:
  virtual ~ExternalStep() = default;
  // The job's model, made by the caller (model/external_model.h); asked for once.
  virtual std::unique_ptr<model::Model> take_model() = 0;
  // Mini-batches in one epoch of this worker (every worker runs as many).
  virtual std::int64_t steps_per_epoch() const = 0;
  // Blocks until the caller has a batch for iteration `it` (true) or has closed (false).
  // Throws Timeout naming the iteration when none comes in time.
  virtual bool next(std::int64_t it) = 0;
  // That batch's loss, its forward run through model.forward() (gates and all).
  virtual at::Tensor loss(model::Model& model, std::int64_t it) = 0;
  // Iteration `it`'s backward is done: its gradients are handed over.
  virtual void step_done(std::int64_t it, double loss) = 0;
};

}  // namespace dynacomm::worker
