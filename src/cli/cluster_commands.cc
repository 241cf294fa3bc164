// `dynacomm worker`: one edge worker process; `dynacomm train` starts them.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/job_flags.h"
#include "cli/run_summary.h"
#include "data/fashion_mnist.h"
#include "data/npy_dataset.h"
#include "report/chrome_trace.h"
#include "report/run_folder.h"
#include "worker/gossip_worker.h"
#include "worker/join.h"
#include "worker/metrics.h"
#include "worker/ring_worker.h"

namespace dynacomm::cli {

namespace {

struct Flags {
  JobFlags job;
  std::string ps;
  int rank = 0;
  int threads = 1;
  std::string out;
  std::string key, ps_key;                    // CURVE
  std::string ring, ring_host = "127.0.0.1";  // --arch allreduce, gossip
};

// Rank 0 leaves the run's results in its folder.
void write_results(const Flags& f, const worker::WorkerResult& r) {
  if (f.rank != 0 || f.out.empty()) return;
  report::RunFolder run(f.out);
  worker::write_metrics_csv(run, r);
  run.write_floats("weights.bin", r.final_weights);
  if (!r.state_dict.empty()) run.write_text("model.pt", r.state_dict);  // torch.load reads it
  if (r.rotation_log) run.write_json("rotation.json", to_json(*r.rotation_log));
  run.write_json("summary.json", to_json(make_summary(f.job, r)));
}

void stop_on_sigterm() {
  // SIGTERM (the launcher's Ctrl-C): stop at the next iteration and save; again: now.
  std::signal(SIGTERM, [](int) {
    if (worker::stop_requested()) ::_exit(143);
    worker::request_stop();
  });
}

// --arch allreduce, gossip: no PS to ask; the job's settings are this command line's.
void run_peer_worker_command(const Flags& f) {
  if (f.ring.empty()) throw InvalidInput("--arch " + f.job.arch + ": --ring HOST:PORT is required");
  if (f.rank >= f.job.workers)
    throw InvalidInput("--rank " + std::to_string(f.rank) + ": the job has " +
                       std::to_string(f.job.workers) + " worker(s)");
  worker::WorkerOptions o = f.job.worker_options();
  o.rank = f.rank;
  o.ring_store = f.ring;
  o.ring_host = f.ring_host;
  o.threads = f.threads;
  o.interactive = ::isatty(STDERR_FILENO);
  o.out_dir = f.out;
  stop_on_sigterm();
  write_results(f, o.arch == "gossip" ? worker::run_gossip_worker(o, std::cerr)
                                      : worker::run_ring_worker(o, std::cerr));
}

}  // namespace

void add_worker_command(CLI::App& app) {
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("worker", "Run one edge worker against a PS");
  cmd->add_option("--ps", f->ps, "The PS endpoint, e.g. tcp://10.0.0.1:7070 (--arch ps)")
      ->check(endpoint_check());
  cmd->add_option(
      "--ring", f->ring,
      "--arch allreduce, gossip: rank 0's rendezvous store, HOST:PORT (rank 0 serves it "
      "there; every worker of the job is given the same)");
  cmd->add_option("--ring-host", f->ring_host,
                  "--arch allreduce, gossip: this worker's address, where the others reach it")
      ->capture_default_str();
  cmd->add_option("--rank", f->rank, "This worker's rank, 0..workers-1")
      ->check(CLI::Range(0, kMaxWorkers - 1))
      ->required();
  cmd->add_option("--threads", f->threads, "Compute threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option(
      "--out", f->out,
      "Run folder (rank 0 writes metrics.csv, summary.json, weights.bin, model.pt; every rank "
      "its trace)");
  cmd->add_option("--key", f->key, "This worker's CURVE key pair (dynacomm keygen); with --ps-key");
  cmd->add_option("--ps-key", f->ps_key, "The PS's CURVE public key (its .pub file) to pin");
  // A worker on its own runs over the real network: nothing emulated unless asked (`train`
  // passes its --net to the workers it starts).
  f->job.net = "none";
  f->job.add_job_flags(cmd);
  f->job.add_timeout(cmd);
  f->job.add_worker_flags(cmd);
  for (const auto& [flag, value] : f->job.job_settings())
    cmd->get_option(flag)->group("The job's settings (the PS's; one given here must agree)");
  cmd->callback([f, cmd]() {
    // This worker's own flags, checked before the PS is asked.
    (void)f->job.worker_options();
    if (f->job.arch != "ps") return run_peer_worker_command(*f);
    if (f->ps.empty())
      throw InvalidInput("--ps is required (or --arch allreduce/gossip with --ring)");
    try {
      data::check_dataset_dir(f->job.data_dir);
    } catch (const InvalidInput& e) {
      throw InvalidInput(std::string("--data-dir: ") + e.what());
    }
    auto check_rank = [&](const std::string& whose) {
      if (f->rank >= f->job.workers)
        throw InvalidInput("--rank " + std::to_string(f->rank) + ": " + whose + " has " +
                           std::to_string(f->job.workers) + " worker(s), ranks 0.." +
                           std::to_string(f->job.workers - 1));
    };
    if (cmd->count("--workers") > 0) check_rank("--workers says the job");
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(f->job.timeout_ms()));
    if (f->key.empty() != f->ps_key.empty())
      throw InvalidInput(
          "--key and --ps-key go together: CURVE needs this worker's key pair "
          "and the PS's public key");
    std::optional<net::CurveClient> curve;
    if (!f->key.empty())
      curve = net::CurveClient{net::read_keypair(f->key), net::read_public_key(f->ps_key)};
    const net::CurveClient* keys = curve ? &*curve : nullptr;
    // The job's settings come from the PS; a flag given here that says otherwise is refused,
    // and the PS tells the other workers at once.
    const net::JobConfig job = worker::ask_job_config(f->ps, f->rank, timeout, keys);
    try {
      f->job.adopt(job, *cmd, f->ps);
    } catch (const InvalidInput& e) {
      worker::tell_ps_failed(f->ps, f->rank, std::string("its settings differ: ") + e.what(), keys);
      throw;
    }
    check_rank("the job at " + f->ps);
    worker::WorkerOptions o = f->job.worker_options();
    o.ps = f->ps;
    o.rank = f->rank;
    o.threads = f->threads;
    o.interactive = ::isatty(STDERR_FILENO);
    o.out_dir = f->out;
    o.job_settings = f->job.job_settings();
    o.curve = curve;
    stop_on_sigterm();
    worker::WorkerResult r;
    try {
      r = worker::run_worker(o, std::cerr);
    } catch (const RemoteError&) {  // the PS's own word: it knows
      throw;
    } catch (const std::exception& e) {
      worker::tell_ps_failed(f->ps, f->rank, e.what(), keys);
      throw;
    }
    write_results(*f, r);
  });
}

}  // namespace dynacomm::cli
