// `dynacomm ps` and `dynacomm worker`: one process each; `dynacomm train` starts them.
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
#include "report/chrome_trace.h"
#include "report/run_folder.h"

namespace dynacomm::cli {

namespace {
nlohmann::json link_fit_json(const plan::LinkFit& f) {
  return {{"overhead_ms", f.overhead_ms},
          {"bandwidth_bps", f.bandwidth_fitted ? nlohmann::json(f.bandwidth_bps) : nullptr},
          {"transfers", f.samples}};
}
nlohmann::json aggregation_json(const plan::AggregationFit& a) {
  return {{"ms", a.ms}, {"ms_per_mb", a.ms_per_mb}, {"samples", a.samples}};
}
}  // namespace

void add_ps_command(CLI::App& app) {
  struct Flags {
    JobFlags job;
    std::string listen = "tcp://127.0.0.1:7070";
    std::string endpoint_file;
    std::string trace;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("ps", "Run the parameter server");
  cmd->add_option("--listen", f->listen,
                  "ZeroMQ endpoint to bind; port 0 picks a free one. Loopback by default: binding "
                  "another address is an explicit choice")
      ->check(endpoint_check())
      ->capture_default_str();
  cmd->add_option("--endpoint-file", f->endpoint_file, "Write the bound endpoint to this file");
  cmd->add_option("--trace", f->trace,
                  "Write the PS's Chrome-trace events (the iterations the workers trace) here");
  f->job.add_model_and_optimizer(cmd);
  cmd->callback([f]() {
    ps::ServerOptions options = f->job.server_options();
    options.listen = f->listen;
    ps::PsServer server(options);
    if (!f->endpoint_file.empty()) {
      const std::string tmp = f->endpoint_file + ".tmp";
      std::ofstream(tmp) << server.endpoint() << "\n";
      std::rename(tmp.c_str(), f->endpoint_file.c_str());
    }
    std::cerr << "dynacomm ps: listening on " << server.endpoint() << " for " << f->job.workers
              << " worker(s), model " << f->job.model << "\n";
    server.start();
    std::vector<float> weights = server.wait();
    std::cerr << "dynacomm ps: done; received " << server.bytes_received() << " bytes, sent "
              << server.bytes_sent() << " bytes, dropped " << server.messages_dropped()
              << " malformed message(s)\n";
    if (!f->trace.empty()) {
      report::ChromeTrace trace;
      const int pid = f->job.workers;  // after the workers' processes
      trace.name_process(pid, "PS");
      for (int r = 0; r < f->job.workers; ++r)
        trace.name_track(pid, r, "requests of worker " + std::to_string(r));
      trace.name_track(pid, f->job.workers, "updates (aggregate + SGD)");
      for (const ps::PsEvent& e : server.trace_events())
        trace.add_event(pid, e.track, e.name, e.category, e.start_ms, e.end_ms);
      trace.write(f->trace);
    }
  });
}

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
    std::vector<std::vector<std::string>> rows;
    auto cell = [](double x) {
      char b[32];
      std::snprintf(b, sizeof b, "%.10g", x);
      return std::string(b);
    };
    std::int64_t up = 0, down = 0;
    std::size_t epoch_index = 0;
    for (std::size_t i = 0; i < r.iterations.size(); ++i) {
      const auto& it = r.iterations[i];
      up += it.bytes_up;
      down += it.bytes_down;
      const bool epoch_end = i + 1 == r.iterations.size() || r.iterations[i + 1].epoch != it.epoch;
      double acc = epoch_end && epoch_index < r.epoch_test_accuracy.size()
                       ? r.epoch_test_accuracy[epoch_index++]
                       : -1;
      rows.push_back({std::to_string(it.iteration),
                      std::to_string(it.epoch),
                      cell(it.start_s),
                      cell(it.ms),
                      cell(it.loss),
                      std::to_string(it.bytes_up),
                      std::to_string(it.bytes_down),
                      std::to_string(it.plan_id),
                      std::to_string(it.pull_segments),
                      std::to_string(it.push_segments),
                      cell(acc),
                      it.plan_change,
                      it.plan_change.empty() ? "" : cell(it.predicted_gain_ms),
                      it.predicted_ms > 0 ? cell(it.predicted_ms) : "",
                      it.ideal_ms > 0 ? cell(it.ideal_ms) : "",
                      it.predicted_slowest_ms > 0 ? cell(it.predicted_slowest_ms) : "",
                      it.predicted_workers_ms > 0 ? cell(it.predicted_workers_ms) : "",
                      cell(it.compute_ms),
                      it.compute_cpu_ms > 0 ? cell(it.compute_cpu_ms) : "",
                      it.stretch_down > 0 ? cell(it.stretch_down) : "",
                      it.stretch_up > 0 ? cell(it.stretch_up) : ""});
    }
    run.write_csv("metrics.csv",
                  {"iteration",
                   "epoch",
                   "start_s",
                   "iteration_ms",
                   "loss",
                   "bytes_up",
                   "bytes_down",
                   "plan_id",
                   "pull_segments",
                   "push_segments",
                   "test_accuracy",
                   "plan_change",
                   "predicted_gain_ms",
                   "predicted_ms",
                   "ideal_ms",
                   "predicted_slowest_ms",
                   "predicted_workers_ms",
                   "compute_ms",
                   "compute_cpu_ms",
                   "stretch_down",
                   "stretch_up"},
                  rows);
    run.write_floats("weights.bin", r.final_weights);
    nlohmann::json plan = plan::to_json(r.plan);
    nlohmann::json plans = nlohmann::json::array();
    for (const auto& p : r.plans)
      plans.push_back({{"id", p.id},
                       {"scheduler", p.scheduler},
                       {"predicted_ms", p.predicted_ms},
                       {"predicted_final_ms", p.predicted_final_ms},
                       {"ideal_ms", p.ideal_ms},
                       {"ideal_final_ms", p.ideal_final_ms},
                       {"plan", plan::to_json(p.plan)}});
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : r.plan_changes)
      changes.push_back({{"iteration", c.iteration},
                         {"plan_id", c.plan_id},
                         {"why", c.why},
                         {"predicted_current_ms", c.predicted_current_ms},
                         {"predicted_best_ms", c.predicted_best_ms}});
    run.write_json(
        "summary.json",
        {{"mode", "cluster"},
         {"scheduler", f->job.scheduler},
         {"model", f->job.model},
         {"workers", f->job.workers},
         {"batch", f->job.batch},
         {"iterations", static_cast<std::int64_t>(r.iterations.size())},
         {"iterations_per_epoch", r.steps_per_epoch},
         {"median_iteration_ms", r.median_iteration_ms},
         {"predicted_ms", r.predicted_ms},
         {"predicted_sequential_ms", r.predicted_sequential_ms},
         {"predicted_slowest_ms", r.predicted_slowest_ms},
         {"test_accuracy", r.test_accuracy},
         {"bytes_up", up},
         {"bytes_down", down},
         {"link",
          {{"down", f->job.down},
           {"up", f->job.up.empty() ? f->job.down : f->job.up},
           {"latency", f->job.latency},
           {"emulation", f->job.net == "netns" ? "kernel tbf in network namespaces; latency in the "
                                                 "transport"
                                               : "user-space token bucket + latency"}}},
         {"measured_link",
          {{"transport_rtt_ms", r.transport_rtt_ms},
           {"ps_clock_offset_ms",
            r.ps_clock_offset_ms ? nlohmann::json(*r.ps_clock_offset_ms) : nlohmann::json()},
           {"planned_down_bps", r.planned_link.down_bps},
           {"planned_up_bps", r.planned_link.up_bps},
           {"planned_overhead_down_ms", r.planned_link.overhead_down_ms},
           {"planned_overhead_up_ms", r.planned_link.overhead_up_ms},
           {"down", link_fit_json(r.measured_down)},
           {"up", link_fit_json(r.measured_up)},
           {"compute_stretch",
            {{"down", r.compute_stretch.down},
             {"up", r.compute_stretch.up},
             {"idle_wall_per_cpu", r.compute_stretch.idle_wall_per_cpu},
             {"fitted_down", r.compute_stretch.fitted_down},
             {"fitted_up", r.compute_stretch.fitted_up},
             {"spans", r.compute_stretch.spans}}},
           {"aggregation", aggregation_json(r.aggregation)}}},
         {"plan", plan},
         {"plans", plans},
         {"replan", f->job.replan},
         {"plan_changes", changes},
         {"ideal_ms", r.ideal_ms},
         {"final_estimates",
          {{"link", plan::to_json(r.final_link)},
           {"aggregation", aggregation_json(r.final_aggregation)},
           {"ideal_ms", r.ideal_final_ms},
           {"profile", plan::to_json(r.final_profile)}}},
         {"device_slowdown", f->job.device_slowdown},
         {"profile", plan::to_json(r.profile)},
         {"weights", "weights.bin: float32 little-endian, units in order"}});
  });
}

}  // namespace dynacomm::cli
