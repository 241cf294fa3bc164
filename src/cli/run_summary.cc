#include "cli/run_summary.h"

#include <cstdarg>
#include <cstdio>

#include "base/error.h"
#include "plan/model/plan.h"
#include "plan/model/profile.h"
#include "worker/worker.h"

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

RunSummary make_summary(const JobFlags& job, const worker::WorkerResult& r) {
  std::int64_t up = 0, down = 0;
  for (const auto& it : r.iterations) {
    up += it.bytes_up;
    down += it.bytes_down;
  }
  RunSummary s;
  for (const auto& p : r.plans)
    s.plans.push_back({p.id, p.scheduler, p.predicted_ms, p.predicted_final_ms, p.ideal_ms,
                       p.ideal_final_ms, plan::to_json(p.plan)});
  for (const auto& c : r.plan_changes)
    s.plan_changes.push_back(
        {c.iteration, c.plan_id, c.why, c.predicted_current_ms, c.predicted_best_ms});
  s.scheduler = job.scheduler;
  s.scheduler_choice = r.scheduler_choice;
  s.codecs = r.codecs;
  s.model = job.model;
  s.replan = job.replan;
  s.sync = job.sync;
  s.arch = job.arch == "allreduce" ? "allreduce:" + job.buckets
           : job.arch == "gossip"  ? "gossip:" + job.topology
                                   : job.arch;
  s.workers = job.workers;
  s.batch = job.batch;
  s.iterations = static_cast<std::int64_t>(r.iterations.size());
  s.iterations_per_epoch = r.steps_per_epoch;
  s.bytes_up = up;
  s.bytes_down = down;
  s.median_iteration_ms = r.median_iteration_ms;
  s.predicted_ms = r.predicted_ms;
  s.predicted_sequential_ms = r.predicted_sequential_ms;
  s.predicted_slowest_ms = r.predicted_slowest_ms;
  s.measured_sequential_ms = r.measured_sequential_ms;
  s.measured_sequential_iterations = r.measured_sequential_iterations;
  s.first_iteration = r.iterations.empty() ? 0 : r.iterations.front().iteration;
  s.interrupted_at = r.interrupted_at;
  for (const auto& k : r.scheduler_ranking)
    s.scheduler_ranking.push_back({k.scheduler, k.predicted_ms});
  s.test_accuracy = r.test_accuracy;
  if (job.target_accuracy > 0)
    s.time_to_accuracy = worker::time_to_accuracy(r.iterations, job.target_accuracy);
  s.ideal_ms = r.ideal_ms;
  s.device_slowdown = job.device_slowdown;
  s.link = {{"down", job.down},
            {"up", job.up.empty() ? job.down : job.up},
            {"latency", job.latency},
            {"emulation", job.net == "netns"  ? "kernel tbf in network namespaces; latency in the "
                                                "transport"
                          : job.net == "none" ? "none: the real network"
                                              : "user-space token bucket + latency"}};
  s.measured_link = {
      {"transport_rtt_ms", r.transport_rtt_ms},
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
      {"aggregation", aggregation_json(r.aggregation)}};
  s.plan = plan::to_json(r.plan);
  s.final_estimates = {{"link", plan::to_json(r.final_link)},
                       {"aggregation", aggregation_json(r.final_aggregation)},
                       {"ideal_ms", r.ideal_final_ms},
                       {"profile", plan::to_json(r.final_profile)}};
  s.profile = plan::to_json(r.profile);
  return s;
}

nlohmann::json to_json(const RunSummary::PlanChange& c) {
  return {{"iteration", c.iteration},
          {"plan_id", c.plan_id},
          {"why", c.why},
          {"predicted_current_ms", c.predicted_current_ms},
          {"predicted_best_ms", c.predicted_best_ms}};
}

std::string time_to_accuracy_line(const worker::TimeToAccuracy& t) {
  char b[320];
  std::snprintf(b, sizeof b,
                "reached %.2f%% test accuracy (%.2f%%) at iteration %lld: %.1f s of training "
                "(%.1f s of evaluations left out), %lld iterations, %.1f MB up and %.1f MB down "
                "(worker 0)",
                100 * t.target, 100 * t.accuracy, static_cast<long long>(t.iteration), t.wall_s,
                t.eval_s, static_cast<long long>(t.iterations), t.bytes_up / 1e6,
                t.bytes_down / 1e6);
  return b;
}

nlohmann::json to_json(const worker::TimeToAccuracy& t) {
  if (t.target <= 0) return nullptr;
  return {{"target", t.target},     {"iteration", t.iteration},   {"accuracy", t.accuracy},
          {"wall_s", t.wall_s},     {"eval_s", t.eval_s},         {"iterations", t.iterations},
          {"bytes_up", t.bytes_up}, {"bytes_down", t.bytes_down}, {"reached", t.reached()},
          {"bytes_of", "worker 0"}};
}

nlohmann::json to_json(const RunSummary& s) {
  nlohmann::json plans = nlohmann::json::array();
  for (const auto& p : s.plans)
    plans.push_back({{"id", p.id},
                     {"scheduler", p.scheduler},
                     {"predicted_ms", p.predicted_ms},
                     {"predicted_final_ms", p.predicted_final_ms},
                     {"ideal_ms", p.ideal_ms},
                     {"ideal_final_ms", p.ideal_final_ms},
                     {"plan", p.plan}});
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : s.plan_changes) changes.push_back(to_json(c));
  nlohmann::json ranking = nlohmann::json::array();
  for (const auto& k : s.scheduler_ranking)
    ranking.push_back({{"scheduler", k.scheduler}, {"predicted_ms", k.predicted_ms}});
  return {{"mode", "cluster"},
          {"scheduler", s.scheduler},
          {"scheduler_choice", s.scheduler_choice},
          {"codecs", s.codecs},
          {"model", s.model},
          {"workers", s.workers},
          {"batch", s.batch},
          {"iterations", s.iterations},
          {"iterations_per_epoch", s.iterations_per_epoch},
          {"median_iteration_ms", s.median_iteration_ms},
          {"predicted_ms", s.predicted_ms},
          {"predicted_sequential_ms", s.predicted_sequential_ms},
          {"predicted_slowest_ms", s.predicted_slowest_ms},
          {"measured_sequential_ms", s.measured_sequential_ms},
          {"measured_sequential_iterations", s.measured_sequential_iterations},
          {"first_iteration", s.first_iteration},
          {"interrupted_at", s.interrupted_at},
          {"scheduler_ranking", ranking},
          {"test_accuracy", s.test_accuracy},
          {"time_to_accuracy", to_json(s.time_to_accuracy)},
          {"bytes_of", "worker 0"},  // bytes_up, bytes_down: rank 0's, the whole run
          {"bytes_up", s.bytes_up},
          {"bytes_down", s.bytes_down},
          {"link", s.link},
          {"measured_link", s.measured_link},
          {"plan", s.plan},
          {"plans", plans},
          {"replan", s.replan},
          {"sync", s.sync},
          {"arch", s.arch},
          {"arch_choice", s.arch_choice},
          {"plan_changes", changes},
          {"ideal_ms", s.ideal_ms},
          {"final_estimates", s.final_estimates},
          {"device_slowdown", s.device_slowdown},
          {"profile", s.profile},
          {"weights", "weights.bin: float32 little-endian, units in order"}};
}

namespace {
const nlohmann::json& field(const nlohmann::json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) throw Error("summary.json: " + where + "no \"" + key + "\"");
  return *it;
}
template <typename T>
T get(const nlohmann::json& j, const char* key, const std::string& where = "") {
  try {
    return field(j, key, where).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw Error("summary.json: " + where + "\"" + key + "\": " + e.what());
  }
}
}  // namespace

RunSummary summary_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("summary.json: not a JSON object");
  RunSummary s;
  s.scheduler = get<std::string>(j, "scheduler");
  s.scheduler_choice = get<std::string>(j, "scheduler_choice");
  s.codecs = j.contains("codecs") ? get<std::string>(j, "codecs") : "";
  s.model = get<std::string>(j, "model");
  s.replan = get<std::string>(j, "replan");
  s.sync = j.value("sync", "bsp");  // written before the modes: BSP
  s.arch = j.value("arch", "ps");
  if (j.contains("arch_choice")) s.arch_choice = j["arch_choice"];
  s.workers = get<int>(j, "workers");
  s.batch = get<int>(j, "batch");
  s.iterations = get<std::int64_t>(j, "iterations");
  s.iterations_per_epoch = get<std::int64_t>(j, "iterations_per_epoch");
  s.bytes_up = get<std::int64_t>(j, "bytes_up");
  s.bytes_down = get<std::int64_t>(j, "bytes_down");
  s.median_iteration_ms = get<double>(j, "median_iteration_ms");
  s.predicted_ms = get<double>(j, "predicted_ms");
  s.predicted_sequential_ms = get<double>(j, "predicted_sequential_ms");
  s.predicted_slowest_ms = get<double>(j, "predicted_slowest_ms");
  s.measured_sequential_ms = get<double>(j, "measured_sequential_ms");
  s.measured_sequential_iterations = get<int>(j, "measured_sequential_iterations");
  s.first_iteration = j.contains("first_iteration") ? get<std::int64_t>(j, "first_iteration") : 0;
  s.interrupted_at = j.contains("interrupted_at") ? get<std::int64_t>(j, "interrupted_at") : -1;
  for (const auto& k : field(j, "scheduler_ranking", ""))
    s.scheduler_ranking.push_back({get<std::string>(k, "scheduler", "a ranked strategy's "),
                                   get<double>(k, "predicted_ms", "a ranked strategy's ")});
  s.test_accuracy = get<double>(j, "test_accuracy");
  if (j.contains("time_to_accuracy") && !j["time_to_accuracy"].is_null()) {
    const nlohmann::json& t = j["time_to_accuracy"];
    const std::string where = "time_to_accuracy's ";
    worker::TimeToAccuracy& a = s.time_to_accuracy;
    a.target = get<double>(t, "target", where);
    a.iteration = get<std::int64_t>(t, "iteration", where);
    a.accuracy = get<double>(t, "accuracy", where);
    a.wall_s = get<double>(t, "wall_s", where);
    a.eval_s = get<double>(t, "eval_s", where);
    a.iterations = get<std::int64_t>(t, "iterations", where);
    a.bytes_up = get<std::int64_t>(t, "bytes_up", where);
    a.bytes_down = get<std::int64_t>(t, "bytes_down", where);
  }
  s.ideal_ms = get<double>(j, "ideal_ms");
  s.device_slowdown = get<double>(j, "device_slowdown");
  for (const auto& p : field(j, "plans", "")) {
    const std::string where = "a plan's ";
    s.plans.push_back({get<int>(p, "id", where), get<std::string>(p, "scheduler", where),
                       get<double>(p, "predicted_ms", where),
                       get<double>(p, "predicted_final_ms", where),
                       get<double>(p, "ideal_ms", where), get<double>(p, "ideal_final_ms", where),
                       field(p, "plan", where)});
  }
  for (const auto& c : field(j, "plan_changes", "")) {
    const std::string where = "a plan change's ";
    s.plan_changes.push_back({get<std::int64_t>(c, "iteration", where),
                              get<int>(c, "plan_id", where), get<std::string>(c, "why", where),
                              get<double>(c, "predicted_current_ms", where),
                              get<double>(c, "predicted_best_ms", where)});
  }
  s.link = field(j, "link", "");
  s.measured_link = field(j, "measured_link", "");
  s.plan = field(j, "plan", "");
  s.final_estimates = field(j, "final_estimates", "");
  s.profile = field(j, "profile", "");
  return s;
}

namespace {
std::string text(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string text(const char* f, ...) {
  char b[512];
  va_list args;
  va_start(args, f);
  std::vsnprintf(b, sizeof b, f, args);
  va_end(args);
  return b;
}
}  // namespace

std::vector<std::string> speed_report(const RunSummary& s) {
  const std::string name = s.strategy();
  const double measured = s.median_iteration_ms, predicted = s.predicted_ms;
  std::vector<std::string> lines;
  lines.push_back(text("%s: median iteration %.1f ms measured, %.1f ms predicted (%+.0f%%)",
                       name.c_str(), measured, predicted,
                       predicted > 0 ? 100 * (measured / predicted - 1) : 0.0));
  if (name != "sequential") {
    const double seq = s.measured_sequential_ms;
    if (s.measured_sequential_iterations > 0 && seq > 0 && measured > 0) {
      const double x = seq / measured;
      lines.push_back(text(
          "sequential, measured in the warm-up (%d iteration%s): %.1f ms; %s measured %.2fx %s "
          "(predicted %.2fx faster)",
          s.measured_sequential_iterations, s.measured_sequential_iterations > 1 ? "s" : "", seq,
          name.c_str(), x >= 1 ? x : 1 / x, x >= 1 ? "faster" : "slower",
          predicted > 0 ? s.predicted_sequential_ms / predicted : 0.0));
      if (s.sync != "bsp")  // the warm-up's pace is the mode's too (backup:auto's is BSP's)
        lines.back() +=
            "; under --sync " + s.sync + " the pace is the mode's as well as the plan's";
    } else if (predicted > 0) {
      lines.push_back(
          text("sequential: %.1f ms predicted, not measured (the warm-up ran no warm sequential "
               "iteration; --warmup 3 or more does); %s is predicted %.2fx faster",
               s.predicted_sequential_ms, name.c_str(), s.predicted_sequential_ms / predicted));
    }
  }
  if (s.scheduler_ranking.size() > 1) {
    const RunSummary::Ranked& next = s.scheduler_ranking[1];
    if (measured > next.predicted_ms)
      lines.push_back(text(
          "note: %s measured %.1f ms, slower than the runner-up %s's prediction (%.1f ms); "
          "predictions are not measurements: `dynacomm bench --schedulers %s,%s` measures both "
          "on one cluster",
          name.c_str(), measured, next.scheduler.c_str(), next.predicted_ms, name.c_str(),
          next.scheduler.c_str()));
  }
  return lines;
}

std::string RunSummary::strategy() const {
  return plans.empty() ? scheduler : plans.front().scheduler;
}

std::int64_t RunSummary::params() const {
  std::int64_t n = 0;
  for (const auto& u : profile.value("units", nlohmann::json::array()))
    n += u.value("params", std::int64_t{0});
  return n;
}

std::size_t RunSummary::units() const {
  return profile.value("units", nlohmann::json::array()).size();
}

}  // namespace dynacomm::cli
