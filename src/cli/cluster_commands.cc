// `dynacomm worker`: one edge worker process; `dynacomm train` starts them.
#include <unistd.h>

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
#include "report/chrome_trace.h"
#include "report/run_folder.h"
#include "worker/metrics.h"

namespace dynacomm::cli {

void add_worker_command(CLI::App& app) {
  struct Flags {
    JobFlags job;
    std::string ps;
    int rank = 0;
    int threads = 1;
    std::string out;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("worker", "Run one edge worker against a PS");
  cmd->add_option("--ps", f->ps, "The PS endpoint, e.g. tcp://10.0.0.1:7070")
      ->check(endpoint_check())
      ->required();
  cmd->add_option("--rank", f->rank, "This worker's rank, 0..workers-1")
      ->check(CLI::Range(0, kMaxWorkers - 1))
      ->required();
  cmd->add_option("--threads", f->threads, "Compute threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option(
      "--out", f->out,
      "Run folder (rank 0 writes metrics.csv, summary.json, weights.bin; every rank its trace)");
  // A worker on its own runs over the real network: nothing emulated unless asked (`train`
  // passes its --net to the workers it starts).
  f->job.net = "none";
  f->job.add_model_and_optimizer(cmd);
  f->job.add_worker_flags(cmd);
  cmd->callback([f]() {
    worker::WorkerOptions o = f->job.worker_options();
    o.ps = f->ps;
    o.rank = f->rank;
    o.threads = f->threads;
    o.interactive = ::isatty(STDERR_FILENO);
    o.out_dir = f->out;
    worker::WorkerResult r = worker::run_worker(o, std::cerr);
    if (f->rank != 0 || f->out.empty()) return;
    report::RunFolder run(f->out);
    worker::write_metrics_csv(run, r);
    run.write_floats("weights.bin", r.final_weights);
    if (r.rotation_log) run.write_json("rotation.json", to_json(*r.rotation_log));
    run.write_json("summary.json", to_json(make_summary(f->job, r)));
  });
}

}  // namespace dynacomm::cli
