// Flags shared by `dynacomm train` (cluster mode) and `dynacomm worker`/`ps`: parsed once
// here, forwarded by the launcher to its children as the same flags. The job's settings go
// to the PS, which hands them to each worker as it joins (net::JobConfig); a worker's
// own flags (its link, its data folder) go to the worker.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "net/job_protocol.h"
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
  std::int64_t eval_every = 0;  // rank 0 evaluates every N iterations too (0: epochs' ends)
  double target_accuracy = 0;   // train/bench stop the job once reached (0: none)
  std::string scheduler = "auto";
  std::string compress =
      "none";  // the pushes' codec (compress/compressor.h)  // or a planner (worker/worker.h)
  std::string compress_pulls = "none";  // the pulls' (compress/pull_codec.h)
  std::string sync = "bsp";             // the synchronisation mode (ps/sync_policy.h)
  std::string arch = "ps";              // ps, allreduce, gossip, or auto (cli/arch_choice.h)
  std::string buckets = "planned";      // allreduce: how the gradients are bucketed
  std::string topology = "ring";        // gossip: whom each worker averages with
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
  std::string cloud_link_file;  // the launcher's: --ps-link under --net user (net/shared_shaper.h)
  double lr = 0.05, momentum = 0.9, weight_decay = 5e-4;
  std::string lr_schedule = "cosine";
  std::string timeout = "60s";  // every wait on a peer
  std::string ps_link;  // the launcher's: the PS's link shared by all, IN[,OUT] ("": unlimited)
  int arch_trials = 5;  // the launcher's: --arch auto's trial iterations (cli/arch_choice.h)

  // The job's settings, one for the whole job: the PS holds them and hands them to the
  // workers (model, workers, optimiser, data, batch, scheduling, re-planning).
  // bench_lists: --compress and --sync take comma-separated lists (the bench's).
  void add_job_flags(CLI::App* cmd, bool bench_lists = false);
  void add_arch_flags(CLI::App* cmd, bool bench_lists);  // --arch, --buckets, --topology
  void add_timeout(CLI::App* cmd);       // each process's own
  void add_worker_flags(CLI::App* cmd);  // each worker's own: data folder, link, emulation
  void add_ps_link_flag(CLI::App* cmd);  // train's and bench's: --ps-link
  void add_arch_trials_flag(CLI::App* cmd);  // train's and bench's: --arch-trials
  // The job's settings as flag and text (net::JobConfig), and as a command line.
  std::vector<std::pair<std::string, std::string>> job_settings() const;
  std::vector<std::string> job_args() const;
  // A worker's own flags (and --timeout) as a command line.
  std::vector<std::string> worker_args() const;
  double timeout_ms() const;
  // A worker's settings from the job's (`job`, from the PS at `ps`): a flag the command
  // line `given` set to another value is refused (InvalidInput naming both), the others
  // are taken through the same checks as a command line's.
  void adopt(const net::JobConfig& job, const CLI::App& given, const std::string& ps);

  optim::SgdOptions sgd() const;
  // "ps", "allreduce[:RULE]" or "gossip[:TOPOLOGY]" (the bench's list entries): arch, and
  // buckets or topology.
  // InvalidInput otherwise.
  void set_arch(const std::string& spec);
  ps::ServerOptions server_options() const;
  worker::WorkerOptions worker_options() const;  // rank and --ps left to the caller
};

// "ps,allreduce,allreduce:ddp" as its entries (the bench's --arch); InvalidInput on an empty one.
std::vector<std::string> split_arch_list(const std::string& list);
// "bsp,ssp:2,asp" as its modes (the bench's --sync); InvalidInput on an empty one.
std::vector<std::string> split_sync_list(const std::string& list);

// The PS's checkpoint flags (ps/checkpoint.h), for `dynacomm ps` and `dynacomm train`.
struct Checkpointing {
  std::string dir;    // --checkpoint-dir (ps), or --resume's folder
  std::string every;  // "50" (iterations) or a duration ("2min"); "": none
  int keep = 3;
  bool resume = false;
  // dir_flag: `ps` takes --checkpoint-dir and a --resume switch; `train` writes into its
  // run folder and takes --resume DIR.
  void add_flags(CLI::App* cmd, bool dir_flag);
  void apply(ps::ServerOptions& o) const;  // InvalidInput naming a bad value
  // The same, as `dynacomm ps` arguments.
  std::vector<std::string> ps_args() const;
};

}  // namespace dynacomm::cli
