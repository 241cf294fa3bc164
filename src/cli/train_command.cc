// `dynacomm train`: the embedded default (a PS and N workers as processes on this
// machine, emulated edge links), or `--local` (one process, no PS).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/job_flags.h"
#include "cluster/local_cluster.h"
#include "cluster/netns.h"
#include "cluster/status.h"
#include "report/run_folder.h"
#include "train/local_training.h"

namespace dynacomm::cli {

namespace {

struct TrainFlags {
  std::vector<std::string> links;  // per-worker overrides "R:down,up,latency"
  bool local = false;
  int threads = 0;
  std::string out;
  JobFlags job;
};

std::string self_exe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error("cannot find the dynacomm executable (/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(n));
}

std::string default_run_dir(const JobFlags& j, bool local) {
  char stamp[32];
  std::time_t t = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  return std::string("runs/") + stamp + "-" + j.model + "-" + (local ? "local" : j.scheduler);
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

// One Chrome trace for the run: every worker's and the PS's events on the shared
// monotonic clock,
// shifted so the first event is at 0.
void merge_traces(const report::RunFolder& run, int workers) {
  nlohmann::json events = nlohmann::json::array();
  double t0 = -1;
  std::vector<std::string> parts;
  for (int r = 0; r < workers; ++r) parts.push_back("trace-worker" + std::to_string(r) + ".json");
  parts.push_back("trace-ps.json");
  for (const std::string& name : parts) {
    std::ifstream in(run.file(name));
    if (!in) continue;
    nlohmann::json part = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!part.is_object() || !part.contains("traceEvents")) continue;
    for (auto& e : part["traceEvents"]) {
      if (e.contains("ts") && (t0 < 0 || e["ts"].get<double>() < t0)) t0 = e["ts"].get<double>();
      events.push_back(e);
    }
    std::remove(run.file(name).c_str());
  }
  for (auto& e : events)
    if (e.contains("ts")) e["ts"] = e["ts"].get<double>() - t0;
  run.write_json("trace.json", {{"traceEvents", events}, {"displayTimeUnit", "ms"}});
}

void run_cluster(const TrainFlags& f) {
  const JobFlags& j = f.job;
  (void)j.worker_options();  // validate every flag here, before any process starts
  std::vector<JobFlags> per_worker(static_cast<std::size_t>(j.workers), j);
  for (const std::string& spec : f.links) {  // "R:down,up,latency", e.g. 1:10mbit,2mbit,50ms
    const auto colon = spec.find(':');
    std::vector<std::string> parts;
    std::stringstream rest(colon == std::string::npos ? "" : spec.substr(colon + 1));
    for (std::string p; std::getline(rest, p, ',');) parts.push_back(p);
    int rank = -1;
    try {
      rank = std::stoi(spec.substr(0, colon));
    } catch (const std::exception&) {
    }
    if (colon == std::string::npos || parts.size() != 3 || rank < 0 || rank >= j.workers)
      throw InvalidInput("--link '" + spec + "': expected R:down,up,latency with R in 0.." +
                         std::to_string(j.workers - 1) + ", e.g. 1:10mbit,2mbit,50ms");
    JobFlags& w = per_worker[static_cast<std::size_t>(rank)];
    w.down = parts[0];
    w.up = parts[1];
    w.latency = parts[2];
    (void)w.worker_options();  // validates the three values, naming the bad one
  }
  const std::string run_dir = f.out.empty() ? default_run_dir(j, false) : f.out;
  report::RunFolder run(run_dir);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = f.threads > 0 ? f.threads : std::max(1, cores / j.workers);
  std::fprintf(stderr,
               "dynacomm: 1 PS + %d workers on this machine, model %s, scheduler %s, "
               "links %s down / %s up, %s latency; results in %s\n",
               j.workers, j.model.c_str(), j.scheduler.c_str(), j.down.c_str(),
               (j.up.empty() ? j.down : j.up).c_str(), j.latency.c_str(), run_dir.c_str());
  for (int r = 0; r < j.workers; ++r) {
    const JobFlags& w = per_worker[static_cast<std::size_t>(r)];
    if (w.down != j.down || w.up != j.up || w.latency != j.latency)
      std::fprintf(stderr, "dynacomm: worker %d's link: %s down / %s up, %s latency\n", r,
                   w.down.c_str(), w.up.c_str(), w.latency.c_str());
  }
  cluster::install_interrupt_handler();
  // --net netns: the PS and each worker in their own network namespace, the links shaped
  // by tbf; removed again when this function leaves, however it leaves.
  std::unique_ptr<cluster::NetnsTopology> topology;
  if (j.net == "netns") {
    std::vector<cluster::EdgeLinkRates> rates;
    for (const JobFlags& w : per_worker) {
      const worker::WorkerOptions wo = w.worker_options();
      rates.push_back({wo.link.down_bps, wo.link.up_bps});
    }
    topology = std::make_unique<cluster::NetnsTopology>(j.workers, rates);
    std::fprintf(stderr, "dynacomm: network namespaces %s-*: links shaped by tbf, latency added "
                 "in the transport\n", topology->prefix().c_str());
  }
  cluster::LocalCluster c(self_exe(), run_dir, std::chrono::seconds(30));
  std::vector<std::string> ps_args = j.optimizer_args();
  ps_args.insert(ps_args.end(), {"--trace", run.file("trace-ps.json")});
  const std::string endpoint =
      topology ? c.start_ps(ps_args, topology->ps_namespace(), "tcp://0.0.0.0:0")
               : c.start_ps(ps_args);
  const std::string port = endpoint.substr(endpoint.rfind(':'));
  for (int r = 0; r < j.workers; ++r) {
    std::vector<std::string> args = per_worker[static_cast<std::size_t>(r)].worker_args();
    const std::string ps =
        topology ? "tcp://" + cluster::NetnsTopology::ps_address(r) + port : endpoint;
    args.insert(args.end(), {"--ps", ps, "--threads", std::to_string(threads)});
    args.insert(args.end(), {"--out", run_dir});
    c.start_worker(r, args, /*show_output=*/false,  // logs: run_dir/worker-R.log
                   topology ? topology->worker_namespace(r) : "");
  }
  // One display for the whole cluster: redrawn in place on a terminal, a line every 30 s
  // elsewhere.
  const bool interactive = ::isatty(STDERR_FILENO);
  auto last_line = std::chrono::steady_clock::now();
  std::size_t drawn = 0;
  auto show = [&](bool final) {
    const std::string line = cluster::render_status(cluster::read_statuses(run_dir, j.workers));
    if (interactive) {
      std::fprintf(stderr, "\r%s%s", line.c_str(),
                   std::string(drawn > line.size() ? drawn - line.size() : 0, ' ').c_str());
      drawn = line.size();
      if (final) std::fprintf(stderr, "\n");
    } else if (final || std::chrono::steady_clock::now() - last_line > std::chrono::seconds(30)) {
      std::fprintf(stderr, "%s\n", line.c_str());
      last_line = std::chrono::steady_clock::now();
    }
  };
  try {
    c.wait([&] { show(false); });
  } catch (...) {
    if (interactive && drawn) std::fprintf(stderr, "\n");
    throw;
  }
  show(true);
  merge_traces(run, j.workers);
  for (int r = 0; r < j.workers; ++r)
    std::remove(run.file("status-worker" + std::to_string(r) + ".json").c_str());

  std::ifstream in(run.file("summary.json"));
  nlohmann::json s = nlohmann::json::parse(in);
  const double median = s["median_iteration_ms"], seq = s["predicted_sequential_ms"],
               pred = s["predicted_ms"];
  std::printf("test accuracy %.2f%% after %lld iterations\n",
              100 * s["test_accuracy"].get<double>(),
              static_cast<long long>(s["iterations"].get<std::int64_t>()));
  std::printf(
      "median iteration %.1f ms with %s (predicted %.1f ms); sequential would take %.1f ms "
      "(predicted): the plan is predicted %.2fx faster\n",
      median, j.scheduler.c_str(), pred, seq, pred > 0 ? seq / pred : 0.0);
  std::printf("results in %s\n", run_dir.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto f = std::make_shared<TrainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a CNN on Fashion-MNIST: a PS and edge workers on this machine, or --local");
  cmd->add_flag("--local", f->local, "Train in this one process, without a parameter server");
  cmd->add_option("--threads", f->threads, "Compute threads per process (0: cores / workers)")
      ->capture_default_str();
  cmd->add_option("--out", f->out, "Run folder (default: a fresh folder under runs/)");
  cmd->add_option("--link", f->links,
                  "Per-worker link override R:down,up,latency, e.g. 1:10mbit,2mbit,50ms "
                  "(repeatable)");
  f->job.add_model_and_optimizer(cmd);
  f->job.add_worker_flags(cmd);
  cmd->callback([f]() {
    if (f->local)
      run_local(*f);
    else
      run_cluster(*f);
  });
}

}  // namespace dynacomm::cli
