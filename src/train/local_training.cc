#include "train/local_training.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <numeric>
#include <thread>

#include "base/error.h"
#include "data/fashion_mnist.h"
#include "data/npy_dataset.h"
#include "data/partition.h"
#include "model/model.h"
#include "report/progress.h"
#include "report/run_folder.h"

namespace dynacomm::train {

namespace {

using Clock = std::chrono::steady_clock;

torch::Tensor images_of(data::Batch& b, const data::Dataset& d) {
  return torch::from_blob(b.images.data(), {b.size(), d.channels, d.rows, d.cols}, torch::kFloat32);
}
torch::Tensor labels_of(data::Batch& b) {
  return torch::from_blob(b.labels.data(), {b.size()}, torch::kInt64);
}

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * x);
  return buf;
}

}  // namespace

at::Tensor batch_loss(model::Model& model, const data::Dataset& train,
                      const std::vector<std::int64_t>& order, std::int64_t begin,
                      std::int64_t batch) {
  const auto end = std::min<std::int64_t>(static_cast<std::int64_t>(order.size()), begin + batch);
  data::Batch b = data::make_batch(
      train, std::vector<std::int64_t>(order.begin() + begin, order.begin() + end));
  // Copies: backward reads the input (a convolution's weight gradient) after b is gone.
  const torch::Tensor x = images_of(b, train).clone();
  const torch::Tensor y = labels_of(b).clone();
  return torch::nn::functional::cross_entropy(model.forward(x), y);
}

void LocalTrainingOptions::validate() const {
  if (epochs < 1) throw InvalidInput("--epochs must be at least 1");
  if (batch < 1) throw InvalidInput("--batch must be at least 1");
  if (threads < 0) throw InvalidInput("--threads must be >= 0");
  if (iterations < 0) throw InvalidInput("--iterations must be >= 0");
  if (train_samples < 0 || test_samples < 0) throw InvalidInput("sample limits must be >= 0");
  sgd.validate();  // total_iterations is filled in from the run's length
}

Evaluation evaluate(model::Model& model, const data::Dataset& dataset, std::int64_t limit,
                    int batch) {
  const std::int64_t n = limit > 0 ? std::min(limit, dataset.size()) : dataset.size();
  const bool was_training = model.is_training();
  model.train(false);
  torch::NoGradGuard no_grad;
  Evaluation e;
  double loss_sum = 0;
  std::int64_t correct = 0;
  for (std::int64_t start = 0; start < n; start += batch) {
    std::vector<std::int64_t> idx(
        static_cast<std::size_t>(std::min<std::int64_t>(batch, n - start)));
    std::iota(idx.begin(), idx.end(), start);
    data::Batch b = data::make_batch(dataset, idx);
    torch::Tensor logits = model.forward(images_of(b, dataset));
    torch::Tensor y = labels_of(b);
    loss_sum +=
        torch::nn::functional::cross_entropy(
            logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
            .item<double>();
    correct += logits.argmax(1).eq(y).sum().item<std::int64_t>();
  }
  model.train(was_training);
  e.samples = n;
  e.loss = n ? loss_sum / static_cast<double>(n) : 0;
  e.accuracy = n ? static_cast<double>(correct) / static_cast<double>(n) : 0;
  return e;
}

TrainingResult train_local(const LocalTrainingOptions& o, std::ostream& progress) {
  o.validate();
  const int threads = o.threads > 0
                          ? o.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(threads);

  data::Dataset train = data::load_dataset(o.data_dir, data::Split::kTrain);
  data::Dataset test = data::load_dataset(o.data_dir, data::Split::kTest);
  const std::int64_t n_train =
      o.train_samples > 0 ? std::min(o.train_samples, train.size()) : train.size();

  auto model = model::make_model(
      {o.model, model::InputShape{train.channels, train.rows, train.cols}, train.classes, o.seed});
  const std::int64_t steps_per_epoch = (n_train + o.batch - 1) / o.batch;
  optim::SgdOptions sgd_options = o.sgd;
  std::int64_t planned = steps_per_epoch * o.epochs;
  if (o.iterations > 0) planned = std::min(planned, o.iterations);
  if (sgd_options.total_iterations <= 0) sgd_options.total_iterations = planned;
  std::vector<std::int64_t> sizes;
  for (const auto& u : model->units()) sizes.push_back(u.params);
  optim::Sgd sgd(sgd_options, sizes);

  std::unique_ptr<report::RunFolder> run;
  if (!o.out_dir.empty()) run = std::make_unique<report::RunFolder>(o.out_dir);

  TrainingResult result;
  const auto t_start = Clock::now();
  std::int64_t iteration = 0;
  for (int epoch = 1; epoch <= o.epochs && (o.iterations == 0 || iteration < o.iterations);
       ++epoch) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(n_train));
    std::iota(order.begin(), order.end(), 0);
    data::shuffle(order, o.seed * 1000003 + static_cast<std::uint64_t>(epoch));
    model->train(true);
    report::ProgressBar bar(progress,
                            "epoch " + std::to_string(epoch) + "/" + std::to_string(o.epochs),
                            steps_per_epoch, o.interactive, "img");
    const auto t_epoch = Clock::now();
    EpochMetrics m;
    m.epoch = epoch;
    double loss_sum = 0;
    std::int64_t correct = 0, seen = 0;
    for (std::int64_t step = 0; step < steps_per_epoch; ++step) {
      if (o.iterations > 0 && iteration >= o.iterations) break;
      const std::int64_t begin = step * o.batch, end = std::min(n_train, begin + o.batch);
      std::vector<std::int64_t> idx(order.begin() + begin, order.begin() + end);
      data::Batch b = data::make_batch(train, idx);
      model::seed_dropout(o.seed, 0, iteration);  // as worker 0 of a job would
      torch::Tensor logits = model->forward(images_of(b, train));
      torch::Tensor y = labels_of(b);
      torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
      loss.backward();
      for (int u = 0; u < model->num_units(); ++u)
        sgd.step(u, model->params(u), model->grads(u), iteration);
      const double l = loss.item<double>();
      if (!std::isfinite(l))
        throw Error("training diverged at iteration " + std::to_string(iteration) + " (loss is " +
                    std::to_string(l) + "); try a smaller --lr");
      loss_sum += l * b.size();
      correct += logits.argmax(1).eq(y).sum().item<std::int64_t>();
      seen += b.size();
      ++iteration;
      ++m.iterations;
      bar.update(step + 1,
                 "loss " + std::to_string(loss_sum / seen).substr(0, 6) + "  acc " +
                     percent(static_cast<double>(correct) / seen),
                 o.batch);
    }
    m.seconds = std::chrono::duration<double>(Clock::now() - t_epoch).count();
    m.train_loss = seen ? loss_sum / seen : 0;
    m.train_accuracy = seen ? static_cast<double>(correct) / seen : 0;
    m.images_per_second = m.seconds > 0 ? seen / m.seconds : 0;
    Evaluation ev = evaluate(*model, test, o.test_samples, 256);
    m.test_loss = ev.loss;
    m.test_accuracy = ev.accuracy;
    bar.finish("test acc " + percent(ev.accuracy));
    result.epochs.push_back(m);
    if (run) {  // after every epoch, so an interrupted run keeps what it learned so far
      std::vector<std::vector<double>> rows;
      for (const auto& e : result.epochs)
        rows.push_back({static_cast<double>(e.epoch), static_cast<double>(e.iterations),
                        e.train_loss, e.train_accuracy, e.test_loss, e.test_accuracy, e.seconds,
                        e.images_per_second});
      run->write_csv("metrics.csv",
                     {"epoch", "iterations", "train_loss", "train_accuracy", "test_loss",
                      "test_accuracy", "seconds", "images_per_second"},
                     rows);
      run->write_floats("weights.bin", model->flat_params());
      run->write_text("model.pt", model->export_pt());
    }
  }
  result.train_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  result.iterations = iteration;
  result.test_accuracy = result.epochs.empty() ? 0 : result.epochs.back().test_accuracy;
  result.weights = model->flat_params();
  if (run) {
    nlohmann::json units = nlohmann::json::array();
    for (const auto& u : model->units()) units.push_back({{"name", u.name}, {"params", u.params}});
    run->write_json(
        "summary.json",
        {{"mode", "local"},
         {"model", o.model},
         {"epochs", static_cast<int>(result.epochs.size())},
         {"iterations", result.iterations},
         {"batch", o.batch},
         {"lr", o.sgd.lr},
         {"momentum", o.sgd.momentum},
         {"weight_decay", o.sgd.weight_decay},
         {"seed", o.seed},
         {"threads", threads},
         {"train_samples", n_train},
         {"test_samples", o.test_samples > 0 ? std::min(o.test_samples, test.size()) : test.size()},
         {"test_accuracy", result.test_accuracy},
         {"train_seconds", result.train_seconds},
         {"weights", "weights.bin: float32 little-endian, units in order"},
         {"units", units}});
  }
  return result;
}

}  // namespace dynacomm::train
