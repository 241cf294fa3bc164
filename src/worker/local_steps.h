// Private to the worker: local SGD on the device (`--sync local:H`, optim/local_sgd.h).
// Which steps exchange with the PS, the round's gradients summed in the model's buffers
// (the push sends the sum), the device's own steps from the round's pulled weights, and
// those weights for rank 0's evaluations between exchanges. Under every other mode each
// step is a round that pulls and pushes, and nothing here touches the model.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/model.h"
#include "optim/local_sgd.h"
#include "optim/sgd.h"
#include "worker/comm.h"
#include "worker/worker.h"

namespace dynacomm::worker {

class LocalSteps {
 public:
  // The schedule from o.sync (the same on every worker: the rounds must agree);
  // `total_steps` the job's length in steps.
  LocalSteps(const WorkerOptions& o, model::Model& model, std::int64_t total_steps);

  bool local() const { return local_; }
  const optim::LocalSgd& schedule() const { return schedule_; }
  std::int64_t rounds() const { return schedule_.rounds(total_); }  // the PS's iterations
  std::int64_t round_of(std::int64_t step) const { return schedule_.round_of(step); }
  std::int64_t first_step(std::int64_t round) const { return schedule_.first_step(round); }
  // The steps of the `rounds` rounds from `step`'s (the traced rounds, as steps).
  std::int64_t steps_for(std::int64_t step, std::int64_t rounds) const {
    return schedule_.first_step(round_of(step) + rounds) - step;
  }
  Exchange exchange(std::int64_t step) const {
    return {schedule_.pulls(step), schedule_.pushes(step, total_)};
  }
  // The round's next step prefetches (a full-duplex plan): this step pushes, the next pulls.
  bool prefetches_after(std::int64_t step) const {
    return step + 1 < total_ && exchange(step).push && exchange(step + 1).pull;
  }

  // Before the step's forward pass: its gradients are added to the round's so far (all but
  // the round's first step).
  void before_step(std::int64_t step);
  // After the step's forward pass, its weights all in: a pulling step keeps them (local
  // SGD only).
  void after_forward(std::int64_t step);
  // After the step's backward pass: a step that does not push takes the device's own step,
  // w = pulled - lr * (the round's gradients so far).
  void after_step(std::int64_t step);
  // Runs `f` with the round's pulled weights in the model (the job's latest average, which
  // rank 0 evaluates between exchanges), then puts the device's back.
  void with_round_weights(const std::function<void()>& f);

 private:
  const bool local_;
  const optim::LocalSgd schedule_;
  const std::int64_t total_;
  optim::SgdOptions sgd_;  // the PS's learning rate, by round
  model::Model& model_;
  std::vector<std::vector<float>> pulled_;  // per unit: the round's weights (local only)
};

}  // namespace dynacomm::worker
