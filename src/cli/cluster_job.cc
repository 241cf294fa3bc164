#include "cli/cluster_job.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "base/error.h"
#include "base/timed_replay.h"
#include "cli/app.h"
#include "cli/arch_choice.h"
#include "cluster/local_cluster.h"
#include "cluster/status.h"
#include "net/free_port.h"
#include "net/shared_shaper.h"
#include "plan/model/quantity.h"
#include "plan/replan/trace_file.h"
#include "ps/checkpoint.h"
#include "ps/sync_policy.h"
#include "report/run_folder.h"
#include "report/trace_merge.h"

namespace dynacomm::cli {

namespace {

// One Chrome trace for the run (report/trace_merge.h): the processes share this machine's
// steady clock; the parts are removed once merged.
void merge_traces(const report::RunFolder& run, int workers) {
  std::vector<std::string> parts;
  for (int r = 0; r < workers; ++r)
    parts.push_back(run.file("trace-worker" + std::to_string(r) + ".json"));
  parts.push_back(run.file("trace-ps.json"));
  parts.erase(std::remove_if(parts.begin(), parts.end(),
                             [](const std::string& p) { return !std::ifstream(p); }),
              parts.end());
  run.write_json("trace.json", report::merge_traces(parts, report::Clocks::kShared));
  for (const std::string& p : parts) std::remove(p.c_str());
}

}  // namespace

std::vector<JobFlags> per_worker_flags(const JobFlags& j, const std::vector<std::string>& links,
                                       const std::vector<std::string>& slowdowns) {
  std::vector<JobFlags> per_worker(static_cast<std::size_t>(j.workers), j);
  for (const std::string& spec : links) {  // "R:down,up,latency", e.g. 1:10mbit,2mbit,50ms
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
    try {
      (void)w.worker_options();  // validates the three values, naming the bad one
    } catch (const InvalidInput& e) {
      throw InvalidInput("--link '" + spec + "': " + e.what());
    }
  }
  for (const std::string& spec : slowdowns) {  // "R:FACTOR", e.g. 3:8
    const auto colon = spec.find(':');
    int rank = -1;
    double factor = 0;
    char* stop = nullptr;
    if (colon != std::string::npos) {
      const std::string r = spec.substr(0, colon), x = spec.substr(colon + 1);
      const long parsed = std::strtol(r.c_str(), &stop, 10);
      if (!r.empty() && *stop == 0 && parsed >= 0 && parsed < j.workers)
        rank = static_cast<int>(parsed);
      factor = std::strtod(x.c_str(), &stop);
      if (x.empty() || *stop != 0) factor = 0;
    }
    if (rank < 0 || !(factor >= 1 && factor <= 1000))
      throw InvalidInput("--worker-slowdown '" + spec + "': expected R:FACTOR with R in 0.." +
                         std::to_string(j.workers - 1) + " and FACTOR from 1 to 1000, e.g. 3:8");
    per_worker[static_cast<std::size_t>(rank)].device_slowdown = factor;
  }
  return per_worker;
}

void add_worker_overrides(CLI::App* cmd, std::vector<std::string>& links,
                          std::vector<std::string>& slowdowns, const std::string& when) {
  cmd->add_option("--link", links,
                  when +
                      "Per-worker link override R:down,up,latency, e.g. 1:10mbit,2mbit,50ms "
                      "(repeatable)");
  cmd->add_option("--worker-slowdown", slowdowns,
                  when +
                      "Per-worker device slowdown R:FACTOR, e.g. 3:8 (worker 3 computes 8x "
                      "slower; repeatable)");
}

namespace {

// A trace file's path for a child process (which may run elsewhere: absolute).
std::string absolute(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) throw InvalidInput("trace file " + path + ": cannot be opened");
  std::string out(real);
  std::free(real);
  return out;
}

// Starts the PS (--arch ps) and the workers, each in its namespace under --net netns.
void start_processes(cluster::LocalCluster& c, const JobFlags& j,
                     const std::vector<JobFlags>& per_worker, const std::string& run_dir,
                     int threads, cluster::NetnsTopology* topology, const JobControl& control,
                     double origin_ms) {
  const bool ring = j.arch != "ps";  // allreduce, gossip: peer to peer
  if (ring && !control.worker_args.empty())
    throw InvalidInput("--arch " + j.arch +
                       ": the workers talk over Gloo's TCP, without CURVE (yet)");
  const report::RunFolder run(run_dir);
  std::string endpoint, port, store;
  if (ring) {  // rank 0 serves the rendezvous; a fresh namespace has every port free
    store = topology ? cluster::NetnsTopology::worker_address(0) + ":29500"
                     : "127.0.0.1:" + std::to_string(net::free_tcp_port("127.0.0.1"));
  } else {
    std::vector<std::string> ps_args = j.job_args();  // the workers take them from the PS
    ps_args.insert(ps_args.end(), {"--timeout", j.timeout, "--trace", run.file("trace-ps.json")});
    ps_args.insert(ps_args.end(), control.ps_args.begin(), control.ps_args.end());
    // --net netns: the PS listens on its namespace's address, reachable from this machine's
    // namespaces only; without keys, plaintext is a choice said here.
    const bool keys = std::find(ps_args.begin(), ps_args.end(), "--key") != ps_args.end();
    if (topology && !keys) ps_args.push_back("--insecure");
    endpoint = topology ? c.start_ps(ps_args, topology->server_namespace(), "tcp://0.0.0.0:0")
                        : c.start_ps(ps_args);
    port = endpoint.substr(endpoint.rfind(':'));
  }
  for (int r = 0; r < j.workers; ++r) {
    JobFlags w = per_worker[static_cast<std::size_t>(r)];
    w.trace_origin_ms = origin_ms;
    w.link_trace = absolute(w.link_trace);
    w.device_slowdown_trace = absolute(w.device_slowdown_trace);
    std::vector<std::string> args = w.worker_args();
    if (ring) {
      const std::vector<std::string> job = w.job_args();
      args.insert(args.end(), job.begin(), job.end());
      args.insert(args.end(), {"--ring", store, "--ring-host",
                               topology ? cluster::NetnsTopology::worker_address(r) : "127.0.0.1"});
    } else {
      args.insert(args.end(),
                  {"--ps", topology ? "tcp://" + topology->server_address(r) + port : endpoint});
    }
    args.insert(args.end(), {"--threads", std::to_string(threads), "--out", run_dir});
    if (static_cast<std::size_t>(r) < control.worker_args.size())
      args.insert(args.end(), control.worker_args[static_cast<std::size_t>(r)].begin(),
                  control.worker_args[static_cast<std::size_t>(r)].end());
    c.start_worker(r, args, /*show_output=*/false,  // logs: run_dir/worker-R.log
                   topology ? topology->worker_namespace(r) : "");
  }
}

}  // namespace

void validate_job(const JobFlags& job, const std::vector<JobFlags>& per_worker) {
  if (job.arch == "auto") {  // one that fits is enough (cli/arch_choice.h)
    (void)architectures_that_fit(job, per_worker);
    return;
  }
  ps::ServerOptions server = job.server_options();
  server.validate();
  for (std::size_t r = 0; r < per_worker.size(); ++r) {
    worker::WorkerOptions o = per_worker[r].worker_options();
    o.ps = "tcp://127.0.0.1:0";    // the launcher's; only its presence is checked
    o.ring_store = "127.0.0.1:1";  // the same (--arch allreduce, gossip)
    o.rank = static_cast<int>(r);
    o.validate();
    const bool same_as_first = r > 0 && per_worker[r].model == per_worker[0].model &&
                               per_worker[r].data_dir == per_worker[0].data_dir;
    if (!same_as_first) o.check_model_fits_data();  // once: it loads the training set
  }
}

std::vector<cluster::EdgeLinkRates> link_rates(const std::vector<JobFlags>& per_worker) {
  std::vector<cluster::EdgeLinkRates> rates;
  for (const JobFlags& w : per_worker) {
    const worker::WorkerOptions wo = w.worker_options();
    rates.push_back({wo.link.down_bps, wo.link.up_bps});
  }
  return rates;
}

cluster::CloudLinkRates cloud_rates(const JobFlags& job) {
  if (job.ps_link.empty()) return {};
  if (job.net == "none")
    throw InvalidInput("--ps-link " + job.ps_link +
                       ": with --net none the links are the real ones; give --net user or netns");
  const auto comma = job.ps_link.find(',');
  const double in = plan::parse_bandwidth_bps(job.ps_link.substr(0, comma));
  return {in, comma == std::string::npos
                  ? in
                  : plan::parse_bandwidth_bps(job.ps_link.substr(comma + 1))};
}

namespace {
// run_cluster_job with an architecture chosen.
RunSummary run_chosen_job(const JobFlags& j, const std::vector<JobFlags>& per_worker,
                          const std::string& run_dir, int threads, cluster::NetnsTopology* topology,
                          const cluster::StatusStyle& style, const JobControl& control);

// A trial's flags: `arch`, the warm-up and `trials` iterations, no target, and its one
// evaluation (at the end) on 256 test images at most: its accuracy is not what it is for.
JobFlags trial_flags(JobFlags f, const std::string& arch, int trials) {
  f.arch = arch;
  f.iterations = f.warmup + trials;
  f.epochs = 1;
  f.eval_every = 0;
  f.target_accuracy = 0;
  f.test_samples = f.test_samples > 0 ? std::min<std::int64_t>(f.test_samples, 256) : 256;
  return f;
}

// --arch auto's trials (cli/arch_choice.h): every candidate predicted within 2x of the
// fastest runs a short job of its own in run_dir/trial-ARCH, on the same links and keys
// (no checkpoints, no restarts; its log, metrics and summary are kept, its weights not);
// the fastest median measured is chosen. A trial that fails
// is said and left out; none measured: the prediction's choice stands.
void try_architectures(plan::ArchitectureChoice& c, JobFlags& chosen,
                       std::vector<JobFlags>& chosen_workers, const std::string& run_dir,
                       int threads, cluster::NetnsTopology* topology, const JobControl& control) {
  if (chosen.arch_trials <= 0) return;
  double fastest = c.predictions.front().ms;
  for (const plan::ArchitecturePrediction& p : c.predictions) fastest = std::min(fastest, p.ms);
  std::vector<plan::ArchitecturePrediction*> near;
  for (plan::ArchitecturePrediction& p : c.predictions)
    if (p.ms <= 2 * fastest) near.push_back(&p);
  if (near.size() < 2) return;
  JobControl trial;  // the job's keys, nothing else (its checkpoints are the job's own)
  trial.worker_args = control.worker_args;
  for (std::size_t i = 0; i + 1 < control.ps_args.size(); ++i)
    if (control.ps_args[i] == "--key" || control.ps_args[i] == "--allow")
      trial.ps_args.insert(trial.ps_args.end(), {control.ps_args[i], control.ps_args[i + 1]});
  trial.stop_at_target = false;
  const plan::ArchitecturePrediction* best = nullptr;
  for (plan::ArchitecturePrediction* p : near) {
    if (cluster::interrupt_requested())
      throw Error("interrupted during --arch auto's trials: nothing trained yet");
    std::fprintf(stderr, "dynacomm: --arch auto: trying %s for %d iterations after its warm-up\n",
                 p->arch.c_str(), chosen.arch_trials);
    std::vector<JobFlags> workers;
    for (const JobFlags& w : chosen_workers)
      workers.push_back(trial_flags(w, p->arch, chosen.arch_trials));
    const std::string dir = run_dir + "/trial-" + p->arch;
    try {
      const RunSummary s =
          run_chosen_job(trial_flags(chosen, p->arch, chosen.arch_trials), workers, dir, threads,
                         topology, {"trial " + p->arch, 0, 0}, trial);
      p->measured_ms = s.median_iteration_ms;
      for (const char* weights : {"/weights.bin", "/model.pt"})  // a few iterations' worth
        std::remove((dir + weights).c_str());
    } catch (const Error& e) {
      if (cluster::interrupt_requested()) throw;
      std::fprintf(stderr, "dynacomm: --arch auto: the trial of %s failed (%s); not chosen\n",
                   p->arch.c_str(), e.what());
      continue;
    }
    if (p->measured_ms > 0 && (!best || p->measured_ms < best->measured_ms)) best = p;
  }
  if (!best) return;
  c.chosen = chosen.arch = best->arch;
  for (JobFlags& w : chosen_workers) w.arch = best->arch;
  std::fprintf(stderr, "dynacomm: --arch auto: %s\n", c.text().c_str());
}
}  // namespace

RunSummary run_cluster_job(const JobFlags& j, const std::vector<JobFlags>& per_worker,
                           const std::string& run_dir, int threads,
                           cluster::NetnsTopology* topology, const cluster::StatusStyle& style,
                           const JobControl& control) {
  if (j.arch != "auto")
    return run_chosen_job(j, per_worker, run_dir, threads, topology, style, control);
  JobFlags chosen = j;
  std::vector<JobFlags> chosen_workers = per_worker;
  plan::ArchitectureChoice c = choose_job_architecture(chosen, chosen_workers, threads);
  try_architectures(c, chosen, chosen_workers, run_dir, threads, topology, control);
  RunSummary s = run_chosen_job(chosen, chosen_workers, run_dir, threads, topology, style, control);
  nlohmann::json predictions = nlohmann::json::array();
  for (const plan::ArchitecturePrediction& p : c.predictions) {
    predictions.push_back({{"arch", p.arch}, {"predicted_ms", p.ms}, {"how", p.how}});
    if (p.measured_ms > 0) predictions.back()["measured_ms"] = p.measured_ms;
  }
  s.arch_choice = {{"chosen", c.chosen}, {"predictions", predictions}, {"text", c.text()}};
  report::RunFolder(run_dir).write_json("summary.json", to_json(s));
  return s;
}

namespace {

RunSummary run_chosen_job(const JobFlags& j, const std::vector<JobFlags>& per_worker,
                          const std::string& run_dir, int threads, cluster::NetnsTopology* topology,
                          const cluster::StatusStyle& style, const JobControl& control) {
  const int max_restarts = control.max_restarts;
  validate_job(j, per_worker);  // every flag, before any process starts
  (void)cloud_rates(j);         // --ps-link only with --net netns
  // --net netns: the PS and each worker in their own network namespace, the links shaped
  // by tbf; a topology made here is removed when this function leaves, however it leaves.
  std::unique_ptr<cluster::NetnsTopology> own;
  if (j.net == "netns" && !topology) {
    own =
        std::make_unique<cluster::NetnsTopology>(j.workers, link_rates(per_worker), cloud_rates(j));
    topology = own.get();
    std::fprintf(stderr,
                 "dynacomm: network namespaces %s-*: links shaped by tbf, latency added "
                 "in the transport\n",
                 topology->prefix().c_str());
  }
  if (j.net != "netns") topology = nullptr;
  // Traces count from the job's start, on the steady clock all processes share; paths are
  // made absolute for the children. Under netns this process changes the tbf rates.
  const auto origin = std::chrono::steady_clock::now();
  const double origin_ms =
      std::chrono::duration<double, std::milli>(origin.time_since_epoch()).count();
  std::unique_ptr<TimedReplay> tc_replay;
  if (topology && !j.link_trace.empty()) {
    const plan::LinkTrace trace = plan::load_link_trace(j.link_trace);
    trace.check_workers(j.workers);
    std::vector<TimedReplay::Step> steps;
    for (int r = 0; r < j.workers; ++r)
      for (const plan::LinkTracePoint& p : trace.for_worker(r))
        steps.push_back(
            {p.time_s, [topology, r, p] { topology->set_rates(r, p.down_bps, p.up_bps); }});
    tc_replay = std::make_unique<TimedReplay>(origin, std::move(steps));
  }
  report::RunFolder run(run_dir);
  // The light `dynacomm`: the PS runs without libtorch, the workers in dynacomm-compute.
  cluster::LocalCluster c(sibling_exe("dynacomm"), run_dir, std::chrono::seconds(30));
  // --net user: the PS's cloud link is one token bucket each way in a file every worker
  // maps (net/shared_shaper.h); it is removed with this function.
  std::vector<JobFlags> workers = per_worker;
  std::unique_ptr<net::SharedCloudLink> cloud;
  struct Remove {
    std::string path;
    ~Remove() {
      if (!path.empty()) std::remove(path.c_str());
    }
  } remove_cloud;
  if (const cluster::CloudLinkRates rates = cloud_rates(j); j.net == "user" && rates.limited()) {
    remove_cloud.path = run.file("cloud-link");
    cloud = net::SharedCloudLink::create(remove_cloud.path, rates.in_bps, rates.out_bps);
    for (JobFlags& w : workers) w.cloud_link_file = remove_cloud.path;
  }
  start_processes(c, j, workers, run_dir, threads, topology, control, origin_ms);
  // One display for the whole cluster: redrawn in place on a terminal, a line every 30 s
  // elsewhere.
  const bool interactive = ::isatty(STDERR_FILENO);
  const auto began = std::chrono::steady_clock::now();
  auto last_line = began;
  std::size_t drawn = 0;
  auto show = [&](bool final) {
    std::string line = cluster::render_status(
        cluster::read_statuses(run_dir, j.workers),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(), style);
    if (c.restarts() > 0)
      line += "  restarts " + std::to_string(c.restarts()) + "/" + std::to_string(max_restarts);
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
  c.set_max_restarts(max_restarts, [&](const std::string& what) {
    if (interactive && drawn) std::fprintf(stderr, "\n");
    drawn = 0;
    std::fprintf(stderr, "dynacomm: %s\n", what.c_str());
  });
  if (!control.checkpoint_dir.empty())
    c.set_ps_restart([dir = control.checkpoint_dir]() -> std::optional<std::string> {
      const std::vector<std::string> files = ps::checkpoint_files(dir);
      if (files.empty()) return std::nullopt;
      return "from its newest checkpoint (" + files.front().substr(dir.size() + 1) + ")";
    });
  c.set_graceful_interrupt(control.graceful_interrupt);
  try {
    c.wait([&] {
      show(false);
      // --target-accuracy: rank 0's latest evaluation reached it; the workers stop and save.
      if (j.target_accuracy > 0 && control.stop_at_target && !c.interrupted()) {
        const nlohmann::json s0 = cluster::read_statuses(run_dir, 1).front();
        if (s0.is_object() && s0.contains("test_accuracy") && s0["test_accuracy"].is_number() &&
            s0["test_accuracy"].get<double>() >= j.target_accuracy)
          c.stop_gracefully(
              "test accuracy " +
                  std::to_string(100 * s0["test_accuracy"].get<double>()).substr(0, 5) +
                  "% reached the target: the workers stop at their next iteration",
              std::chrono::minutes(5));
      }
      // Backup workers and ASP let the workers drift apart: the job ends with rank 0's
      // last iteration and final fetch, and a straggler does not run on alone.
      if ((ps::is_asp(j.sync) || ps::is_backup(j.sync)) && !c.interrupted()) {
        const nlohmann::json s0 = cluster::read_statuses(run_dir, 1).front();
        if (s0.is_object() && s0.value("phase", "") == "done")
          c.stop_gracefully("rank 0 has finished; under --sync " + j.sync +
                                " the job ends with it: the others stop at their next iteration",
                            std::chrono::minutes(5));
      }
      if (tc_replay) tc_replay->rethrow();  // a failed `tc qdisc change` ends the job
    });
  } catch (...) {
    if (interactive && drawn) std::fprintf(stderr, "\n");
    throw;
  }
  show(true);
  merge_traces(run, j.workers);
  for (int r = 0; r < j.workers; ++r)
    std::remove(run.file("status-worker" + std::to_string(r) + ".json").c_str());

  std::ifstream in(run.file("summary.json"));
  if (!in) throw Error("the run left no summary.json in " + run_dir);
  const nlohmann::json parsed = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) throw Error(run.file("summary.json") + ": not JSON");
  return summary_from_json(parsed);
}

}  // namespace

}  // namespace dynacomm::cli
