// `dynacomm train`: the embedded default (a PS and N workers as processes on this
// machine, emulated edge links), or `--local` (one process, no PS).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "cli/cluster_job.h"
#include "cli/commands.h"
#include "cli/job_flags.h"
#include "cluster/local_cluster.h"
#include "model/model_names.h"
#include "net/curve.h"
#include "ps/checkpoint.h"
#include "report/run_folder.h"
#include "train/local_training.h"
#include "worker/codec_state.h"

namespace dynacomm::cli {

namespace {

struct TrainFlags {
  std::vector<std::string> links;      // per-worker overrides "R:down,up,latency"
  std::vector<std::string> slowdowns;  // and "R:FACTOR" (--worker-slowdown)
  bool local = false;
  int threads = 0;
  std::string out;
  int max_restarts = 0;
  bool curve = false;
  Checkpointing checkpoints;
  JobFlags job;
};

std::string default_run_dir(const JobFlags& j, bool local) {
  char stamp[32];
  std::time_t t = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  const std::string model =
      model::is_model_file(j.model) ? std::filesystem::path(j.model).stem().string() : j.model;
  return std::string("runs/") + stamp + "-" + model + "-" + (local ? "local" : j.scheduler);
}

void run_local(const TrainFlags& f) {
  train::LocalTrainingOptions o;
  o.model = f.job.model;
  o.epochs = f.job.epochs;
  o.iterations = f.job.iterations;
  o.batch = f.job.batch;
  o.sgd = f.job.sgd();
  o.seed = f.job.seed;
  o.threads = f.threads;
  o.data_dir = f.job.data_dir;
  o.train_samples = f.job.train_samples;
  o.test_samples = f.job.test_samples;
  o.out_dir = f.out.empty() ? default_run_dir(f.job, true) : f.out;
  o.interactive = ::isatty(STDERR_FILENO);
  train::TrainingResult r = train::train_local(o, std::cerr);
  std::printf("model %s: test accuracy %.2f%% after %d epoch(s), %lld iterations, %.1f s\n",
              o.model.c_str(), 100 * r.test_accuracy, static_cast<int>(r.epochs.size()),
              static_cast<long long>(r.iterations), r.train_seconds);
  std::printf("results in %s\n", o.out_dir.c_str());
}

void run_cluster(const TrainFlags& f) {
  const JobFlags& j = f.job;
  const std::vector<JobFlags> per_worker = per_worker_flags(j, f.links, f.slowdowns);
  validate_job(j, per_worker);  // every flag here, before any process starts
  const std::string run_dir = f.out.empty() ? default_run_dir(j, false) : f.out;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = f.threads > 0 ? f.threads : std::max(1, cores / j.workers);
  const std::string how =
      j.arch == "allreduce" ? "all-reduce over a ring, " + j.buckets + " buckets"
      : j.arch == "gossip"  ? "gossip (D-PSGD) on a " + j.topology
      : j.arch == "auto"    ? (j.arch_trials > 0 ? "the fastest architecture in trials"
                                                 : "the architecture predicted fastest")
                            : "scheduler " + j.scheduler;
  std::fprintf(stderr,
               "dynacomm: %s%d workers on this machine, model %s, %s, "
               "links %s down / %s up, %s latency; results in %s\n",
               j.arch != "ps" ? "" : "1 PS + ", j.workers, j.model.c_str(), how.c_str(),
               j.down.c_str(), (j.up.empty() ? j.down : j.up).c_str(), j.latency.c_str(),
               run_dir.c_str());
  for (int r = 0; r < j.workers; ++r) {
    const JobFlags& w = per_worker[static_cast<std::size_t>(r)];
    if (w.down != j.down || w.up != j.up || w.latency != j.latency)
      std::fprintf(stderr, "dynacomm: worker %d's link: %s down / %s up, %s latency\n", r,
                   w.down.c_str(), w.up.c_str(), w.latency.c_str());
  }
  cluster::install_interrupt_handler();
  {
    ps::ServerOptions probe;  // a bad --checkpoint-every fails before anything starts
    f.checkpoints.apply(probe);
  }
  JobControl control;
  control.max_restarts = f.max_restarts;
  control.graceful_interrupt = std::chrono::seconds(60);
  // The PS checkpoints into the run folder (or a resumed job's folder): when --checkpoint-
  // every says, and always at the end, Ctrl-C included.
  Checkpointing checkpoints = f.checkpoints;
  if (checkpoints.dir.empty()) {
    checkpoints.dir = run_dir + "/checkpoints";
    ::mkdir(run_dir.c_str(), 0755);
    ::mkdir(checkpoints.dir.c_str(), 0755);
    // A new job in a run folder used before: its metrics and weights replace the earlier
    // run's, and so do its checkpoints (kept by iteration, an old one would outrank them
    // and be what a failed PS resumes from).
    const std::vector<std::string> old = ps::checkpoint_files(checkpoints.dir);
    for (const std::string& file : old) std::remove(file.c_str());
    if (!old.empty())
      std::fprintf(stderr, "dynacomm: removed %zu checkpoints of an earlier run from %s\n",
                   old.size(), checkpoints.dir.c_str());
    for (int r = 0; r < j.workers; ++r)  // so are the workers' compression states
      std::remove(worker::codec_state_path(run_dir, r).c_str());
  } else {
    // Resumed into another folder: the workers' compression states (in the folder the
    // checkpoints are in) come along, so they take up where they stopped.
    const std::string from = checkpoints.dir.substr(0, checkpoints.dir.find_last_of('/'));
    ::mkdir(run_dir.c_str(), 0755);
    for (int r = 0; r < j.workers && from != checkpoints.dir; ++r) {
      std::ifstream in(worker::codec_state_path(from, r), std::ios::binary);
      if (!in || from == run_dir) continue;
      std::ofstream(worker::codec_state_path(run_dir, r), std::ios::binary) << in.rdbuf();
    }
  }
  control.ps_args = checkpoints.ps_args();
  control.checkpoint_dir = checkpoints.dir;
  if (f.curve) {  // keys for this job: the PS's, one per worker, and the allow-list
    const std::string keys = run_dir + "/keys";
    ::mkdir(run_dir.c_str(), 0755);
    ::mkdir(keys.c_str(), 0700);
    net::write_keypair(keys + "/ps", net::make_keypair());
    std::ofstream allow(keys + "/allow.txt");
    for (int r = 0; r < j.workers; ++r) {
      const std::string w = keys + "/worker-" + std::to_string(r);
      const net::CurveKeyPair k = net::make_keypair();
      net::write_keypair(w, k);
      allow << r << " " << k.public_key << "\n";
      control.worker_args.push_back({"--key", w + ".key", "--ps-key", keys + "/ps.pub"});
    }
    control.ps_args.insert(control.ps_args.end(),
                           {"--key", keys + "/ps.key", "--allow", keys + "/allow.txt"});
  }
  const RunSummary s = run_cluster_job(j, per_worker, run_dir, threads, nullptr, {}, control);
  const worker::TimeToAccuracy& target = s.time_to_accuracy;
  if (target.reached()) std::printf("%s\n", time_to_accuracy_line(target).c_str());
  if (s.interrupted_at >= 0 && !target.reached()) {
    std::printf(
        "interrupted before iteration %lld: test accuracy %.2f%% of the weights then; "
        "metrics, summary and weights in %s, the PS's checkpoint in %s (to go on: the same "
        "flags and --resume %s)\n",
        static_cast<long long>(s.interrupted_at), 100 * s.test_accuracy, run_dir.c_str(),
        checkpoints.dir.c_str(), checkpoints.dir.c_str());
    std::exit(130);
  }
  if (s.first_iteration > 0)  // resumed, or rank 0 rejoined: this run did the rest
    std::printf("test accuracy %.2f%% after %lld iterations (this run: from iteration %lld)\n",
                100 * s.test_accuracy, static_cast<long long>(s.first_iteration + s.iterations),
                static_cast<long long>(s.first_iteration));
  else
    std::printf("test accuracy %.2f%% after %lld iterations\n", 100 * s.test_accuracy,
                static_cast<long long>(s.iterations));
  if (target.target > 0 && !target.reached())
    std::printf("the target test accuracy %.2f%% was not reached\n", 100 * target.target);
  const std::vector<std::string> speed = speed_report(s);
  std::printf("%s\n", speed.front().c_str());
  if (!s.scheduler_choice.empty())
    std::printf("--scheduler auto: %s\n", s.scheduler_choice.c_str());
  if (s.arch_choice.is_object())
    std::printf("--arch auto: %s\n", s.arch_choice.value("text", "").c_str());
  for (std::size_t i = 1; i < speed.size(); ++i) std::printf("%s\n", speed[i].c_str());
  const double pred = s.predicted_ms;
  // Under BSP the slowest worker sets the pace; worker 0's own figures above are for its
  // link and device.
  if (const double slowest = s.predicted_slowest_ms; slowest > 1.05 * pred)
    std::printf(
        "the slowest worker's link or device sets the pace: its plan is predicted %.1f ms "
        "per iteration (worker 0's own: %.1f ms)\n",
        slowest, pred);
  if (!s.plan_changes.empty()) {
    std::printf(
        "worker 0 re-planned %zu time(s) while training (--replan %s); the prediction "
        "above is the first plan's:\n",
        s.plan_changes.size(), j.replan.c_str());
    for (const auto& c : s.plan_changes)
      std::printf("  plan %d from iteration %lld: %s (predicted %.1f -> %.1f ms)\n", c.plan_id,
                  static_cast<long long>(c.iteration), c.why.c_str(), c.predicted_current_ms,
                  c.predicted_best_ms);
  }
  std::printf("results in %s\n", run_dir.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto f = std::make_shared<TrainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a CNN on Fashion-MNIST: a PS and edge workers on this machine, or --local");
  cmd->add_flag("--local", f->local, "Train in this one process, without a parameter server");
  cmd->add_option("--threads", f->threads, "Compute threads per process (0: cores / workers)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--out", f->out, "Run folder (default: a fresh folder under runs/)");
  add_worker_overrides(cmd, f->links, f->slowdowns, "");
  cmd->add_flag("--curve", f->curve,
                "Encrypt and authenticate the job's connections with CURVE (keys made for this "
                "job in the run folder's keys/)");
  cmd->add_option("--max-restarts", f->max_restarts,
                  "Start a worker that fails again, up to this many times in all; it rejoins the "
                  "running job (like torchrun's --max-restarts). A PS that fails is started "
                  "again from its newest checkpoint, with every worker")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  f->checkpoints.add_flags(cmd, /*dir_flag=*/false);
  // A job under `train` keeps what it learned: checkpoints every 5 min unless told.
  cmd->get_option("--checkpoint-every")->default_str("5min");
  f->job.add_job_flags(cmd);
  f->job.add_timeout(cmd);
  f->job.add_worker_flags(cmd);
  f->job.add_ps_link_flag(cmd);
  f->job.add_arch_trials_flag(cmd);
  cmd->callback([f]() {
    if (f->local && (f->job.target_accuracy > 0 || f->job.eval_every > 0))
      throw InvalidInput(
          "train: --target-accuracy and --eval-every are for a job with a PS, not --local");
    if (f->local && (f->checkpoints.resume || !f->checkpoints.every.empty()))
      throw InvalidInput(
          "train: --resume and --checkpoint-every are for a job with a PS, not --local");
    if (f->checkpoints.resume && f->job.arch != "ps")  // else it would start afresh
      throw InvalidInput(
          "train: --resume goes on from a PS's checkpoint; --arch " + f->job.arch +
          (f->job.arch == "auto" ? " may choose an architecture without one" : " has no PS") +
          ": give --arch ps");
    if (f->local && (f->job.compress != "none" || f->job.compress_pulls != "none"))
      throw InvalidInput(
          "train: --compress and --compress-pulls compress what travels to and from a PS; "
          "--local has none");
    if (f->checkpoints.every.empty()) f->checkpoints.every = "5min";
    if (f->local)
      run_local(*f);
    else
      run_cluster(*f);
  });
}

}  // namespace dynacomm::cli
