// The Python package's worker (dynacomm.Worker): the user's torch.nn.Module, trained with
// their own loop through run_worker (worker/external_step.h), which runs on a thread of its
// own. Each step(inputs, targets, loss_fn) of the user's thread hands the batch over and
// waits (the GIL released) while the worker's thread runs the forward pass in Python (a
// forward pre-hook on each unit waits at its gate), the loss, and backward (gradient hooks
// hand each unit over as it is ready); the step returns the loss once backward is done,
// while the pushes go on.
//
// Units: the module's top-level children that have parameters, in the order given (the
// order forward runs them). Every parameter must be in one.
#pragma once

#include <torch/extension.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "worker/external_step.h"
#include "worker/worker.h"

namespace dynacomm::python {

namespace py = pybind11;

struct Unit {
  std::string name;
  py::object module;               // the child; its forward pre-hook waits at the gate
  std::vector<at::Tensor> params;  // its parameters
};

class PythonLoop final : public worker::ExternalStep {
 public:
  // Called with the GIL held. The module's parameters become views of the model's flat
  // buffers here (their values kept).
  PythonLoop(py::object module, std::vector<Unit> units, model::ModelOptions model,
             std::int64_t steps_per_epoch, int rank, std::chrono::milliseconds timeout);
  ~PythonLoop() override;  // takes the hooks off (GIL held)

  // The user's thread (GIL held; released while it waits). The loss as a float; throws the
  // worker thread's error, or Error once the job has ended.
  double step(const at::Tensor& inputs, const at::Tensor& targets, py::object loss_fn);
  // No more steps: the worker says goodbye at its next iteration's start.
  void close();
  // The worker thread failed or ended (run_worker returned).
  void finished(std::exception_ptr error);

  // worker::ExternalStep, on the worker thread.
  std::unique_ptr<model::Model> take_model() override;
  std::int64_t steps_per_epoch() const override { return steps_per_epoch_; }
  bool next(std::int64_t it) override;
  at::Tensor loss(model::Model& model, std::int64_t it) override;
  void step_done(std::int64_t it, double loss) override;

 private:
  struct Batch {
    at::Tensor inputs, targets;
    py::object loss_fn;  // released under the GIL only
  };
  at::Tensor forward(const at::Tensor& x, const std::function<void(int)>& gate);
  void add_hooks(const std::vector<Unit>& units);

  py::object module_;
  std::vector<py::object> hook_handles_;
  // The gate of the forward pass now running (none outside it): the pre-hooks call it.
  std::shared_ptr<std::function<void(int)>> gate_ = std::make_shared<std::function<void(int)>>();
  std::unique_ptr<model::Model> model_;
  const std::int64_t steps_per_epoch_;
  const int rank_;
  const std::chrono::milliseconds timeout_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Batch> batch_;  // handed over, not yet taken
  std::int64_t done_ = 0;       // steps whose backward is done
  std::int64_t posted_ = 0;     // steps handed over
  double last_loss_ = 0;
  bool closed_ = false, ended_ = false;
  std::exception_ptr error_;
};

}  // namespace dynacomm::python
