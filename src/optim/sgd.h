// SGD with momentum and weight decay, on flat per-unit float buffers, with PyTorch's
// semantics (torch.optim.SGD, dampening 0):
//   d = g + weight_decay * p;   v = momentum * v + d  (v = d on the first step);   p -= lr * d'
// where d' = v, or d + momentum * v with Nesterov. The learning rate follows a schedule.
//
//   Sgd sgd(SgdOptions{}, {320, 18496});        // one state buffer per unit
//   sgd.step(0, params0, grads0, iteration);    // any unit order; each unit once a step
//
// Not thread-safe per unit; distinct units may be stepped from distinct threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dynacomm::optim {

enum class LrSchedule { kConstant, kCosine };
LrSchedule parse_lr_schedule(const std::string& s);  // "constant" | "cosine"

struct SgdOptions {
  double lr = 0.05;
  double momentum = 0.9;
  double weight_decay = 5e-4;
  bool nesterov = false;
  LrSchedule schedule = LrSchedule::kConstant;
  std::int64_t total_iterations = 0;  // cosine: iterations to decay over (Sgd requires it)

  // Throws InvalidInput naming the option. total_iterations is checked by Sgd's
  // constructor, since callers often learn it only when the run's length is known.
  void validate() const;
  // Learning rate at a 0-based iteration.
  double lr_at(std::int64_t iteration) const;
};

class Sgd {
 public:
  Sgd(const SgdOptions& options, const std::vector<std::int64_t>& unit_sizes);
  // Updates params of `unit` in place from grads. `iteration` selects the learning rate,
  // multiplied by lr_scale (an asynchronous PS's staleness rule, ps/sync_policy.h).
  void step(int unit, float* params, const float* grads, std::int64_t iteration,
            double lr_scale = 1.0);
  const SgdOptions& options() const { return options_; }

  // A unit's optimiser state, for checkpoints: its momentum buffer, and whether it has
  // taken a step (the first step's buffer is the gradient itself).
  const std::vector<float>& velocity(int unit) const;
  bool started(int unit) const;
  // Puts back what velocity() and started() returned; InvalidInput on a size mismatch.
  void restore(int unit, std::vector<float> velocity, bool started);

 private:
  SgdOptions options_;
  std::vector<std::vector<float>> velocity_;
  std::vector<bool> started_;
};

}  // namespace dynacomm::optim
