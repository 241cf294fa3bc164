// `dynacomm train`: today `--local` (single process); the PS cluster comes next.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "base/error.h"
#include "cli/commands.h"
#include "train/local_training.h"

namespace dynacomm::cli {

namespace {
struct TrainFlags {
  bool local = false;
  std::string lr_schedule = "constant";
  train::LocalTrainingOptions options;
};
}  // namespace

void add_train_command(CLI::App& app) {
  auto f = std::make_shared<TrainFlags>();
  auto& o = f->options;
  o.sgd.lr = 0.05;
  CLI::App* cmd = app.add_subcommand("train", "Train a CNN on Fashion-MNIST");
  cmd->add_flag("--local", f->local, "Train in this one process, without a parameter server");
  cmd->add_option("--model", o.model,
                  "cnn, lenet5, resnet18, resnet50, vgg11, vgg16, mobilenetv2, alexnet")
      ->capture_default_str();
  cmd->add_option("--epochs", o.epochs, "Passes over the training data")->capture_default_str();
  cmd->add_option("--iterations", o.iterations, "Stop after this many iterations (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--batch", o.batch, "Mini-batch size")->capture_default_str();
  cmd->add_option("--lr", o.sgd.lr, "Learning rate")->capture_default_str();
  cmd->add_option("--lr-schedule", f->lr_schedule, "constant or cosine (decays to 0 over the run)")
      ->capture_default_str();
  cmd->add_option("--momentum", o.sgd.momentum, "SGD momentum")->capture_default_str();
  cmd->add_option("--weight-decay", o.sgd.weight_decay, "L2 weight decay")->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed for weights, shuffling and dropout")
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "Compute threads (0: all cores)")->capture_default_str();
  cmd->add_option("--data-dir", o.data_dir, "Fashion-MNIST IDX folder (default: Debian's package)");
  cmd->add_option("--train-samples", o.train_samples,
                  "Use only the first N training images (0: all)");
  cmd->add_option("--test-samples", o.test_samples, "Evaluate on the first N test images (0: all)");
  cmd->add_option("--out", o.out_dir, "Run folder for metrics.csv, summary.json, weights.bin");
  cmd->callback([f]() {
    if (!f->local)
      throw InvalidInput(
          "train: only --local is available in this version (the parameter-server runtime is "
          "not built yet); run `dynacomm train --local ...`");
    f->options.sgd.schedule = optim::parse_lr_schedule(f->lr_schedule);
    f->options.interactive = ::isatty(STDERR_FILENO);
    train::TrainingResult r = train::train_local(f->options, std::cerr);
    std::printf("model %s: test accuracy %.2f%% after %d epoch(s), %lld iterations, %.1f s\n",
                f->options.model.c_str(), 100 * r.test_accuracy, static_cast<int>(r.epochs.size()),
                static_cast<long long>(r.iterations), r.train_seconds);
    if (!f->options.out_dir.empty()) std::printf("results in %s\n", f->options.out_dir.c_str());
  });
}

}  // namespace dynacomm::cli
