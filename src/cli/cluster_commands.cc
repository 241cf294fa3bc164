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
#include "report/chrome_trace.h"
#include "report/run_folder.h"
#include "worker/metrics.h"

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
// rank 0's summary.json: the job, what the warm-up measured, the plans and their
// predictions, the final estimates.
nlohmann::json summary_json(const JobFlags& job, const worker::WorkerResult& r) {
  std::int64_t up = 0, down = 0;
  for (const auto& it : r.iterations) {
    up += it.bytes_up;
    down += it.bytes_down;
  }
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
  return {{"mode", "cluster"},
          {"scheduler", job.scheduler},
          {"model", job.model},
          {"workers", job.workers},
          {"batch", job.batch},
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
           {{"down", job.down},
            {"up", job.up.empty() ? job.down : job.up},
            {"latency", job.latency},
            {"emulation", job.net == "netns" ? "kernel tbf in network namespaces; latency in the "
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
          {"replan", job.replan},
          {"plan_changes", changes},
          {"ideal_ms", r.ideal_ms},
          {"final_estimates",
           {{"link", plan::to_json(r.final_link)},
            {"aggregation", aggregation_json(r.final_aggregation)},
            {"ideal_ms", r.ideal_final_ms},
            {"profile", plan::to_json(r.final_profile)}}},
          {"device_slowdown", job.device_slowdown},
          {"profile", plan::to_json(r.profile)},
          {"weights", "weights.bin: float32 little-endian, units in order"}};
}

}  // namespace

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
    worker::write_metrics_csv(run, r);
    run.write_floats("weights.bin", r.final_weights);
    run.write_json("summary.json", summary_json(f->job, r));
  });
}

}  // namespace dynacomm::cli
