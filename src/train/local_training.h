// Single-process training and evaluation on Fashion-MNIST (no parameter server): the
// baseline every distributed run is compared with, and the proof that the models learn.
//
//   LocalTrainingOptions o;  o.model = "cnn";  o.epochs = 5;  o.out_dir = "runs/cnn";
//   TrainingResult r = train_local(o, std::cerr);   // progress bars on the stream
//   r.test_accuracy  // also in runs/cnn/summary.json, with metrics.csv and weights.bin
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "optim/sgd.h"

namespace at {
class Tensor;
}
namespace dynacomm::model {
class Model;
}
namespace dynacomm::data {
struct Dataset;
}

namespace dynacomm::train {

struct LocalTrainingOptions {
  std::string model = "cnn";
  int epochs = 5;
  int batch = 64;
  optim::SgdOptions sgd;           // lr, momentum, weight decay, schedule
  std::uint64_t seed = 1;          // initial weights, shuffling, dropout
  int threads = 0;                 // compute threads; 0 = all cores
  std::string data_dir;            // "" = Debian's dataset-fashion-mnist folder
  std::string out_dir;             // "" = write no run folder
  std::int64_t iterations = 0;     // stop after this many iterations (0 = no limit)
  std::int64_t train_samples = 0;  // use only the first N training samples (0 = all)
  std::int64_t test_samples = 0;   // evaluate on the first N test samples (0 = all)
  bool interactive = false;        // redraw progress in place (a terminal)

  void validate() const;  // throws InvalidInput naming the option
};

struct EpochMetrics {
  int epoch = 0;
  std::int64_t iterations = 0;  // done in this epoch
  double train_loss = 0, train_accuracy = 0, test_loss = 0, test_accuracy = 0;
  double seconds = 0, images_per_second = 0;
};

struct TrainingResult {
  std::vector<EpochMetrics> epochs;
  double test_accuracy = 0;
  double train_seconds = 0;
  std::int64_t iterations = 0;
  std::vector<float> weights;  // final parameters, units in order
};

TrainingResult train_local(const LocalTrainingOptions& options, std::ostream& progress);

// One training mini-batch, the samples order[begin, begin + batch) (fewer at the end):
// the forward pass in training mode and its cross-entropy loss, ready for backward.
at::Tensor batch_loss(model::Model& model, const data::Dataset& train,
                      const std::vector<std::int64_t>& order, std::int64_t begin,
                      std::int64_t batch);

struct Evaluation {
  double loss = 0, accuracy = 0;
  std::int64_t samples = 0;
};
// Evaluates in eval mode (batch-norm running statistics, no dropout) on the first
// `limit` samples (0 = all).
Evaluation evaluate(model::Model& model, const data::Dataset& dataset, std::int64_t limit,
                    int batch);

}  // namespace dynacomm::train
