#include "python/python_loop.h"

#include "base/error.h"
#include "model/external_model.h"

namespace dynacomm::python {

namespace {

// A Python object that may be let go of on any thread: it takes the GIL to drop it.
struct GilObject {
  py::object o;
  GilObject() = default;
  explicit GilObject(py::object x) : o(std::move(x)) {}
  GilObject(GilObject&&) = default;
  GilObject& operator=(GilObject&&) = default;
  ~GilObject() {
    if (!o) return;
    py::gil_scoped_acquire gil;
    o = py::object();
  }
};

std::string python_error(const std::string& what, py::error_already_set& e) {
  return what + ": " + e.what();
}

}  // namespace

PythonLoop::PythonLoop(py::object module, std::vector<Unit> units, model::ModelOptions options,
                       std::int64_t steps_per_epoch, int rank, std::chrono::milliseconds timeout)
    : module_(std::move(module)),
      steps_per_epoch_(steps_per_epoch),
      rank_(rank),
      timeout_(timeout) {
  model::ExternalModelParts parts;
  parts.options = std::move(options);
  for (const Unit& u : units) {
    parts.unit_names.push_back(u.name);
    parts.unit_parameters.push_back(u.params);
  }
  parts.forward = [this](const at::Tensor& x, const std::function<void(int)>& gate) {
    return forward(x, gate);
  };
  parts.set_training = [this](bool on) {
    py::gil_scoped_acquire gil;
    module_.attr("train")(on);
  };
  model_ = model::make_external_model(std::move(parts));
  add_hooks(units);
}

PythonLoop::~PythonLoop() {
  for (py::object& h : hook_handles_) h.attr("remove")();
}

void PythonLoop::add_hooks(const std::vector<Unit>& units) {
  for (std::size_t u = 0; u < units.size(); ++u) {
    auto hook = py::cpp_function([gate = gate_, u = static_cast<int>(u)](py::args) {
      if (*gate) {
        py::gil_scoped_release released;  // the pull may take a while
        (*gate)(u);
      }
      return py::none();
    });
    hook_handles_.push_back(units[u].module.attr("register_forward_pre_hook")(hook));
  }
}

at::Tensor PythonLoop::forward(const at::Tensor& x, const std::function<void(int)>& gate) {
  py::gil_scoped_acquire gil;
  *gate_ = gate;
  try {
    at::Tensor out = module_(x).cast<at::Tensor>();
    *gate_ = nullptr;
    return out;
  } catch (py::error_already_set& e) {
    *gate_ = nullptr;
    throw Error(python_error(
        "dynacomm.Worker rank " + std::to_string(rank_) + ": the module's forward failed", e));
  } catch (...) {
    *gate_ = nullptr;
    throw;
  }
}

std::unique_ptr<model::Model> PythonLoop::take_model() {
  if (!model_) throw Error("dynacomm.Worker: the model was taken already");
  return std::move(model_);
}

bool PythonLoop::next(std::int64_t it) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout_, [&] { return batch_.has_value() || closed_; }))
    throw Timeout("dynacomm.Worker rank " + std::to_string(rank_) +
                  ": no step() came for iteration " + std::to_string(it) + " within " +
                  std::to_string(timeout_.count() / 1000) + " s (call close() when done)");
  return batch_.has_value();
}

at::Tensor PythonLoop::loss(model::Model& model, std::int64_t it) {
  at::Tensor inputs, targets;
  GilObject fn;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!batch_) throw Error("dynacomm.Worker: no batch for iteration " + std::to_string(it));
    inputs = batch_->inputs;
    targets = batch_->targets;
    fn = GilObject(std::move(batch_->loss_fn));
    batch_.reset();
  }
  const at::Tensor out = model.forward(inputs);
  py::gil_scoped_acquire gil;
  try {
    at::Tensor loss = fn.o(out, targets).cast<at::Tensor>();
    if (loss.numel() != 1 || !loss.requires_grad())
      throw InvalidInput("dynacomm.Worker rank " + std::to_string(rank_) +
                         ": loss_fn must return a scalar that depends on the model's output");
    return loss;
  } catch (py::error_already_set& e) {
    throw Error(python_error("dynacomm.Worker rank " + std::to_string(rank_) +
                                 ": loss_fn failed at iteration " + std::to_string(it),
                             e));
  } catch (py::cast_error&) {
    throw InvalidInput("dynacomm.Worker rank " + std::to_string(rank_) +
                       ": loss_fn must return a torch.Tensor");
  }
}

void PythonLoop::step_done(std::int64_t, double loss) {
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  last_loss_ = loss;
  cv_.notify_all();
}

void PythonLoop::finished(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mu_);
  error_ = error;
  ended_ = true;
  cv_.notify_all();
}

void PythonLoop::close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

double PythonLoop::step(const at::Tensor& inputs, const at::Tensor& targets, py::object loss_fn) {
  std::int64_t mine = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_) std::rethrow_exception(error_);
    if (ended_ || closed_)
      throw Error("dynacomm.Worker rank " + std::to_string(rank_) + ": the job has ended after " +
                  std::to_string(done_) + " step(s) of this worker");
    batch_ = Batch{inputs, targets, std::move(loss_fn)};
    mine = ++posted_;
    cv_.notify_all();
  }
  py::gil_scoped_release released;
  std::unique_lock<std::mutex> lock(mu_);
  while (done_ < mine && !ended_) {
    cv_.wait_for(lock, std::chrono::milliseconds(100));
    lock.unlock();
    {
      py::gil_scoped_acquire gil;  // Ctrl-C: the worker stops at its next iteration
      if (PyErr_CheckSignals() != 0) {
        close();
        throw py::error_already_set();
      }
    }
    lock.lock();
  }
  if (done_ >= mine) return last_loss_;
  if (error_) std::rethrow_exception(error_);
  throw Error("dynacomm.Worker rank " + std::to_string(rank_) + ": the job ended after " +
              std::to_string(done_) + " step(s); this one was not run");
}

}  // namespace dynacomm::python
