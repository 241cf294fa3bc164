// dynacomm._core: the C++ worker inside Python (python/dynacomm/worker.py wraps it).
#include <torch/extension.h>

#include <iostream>
#include <memory>
#include <streambuf>
#include <thread>

#include "base/error.h"
#include "data/fashion_mnist.h"
#include "data/npy_dataset.h"
#include "python/python_loop.h"
#include "python/worker_options.h"
#include "worker/data_share.h"
#include "worker/join.h"
#include "worker/worker.h"

namespace dynacomm::python {
namespace {

class NullBuffer : public std::streambuf {
  int overflow(int c) override { return c; }
};

py::dict summary_of(const worker::WorkerResult& r) {
  py::dict d;
  py::list ms, losses;
  for (const auto& it : r.iterations) {
    ms.append(it.ms);
    losses.append(it.loss);
  }
  d["iterations"] = r.iterations.size();
  d["iteration_ms"] = ms;
  d["losses"] = losses;
  d["median_iteration_ms"] = r.median_iteration_ms;
  d["predicted_ms"] = r.predicted_ms;
  d["scheduler"] = r.plans.empty() ? std::string() : r.plans.back().scheduler;
  d["scheduler_choice"] = r.scheduler_choice;
  d["plan_changes"] = r.plan_changes.size();
  d["interrupted_at"] = r.interrupted_at;
  return d;
}

// One worker of a job, its run_worker on a thread of its own.
class Worker {
 public:
  Worker(py::object module, const py::list& units, const std::string& model_name,
         std::vector<int> input_shape, int classes, std::int64_t steps_per_epoch, WorkerFlags flags,
         bool quiet)
      : quiet_(quiet) {
    if (input_shape.size() != 3)
      throw InvalidInput("dynacomm.Worker: input_shape is (channels, height, width)");
    {
      py::gil_scoped_release released;  // asks the PS
      options_ = worker_options(flags);
    }
    std::vector<Unit> parts;
    for (const py::handle& u : units) {
      const auto t = u.cast<py::tuple>();
      parts.push_back({t[0].cast<std::string>(), t[1].cast<py::object>(),
                       t[2].cast<std::vector<at::Tensor>>()});
    }
    model::ModelOptions m{
        model_name, {input_shape[0], input_shape[1], input_shape[2]}, classes, options_.seed};
    loop_ = std::make_shared<PythonLoop>(std::move(module), std::move(parts), m, steps_per_epoch,
                                         options_.rank, options_.timeout);
    options_.external = loop_;
    options_.validate();
    thread_ = std::thread([this] { run(); });
  }
  ~Worker() { join(); }

  double step(const at::Tensor& x, const at::Tensor& y, py::object loss_fn) {
    return loop_->step(x, y, std::move(loss_fn));
  }

  py::dict close() {
    join();
    if (error_) std::rethrow_exception(error_);
    return summary_of(result_);
  }

 private:
  // No more steps; waits (the GIL released) for the worker to say goodbye.
  void join() {
    if (!thread_.joinable()) return;
    loop_->close();
    py::gil_scoped_release released;
    thread_.join();
  }

  void run() {
    try {
      result_ = worker::run_worker(options_, quiet_ ? null_ : std::cerr);
      loop_->finished(nullptr);
    } catch (...) {
      error_ = std::current_exception();
      try {
        std::rethrow_exception(error_);
      } catch (const RemoteError&) {  // the PS's own word: it knows
      } catch (const std::exception& e) {
        worker::tell_ps_failed(options_.ps, options_.rank, e.what(),
                               options_.curve ? &*options_.curve : nullptr);
      }
      loop_->finished(error_);
    }
  }

  bool quiet_;
  NullBuffer null_buffer_;
  std::ostream null_{&null_buffer_};
  worker::WorkerOptions options_;
  std::shared_ptr<PythonLoop> loop_;
  worker::WorkerResult result_;
  std::exception_ptr error_;
  std::thread thread_;
};

// The batches the binary's worker `rank` trains on in epoch `epoch` (1-based): its share
// of the first train_samples images, in its order, normalised as it normalises them.
py::list worker_batches(const std::string& data_dir, int rank, int workers, int batch,
                        std::uint64_t seed, int epoch, std::int64_t train_samples) {
  worker::WorkerOptions o;
  o.rank = rank;
  o.workers = workers;
  o.batch = batch;
  o.seed = seed;
  o.partition.seed = seed;
  o.train_samples = train_samples;
  const data::Dataset train = data::load_dataset(data_dir, data::Split::kTrain);
  const worker::DataShare share = worker::share_of(o, train);
  const std::vector<std::int64_t> order = worker::epoch_order(o, share, epoch);
  py::list out;
  for (std::int64_t s = 0; s < share.steps_per_epoch; ++s) {
    const auto begin = order.begin() + std::min<std::int64_t>(s * batch, order.size());
    const auto end = order.begin() + std::min<std::int64_t>((s + 1) * batch, order.size());
    data::Batch b = data::make_batch(train, std::vector<std::int64_t>(begin, end));
    at::Tensor x =
        torch::from_blob(b.images.data(), {b.size(), train.channels, train.rows, train.cols},
                         torch::kFloat32)
            .clone();
    at::Tensor y = torch::from_blob(b.labels.data(), {b.size()}, torch::kInt64).clone();
    out.append(py::make_tuple(x, y));
  }
  return out;
}

}  // namespace
}  // namespace dynacomm::python

PYBIND11_MODULE(_core, m) {
  namespace p = dynacomm::python;
  m.doc() = "dynacomm's C++ worker (use the dynacomm package, not this module)";
  py::class_<p::WorkerFlags>(m, "WorkerFlags")
      .def(py::init<>())
      .def_readwrite("ps", &p::WorkerFlags::ps)
      .def_readwrite("rank", &p::WorkerFlags::rank)
      .def_readwrite("threads", &p::WorkerFlags::threads)
      .def_readwrite("args", &p::WorkerFlags::args)
      .def_readwrite("key", &p::WorkerFlags::key)
      .def_readwrite("ps_key", &p::WorkerFlags::ps_key);
  py::class_<p::Worker>(m, "Worker")
      .def(py::init<py::object, const py::list&, const std::string&, std::vector<int>, int,
                    std::int64_t, p::WorkerFlags, bool>())
      .def("step", &p::Worker::step)
      .def("close", &p::Worker::close);
  m.def("worker_batches", &p::worker_batches);
}
