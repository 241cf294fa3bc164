// Flags shared by `dynacomm train` (cluster mode) and `dynacomm worker`/`ps`: parsed once
// here, forwarded by the launcher to its children as the same flags.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "optim/sgd.h"
#include "ps/server.h"
#include "worker/worker.h"

namespace dynacomm::cli {

constexpr int kMaxWorkers = 1024;

struct JobFlags {
  std::string model = "cnn";
  int workers = 2;
  int batch = 32;
  int epochs = 1;
  std::int64_t iterations = 0;
  std::uint64_t seed = 1;
  std::string data_dir;
  std::string partition = "iid";
  int shards = 2;
  std::int64_t train_samples = 0, test_samples = 0;
  std::string scheduler = "auto";  // or a planner (worker/worker.h)
  std::string down = "500mbit", up, latency = "10ms", extra_overhead = "0ms";
  int warmup = 3;
  std::string net = "user";
  std::string rotation;  // comma-separated schedulers taking turns (dynacomm bench)
  int rotation_block = 3;
  double device_slowdown = 1;  // user: shaped in the transport; netns: by tbf in namespaces
  std::string replan = "dynamic";
  double replan_threshold = 0.05;
  std::int64_t replan_interval = 3;
  std::string link_trace, device_slowdown_trace;  // files
  double trace_origin_ms = 0;                     // steady clock, ms; 0: the worker's own start
  double lr = 0.05, momentum = 0.9, weight_decay = 5e-4;
  std::string lr_schedule = "cosine";
  std::string timeout = "60s";  // every wait on a peer

  void add_model_and_optimizer(CLI::App* cmd);  // what the PS needs too
  void add_worker_flags(CLI::App* cmd);         // data, link, plan
  std::vector<std::string> optimizer_args() const;
  double timeout_ms() const;
  std::vector<std::string> worker_args() const;

  optim::SgdOptions sgd() const;
  ps::ServerOptions server_options() const;
  worker::WorkerOptions worker_options() const;  // rank and --ps left to the caller
};

}  // namespace dynacomm::cli
