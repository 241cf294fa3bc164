// `dynacomm bench`: every chosen strategy on the same cluster, data and link, taking turns
// (A A A B B B C C C A A A ...) so machine drift hits all alike; optionally the PyTorch
// DDP peer on the same links; per strategy the median iteration time with min-max, the
// planner's prediction, the ideal, and the speed-up over sequential; bench.json,
// bench.csv, bench.md and SVG charts in --out.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "base/stats.h"
#include "cli/cluster_job.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/job_flags.h"
#include "cluster/local_cluster.h"
#include "plan/planner.h"
#include "plan/quantity.h"
#include "plan/replan.h"
#include "plan/trace_file.h"
#include "report/run_folder.h"
#include "report/svg_chart.h"
#include "worker/metrics.h"

namespace dynacomm::cli {

namespace {

struct BenchFlags {
  JobFlags job;
  std::string schedulers = "all";
  int iterations = 20;  // measured iterations per strategy and setting (--iterations)
  int block = 3;        // iterations per turn
  int settle = 1;       // the first iterations of each turn not measured (at most block - 1)
  std::string sweep;    // bandwidths, comma-separated
  std::vector<std::string> peers;
  std::string out;
  int threads = 0;
  std::string peer_script = DYNACOMM_DDP_PEER;
  std::string policies = "dynacomm,dynacomm-static,dynacomm-epoch,oracle";  // --link-trace
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) out.push_back(x);
  return out;
}

struct Stats {
  double median = 0, min = 0, max = 0;
  std::vector<double> values;
};
Stats stats_of(std::vector<double> v) {
  Stats s;
  s.values = v;
  if (v.empty()) return s;
  s.median = median(v);
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

// The intervals of one traced iteration of worker 0, from the merged trace.
report::GanttRow gantt_row(const nlohmann::json& trace, const std::string& label,
                           std::int64_t iteration) {
  report::GanttRow row{label, {}};
  double t0 = 1e300;
  std::vector<report::Interval> raw;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("pid", -1) != 0 || !e.contains("args") ||
        !e["args"].is_object() || e["args"].value("iteration", std::int64_t{-1}) != iteration)
      continue;
    const std::string cat = e.value("cat", "");
    const int lane = cat == "pull" ? 1 : cat == "push" ? 2 : 0;
    const double s = e["ts"].get<double>() / 1000, d = e["dur"].get<double>() / 1000;
    raw.push_back({s, s + d, lane, cat});
    if (cat != "push") t0 = std::min(t0, s);  // the iteration starts with its pulls
  }
  for (auto& i : raw) row.intervals.push_back({i.start_ms - t0, i.end_ms - t0, i.lane, i.kind});
  return row;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// Runs the DDP peer, one process per worker in the worker's namespace; returns the
// per-iteration times of rank 0 and the parameter count it trained.
std::pair<Stats, std::int64_t> run_ddp(const BenchFlags& f, const JobFlags& j,
                                       cluster::NetnsTopology& topology, const std::string& dir,
                                       int threads) {
  if (::access(f.peer_script.c_str(), R_OK) != 0)
    throw Error("bench: the DDP peer script " + f.peer_script + " is missing");
  cluster::LocalCluster c("/usr/bin/python3", dir, std::chrono::seconds(30));
  const std::string master = cluster::NetnsTopology::worker_address(0) + ":29511";
  for (int r = 0; r < j.workers; ++r)
    c.start_process("DDP rank " + std::to_string(r),
                    {"/usr/bin/python3",
                     f.peer_script,
                     "--rank",
                     std::to_string(r),
                     "--world",
                     std::to_string(j.workers),
                     "--master",
                     master,
                     "--model",
                     j.model,
                     "--batch",
                     std::to_string(j.batch),
                     "--iterations",
                     std::to_string(f.iterations),
                     "--warmup",
                     std::to_string(j.warmup),
                     "--threads",
                     std::to_string(threads),
                     "--ifname",
                     topology.worker_interface(r),
                     "--out",
                     dir + "/ddp-rank" + std::to_string(r) + ".json"},
                    "ddp-rank" + std::to_string(r) + ".log", topology.worker_namespace(r));
  c.wait();
  std::ifstream in(dir + "/ddp-rank0.json");
  const nlohmann::json res = nlohmann::json::parse(in);
  return {stats_of(res["iteration_ms"].get<std::vector<double>>()),
          res["params"].get<std::int64_t>()};
}

// `dynacomm bench --link-trace`: the re-planning policies, one job each on the same trace.
void run_trace_bench(const BenchFlags& f);

// The notes under a setting's table: the ideals, the link and compute the warm-up saw,
// the PS's aggregation, the workers' spread and the peers.
std::string setting_note(const JobFlags& j, const nlohmann::json& summary, double run_ideal,
                         double run_ideal_online, const std::vector<double>& online_down,
                         const std::vector<double>& online_up, const std::string& spread_note,
                         const std::string& peer_note) {
  const auto& ml = summary["measured_link"];
  auto stretch_note = [&](const nlohmann::json& m) -> std::string {
    if (!m.contains("compute_stretch") || m["compute_stretch"].value("spans", 0) == 0) return "";
    const auto& c = m["compute_stretch"];
    auto range = [](const std::vector<double>& v) {
      if (v.empty()) return std::string("-");
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      return fmt("%.2f", *lo) + "-" + fmt("%.2fx", *hi);
    };
    return "; compute while its link carries data (fitted from the warm-up's units, "
           "charged in every prediction): " +
           fmt("%.2fx", c["down"].get<double>()) + " under the downlink, " +
           fmt("%.2fx", c["up"].get<double>()) +
           " under the uplink (refitted online from the last iterations' units, as the "
           "online predictions had it over the measured iterations: " +
           range(online_down) + " and " + range(online_up) + ")";
  };
  // "0.00 ms + 2.78 ms/MB" from an {ms, ms_per_mb, samples} fit (summary.json).
  auto aggregation_line = [](const nlohmann::json& a) {
    return fmt("%.2f ms", a["ms"].get<double>()) + " + " +
           fmt("%.2f ms/MB", a["ms_per_mb"].get<double>());
  };
  auto aggregation_note = [&](const nlohmann::json& m) -> std::string {
    if (!m.contains("aggregation") || m["aggregation"].value("samples", 0) == 0) return "";
    const auto& a = m["aggregation"];
    std::string note =
        "; the PS's aggregation of a push that completes its units (fitted "
        "from the " +
        std::to_string(a["samples"].get<int>()) +
        " updates the PS reported in worker 0's warm-up acks, charged by the "
        "full-duplex model): " +
        aggregation_line(a);
    const nlohmann::json online = summary.value("final_estimates", nlohmann::json::object())
                                      .value("aggregation", nlohmann::json());
    if (online.is_object() && online.value("samples", 0) > 0)
      note += " (online, at the run's end: " + aggregation_line(online) + " from " +
              std::to_string(online["samples"].get<int>()) + " updates)";
    return note;
  };
  std::string fd_ideal;
  for (const auto& p : summary["plans"])
    if (p["plan"].value("full_duplex", false) && p.contains("ideal_ms"))
      fd_ideal = "; full-duplex plans: " + fmt("%.1f", p["ideal_ms"].get<double>()) +
                 " ms, the steady-state bound of that model (compute, or the model's bytes on "
                 "the slower direction)";
  return "\nideal " + fmt("%.1f", run_ideal) + " ms (online: " + fmt("%.1f", run_ideal_online) +
         " ms)" + fd_ideal +
         ". Predictions and ideals: from the warm-up's measurements "
         "(what the plans were made from) / online: the median over the strategy's measured "
         "iterations of each one's figure from the estimates of the iterations before it "
         "(the window re-planning uses), which follows the machine's drift over the run. "
         "Link seen by worker 0 (fitted from the "
         "warm-up's transfers): down " +
         (ml["down"]["bandwidth_bps"].is_number()
              ? fmt("%.1f Mbit/s", ml["down"]["bandwidth_bps"].get<double>() / 1e6)
              : std::string("(not fitted)")) +
         " + " + fmt("%.2f ms", ml["planned_overhead_down_ms"].get<double>()) + ", up " +
         (ml["up"]["bandwidth_bps"].is_number()
              ? fmt("%.1f Mbit/s", ml["up"]["bandwidth_bps"].get<double>() / 1e6)
              : std::string("(not fitted)")) +
         " + " + fmt("%.2f ms", ml["planned_overhead_up_ms"].get<double>()) + " per transmission" +
         stretch_note(ml) + aggregation_note(ml) + ".\n\n" +
         (spread_note.empty()
              ? std::string()
              : "Full-duplex plans, predicted for " + std::to_string(j.workers) +
                    " workers whose compute differs as worker 0's did over its last 4 "
                    "iterations (each iteration's release waits for the last worker's "
                    "gradient; docs/full-duplex.md), online: " +
                    spread_note + ".\n\n") +
         peer_note;
}

// A setting's measured iterations by plan id: measured times and their online figures.
struct Measured {
  std::map<int, std::vector<double>> by_plan, online_by_plan, ideal_by_plan, slowest_by_plan,
      spread_by_plan;
  std::vector<double> online_down, online_up;  // the stretches over the measured iterations
};
Measured measured_iterations(const worker::MetricsTable& metrics, int warmup, int block,
                             int settle) {
  const auto& it = metrics.at("iteration");
  const auto& ms = metrics.at("iteration_ms");
  const auto& plan_id = metrics.at("plan_id");
  const auto& accuracy = metrics.at("test_accuracy");        // >= 0: an epoch's evaluation ran
  const auto& online = metrics.at("predicted_ms");           // from the estimates before it
  const auto& online_ideal = metrics.at("ideal_ms");         // likewise
  const auto& slowest = metrics.at("predicted_slowest_ms");  // any worker's, the largest
  const auto& spread = metrics.at("predicted_workers_ms");   // W workers' spread, online
  const auto& stretch_down = metrics.at("stretch_down");     // as refitted online
  const auto& stretch_up = metrics.at("stretch_up");
  Measured m;
  auto& [by_plan, online_by_plan, ideal_by_plan, slowest_by_plan, spread_by_plan, online_down,
         online_up] = m;
  for (std::size_t i = 0; i < it.size(); ++i) {
    const auto k = static_cast<std::int64_t>(it[i]) - warmup;
    // Not measured: warm-up, the first --settle iterations of a turn (the first carries the
    // previous strategy's last push; a full-duplex turn after a phase-separated one starts
    // without its pulls in flight and its workers out of step), an iteration with an epoch's
    // evaluation in it and the one after (rank 0 evaluates while the others wait, then
    // computes alone for a while: 556 ms against about 1700 for mobilenetv2 with 4 workers
    // on 2 cores), and the job's last iteration (rank 0's time for it includes fetching
    // the whole final model).
    const bool near_evaluation = accuracy[i] >= 0 || (i > 0 && accuracy[i - 1] >= 0);
    if (k < 0 || k % block < settle || near_evaluation || i + 1 == it.size()) continue;
    by_plan[static_cast<int>(plan_id[i])].push_back(ms[i]);
    if (online[i] > 0) online_by_plan[static_cast<int>(plan_id[i])].push_back(online[i]);
    if (online_ideal[i] > 0) ideal_by_plan[static_cast<int>(plan_id[i])].push_back(online_ideal[i]);
    if (slowest[i] > 0) slowest_by_plan[static_cast<int>(plan_id[i])].push_back(slowest[i]);
    if (spread[i] > 0) spread_by_plan[static_cast<int>(plan_id[i])].push_back(spread[i]);
    if (stretch_down[i] >= 1) online_down.push_back(stretch_down[i]);
    if (stretch_up[i] >= 1) online_up.push_back(stretch_up[i]);
  }
  return m;
}

std::string online_cell(double x) { return x > 0 ? fmt("%.1f", x) : std::string("-"); }

// The phase-separated ideal from the online estimates (for the peers): over the
// iterations of phase-separated plans.
double phase_separated_ideal(const nlohmann::json& summary,
                             std::map<int, std::vector<double>>& ideal_by_plan) {
  std::vector<double> ideals;
  for (const auto& p : summary["plans"])
    if (!p["plan"].value("full_duplex", false))
      for (double x : ideal_by_plan[p["id"].get<int>()]) ideals.push_back(x);
  return median(ideals);
}

// What the DDP peer trained, beside dynacomm's model.
std::string ddp_note(std::int64_t params, const JobFlags& j, const nlohmann::json& summary) {
  return "PyTorch DDP (Gloo) trained " + std::to_string(params) + " parameters; dynacomm's " +
         j.model + " has " + std::to_string(summary["profile"]["units"].size()) + " units and " +
         std::to_string([&] {
           std::int64_t n = 0;
           for (const auto& u : summary["profile"]["units"]) n += u["params"].get<std::int64_t>();
           return n;
         }()) +
         " parameters. DDP's traffic gets no added latency (netem is unavailable).\n\n";
}

// What every setting of a bench adds to.
struct BenchOutput {
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::vector<double>> csv;
  std::vector<report::Series> speedups;  // one per strategy, in the rotation's order
  std::string md;
};

// One setting (bandwidth) of a bench: the job, its measured iterations per strategy, the
// peers on the same links; rows, a table and charts.
void bench_setting(const BenchFlags& f, const JobFlags& base, const std::string& bw, int settle,
                   int measured_each, const std::string& out, report::RunFolder& folder,
                   int threads, BenchOutput& output) {
  nlohmann::json& rows = output.rows;
  std::vector<std::vector<double>>& csv = output.csv;
  std::vector<report::Series>& speedups = output.speedups;
  std::string& md = output.md;
  JobFlags j = base;
  j.down = bw;
  if (!f.sweep.empty()) j.up = bw;
  const std::vector<JobFlags> per_worker = per_worker_flags(j, {});
  const worker::WorkerOptions wo = j.worker_options();
  const std::string dir = out + "/" + bw;
  std::fprintf(stderr,
               "bench: %s at %s down / %s up: %s taking turns, %d measured iterations "
               "each\n",
               j.model.c_str(), bw.c_str(), (j.up.empty() ? bw : j.up).c_str(),
               base.rotation.c_str(), measured_each);
  std::unique_ptr<cluster::NetnsTopology> topology;
  if (j.net == "netns")
    topology = std::make_unique<cluster::NetnsTopology>(j.workers, link_rates(per_worker));
  const nlohmann::json summary = run_cluster_job(j, per_worker, dir, threads, topology.get());
  const auto metrics = worker::read_metrics_csv(dir + "/metrics.csv");
  Measured sel = measured_iterations(metrics, j.warmup, f.block, settle);
  auto& [by_plan, online_by_plan, ideal_by_plan, slowest_by_plan, spread_by_plan, online_down,
         online_up] = sel;
  const double run_ideal = summary["ideal_ms"].get<double>();
  std::map<std::string, Stats> measured;
  for (const auto& p : summary["plans"])
    measured[p["scheduler"].get<std::string>()] = stats_of(by_plan[p["id"].get<int>()]);
  const double seq = measured.count("sequential") ? measured["sequential"].median : 0;
  std::string table = "## " + bw + " down / " + (j.up.empty() ? bw : j.up) + " up\n\n" +
                      "| strategy | median ms | min-max ms | predicted ms (warm-up / online) | "
                      "measured/predicted (warm-up / online) | measured/ideal (warm-up / online) | "
                      "speed-up vs sequential "
                      "|\n|---|---|---|---|---|---|---|\n";
  report::BarChart bars{j.model + ", " + std::to_string(j.workers) + " workers, " + bw + " (" +
                            (j.net == "netns" ? "tbf" : "emulated") + ")",
                        "iteration time (ms)",
                        {}};
  report::GanttChart gantt{j.model + ": one measured iteration per strategy, worker 0, " + bw, {}};
  std::ifstream trace_in(dir + "/trace.json");
  const nlohmann::json trace = nlohmann::json::parse(trace_in, nullptr, false);
  const double run_ideal_online = phase_separated_ideal(summary, ideal_by_plan);
  // A full-duplex plan is held to its own model's ideal (plan/duplex.h); the others and
  // the peers to the phase-separated one.
  auto add_row = [&](const std::string& name, const Stats& s, double predicted,
                     double predicted_online, double predicted_final, double ideal,
                     double ideal_online) {
    const double speedup = seq > 0 && s.median > 0 ? seq / s.median : 0;
    nlohmann::json row = {
        {"scheduler", name},
        {"model", j.model},
        {"workers", j.workers},
        {"batch", j.batch},
        {"net", j.net},
        {"down_bps", wo.link.down_bps},
        {"up_bps", wo.link.up_bps},
        {"latency_ms", wo.link.latency_ms},
        {"median_ms", s.median},
        {"min_ms", s.min},
        {"max_ms", s.max},
        {"iterations", s.values.size()},
        {"iteration_ms", s.values},
        {"predicted_ms", predicted > 0 ? nlohmann::json(predicted) : nullptr},
        {"predicted_online_ms", predicted_online > 0 ? nlohmann::json(predicted_online) : nullptr},
        {"predicted_final_ms", predicted_final > 0 ? nlohmann::json(predicted_final) : nullptr},
        {"ideal_ms", ideal},
        {"ideal_online_ms", ideal_online > 0 ? nlohmann::json(ideal_online) : nullptr},
        {"measured_over_ideal", s.median / ideal},
        {"speedup_vs_sequential", speedup > 0 ? nlohmann::json(speedup) : nlohmann::json(nullptr)},
        {"measured_link", summary["measured_link"]}};
    if (predicted > 0) row["measured_over_predicted"] = s.median / predicted;
    if (predicted_online > 0) row["measured_over_predicted_online"] = s.median / predicted_online;
    if (predicted_final > 0) row["measured_over_predicted_final"] = s.median / predicted_final;
    if (ideal_online > 0) row["measured_over_ideal_online"] = s.median / ideal_online;
    rows.push_back(row);
    csv.push_back({wo.link.down_bps, wo.link.up_bps, s.median, s.min, s.max,
                   predicted > 0 ? predicted : std::nan(""), ideal, speedup});
    table +=
        "| " + name + " | " + fmt("%.1f", s.median) + " | " + fmt("%.1f", s.min) + "-" +
        fmt("%.1f", s.max) + " | " +
        (predicted > 0 ? fmt("%.1f", predicted) + " / " + online_cell(predicted_online) : "-") +
        " | " +
        (predicted > 0 ? fmt("%.2f", s.median / predicted) + " / " +
                             (predicted_online > 0 ? fmt("%.2f", s.median / predicted_online)
                                                   : std::string("-"))
                       : "-") +
        " | " + fmt("%.2f", s.median / ideal) + " / " +
        (ideal_online > 0 ? fmt("%.2f", s.median / ideal_online) : std::string("-")) + " | " +
        (speedup > 0 ? fmt("%.2fx", speedup) : std::string("-")) + " |\n";  // - : no sequential
    bars.bars.push_back(
        {name, s.median, s.min, s.max, speedup > 0 ? fmt("%.2fx", speedup) : std::string()});
    auto found = std::find_if(speedups.begin(), speedups.end(),
                              [&](const report::Series& x) { return x.name == name; });
    if (found == speedups.end()) found = speedups.insert(speedups.end(), {name, {}, {}});
    report::Series& sp = *found;
    sp.x.push_back(wo.link.down_bps / 1e6);
    sp.y.push_back(speedup);
  };
  std::string spread_note;
  for (const auto& p : summary["plans"]) {
    const std::string name = p["scheduler"].get<std::string>();
    add_row(name, measured[name], p["predicted_ms"].get<double>(),
            median(online_by_plan[p["id"].get<int>()]),
            p.value("predicted_final_ms", p["predicted_ms"].get<double>()),
            p.value("ideal_ms", run_ideal), median(ideal_by_plan[p["id"].get<int>()]));
    // The job's warm-up prediction: the largest any worker made for this plan (each for
    // its own link and compute), as the pushes reported it.
    if (const double job = median(slowest_by_plan[p["id"].get<int>()]); job > 0) {
      rows.back()["predicted_slowest_ms"] = job;
      rows.back()["measured_over_predicted_slowest"] = measured[name].median / job;
    }
    // With several workers: the period of workers whose compute differs as worker 0's did
    // over its last iterations (plan::predict_duplex_workers_ms), online.
    if (const double w = median(spread_by_plan[p["id"].get<int>()]); w > 0) {
      rows.back()["predicted_workers_ms"] = w;
      rows.back()["measured_over_predicted_workers"] = measured[name].median / w;
      spread_note += (spread_note.empty() ? "" : ", ") + name + " " + fmt("%.1f", w) +
                     " ms (measured/predicted " + fmt("%.2f", measured[name].median / w) + ")";
    }
    const int k = p["id"].get<int>() - 1;
    if (!trace.is_discarded())
      gantt.rows.push_back(
          gantt_row(trace, name, j.warmup + static_cast<std::int64_t>(k) * f.block + settle));
  }
  std::string peer_note;
  for (const auto& peer : f.peers) {
    (void)peer;  // ddp
    auto [s, params] = run_ddp(f, j, *topology, dir, threads);
    add_row("pytorch-ddp", s, 0, 0, 0, run_ideal, run_ideal_online);
    peer_note += ddp_note(params, j, summary);
  }
  table += setting_note(j, summary, run_ideal, run_ideal_online, online_down, online_up,
                        spread_note, peer_note);
  md += table;
  folder.write_text("bench-" + bw + ".svg", report::render(bars));
  if (!gantt.rows.empty()) folder.write_text("gantt-" + bw + ".svg", report::render(gantt));
  md += "![iteration time](bench-" + bw + ".svg)\n![one iteration](gantt-" + bw + ".svg)\n\n";
}

void run_bench(const BenchFlags& f) {
  if (!f.job.link_trace.empty() || !f.job.device_slowdown_trace.empty()) return run_trace_bench(f);
  JobFlags base = f.job;
  std::vector<std::string> schedulers =
      f.schedulers == "all" ? plan::planner_names() : split(f.schedulers);
  schedulers.erase(std::remove(schedulers.begin(), schedulers.end(), "ideal"), schedulers.end());
  if (schedulers.empty()) throw InvalidInput("bench: --schedulers names no scheduler");
  if (f.iterations < 1 || f.block < 1)
    throw InvalidInput("bench: --iterations and --block must be at least 1");
  if (f.settle < 0 || (f.block > 1 && f.settle >= f.block))
    throw InvalidInput("bench: --settle must be from 0 to --block - 1 (got " +
                       std::to_string(f.settle) + " with --block " + std::to_string(f.block) +
                       "): a turn needs an iteration to measure");
  for (const auto& p : f.peers)
    if (p != "ddp") throw InvalidInput("bench: unknown peer '" + p + "' (known: ddp)");
  if (!f.peers.empty() && base.net != "netns")
    throw InvalidInput(
        "bench: --peers ddp needs --net netns (the peer's traffic is shaped by "
        "the kernel; the user-space shaper is dynacomm's own transport)");
  std::vector<std::string> bandwidths = split(f.sweep);
  if (bandwidths.empty()) bandwidths.push_back(base.down);

  // A turn of one iteration is measured whole (--settle has nothing to skip).
  const int settle = f.block > 1 ? f.settle : 0;
  const int measured_per_turn = f.block - settle;
  const int turns = (f.iterations + measured_per_turn - 1) / measured_per_turn;
  base.rotation.clear();
  for (const auto& s : schedulers) base.rotation += (base.rotation.empty() ? "" : ",") + s;
  base.rotation_block = f.block;
  // One iteration more than the turns: the job's last iteration is not measured (below), and
  // without it the last strategy of the rotation would get one sample fewer than the others.
  base.iterations =
      base.warmup +
      static_cast<std::int64_t>(turns) * static_cast<std::int64_t>(schedulers.size()) * f.block + 1;
  base.epochs = 1000;  // --iterations ends the run
  if (base.test_samples == 0) base.test_samples = 1000;
  for (const std::string& bw : bandwidths) {  // every setting's flags, before anything starts
    JobFlags j = base;
    j.down = bw;
    if (!f.sweep.empty()) j.up = bw;
    validate_job(j, per_worker_flags(j, {}));
  }

  const std::string out = f.out.empty() ? "runs/bench-" + base.model : f.out;
  report::RunFolder folder(out);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = f.threads > 0 ? f.threads : std::max(1, cores / base.workers);
  cluster::install_interrupt_handler();

  BenchOutput output;
  std::string& md = output.md;
  md = "# dynacomm bench: " + base.model + ", " + std::to_string(base.workers) +
       " workers, batch " + std::to_string(base.batch) + ", links " +
       (base.net == "netns" ? "kernel tbf (netns)" : "user-space emulation") + ", latency " +
       base.latency + "\n\nStrategies take turns of " + std::to_string(f.block) +
       " iterations; the first " + std::to_string(settle) + " of each turn not measured.\n\n";
  for (const std::string& bw : bandwidths)
    bench_setting(f, base, bw, settle, turns * measured_per_turn, out, folder, threads, output);
  const nlohmann::json& rows = output.rows;
  const std::vector<std::vector<double>>& csv = output.csv;
  const std::vector<report::Series>& speedups = output.speedups;
  if (bandwidths.size() > 1) {
    report::LineChart chart{base.model + ": speed-up over sequential vs bandwidth",
                            "link bandwidth, both directions (Mbit/s)",
                            "speed-up (x sequential)",
                            {},
                            true};
    chart.series = speedups;
    folder.write_text("speedup.svg", report::render(chart));
    md += "![speed-up vs bandwidth](speedup.svg)\n";
  }
  folder.write_json("bench.json", rows);
  // bench.csv: one row per strategy and setting (the strategy is the JSON's; same order).
  std::string text =
      "scheduler,down_bps,up_bps,median_ms,min_ms,max_ms,predicted_ms,ideal_ms,"
      "speedup_vs_sequential\n";
  for (std::size_t i = 0; i < csv.size(); ++i) {
    text += rows[i]["scheduler"].get<std::string>();
    for (double v : csv[i]) text += "," + (std::isnan(v) ? std::string() : fmt("%.6g", v));
    text += "\n";
  }
  folder.write_text("bench.csv", text);
  folder.write_text("bench.md", md);
  std::printf("%s", md.c_str());
  std::printf("results in %s (bench.json, bench.csv, bench.md, *.svg)\n", out.c_str());
}

// One policy's run on the trace: every iteration after warm-up but the job's last (whose
// time includes fetching the final model for evaluation).
struct PolicyRun {
  std::string name;
  std::vector<double> start_s, ms;
  std::vector<std::int64_t> iteration;
  std::vector<bool> evaluated;  // rank 0 evaluated the model in it: not in the statistics
  nlohmann::json plan_changes = nlohmann::json::array();
  double ideal_ms = 0;
};

plan::ReplanMode policy_mode(const std::string& name) {
  if (name == "dynacomm") return plan::ReplanMode::kDynamic;
  if (name == "dynacomm-static") return plan::ReplanMode::kStatic;
  if (name == "dynacomm-epoch") return plan::ReplanMode::kEpoch;
  if (name == "oracle") return plan::ReplanMode::kOracle;
  throw InvalidInput("bench: unknown policy '" + name +
                     "' (known: dynacomm, dynacomm-static, dynacomm-epoch, oracle)");
}

// The link's changes, each as [change, next change) in s.
std::vector<std::pair<double, double>> change_windows(
    const std::vector<plan::LinkTracePoint>& rows) {
  std::vector<std::pair<double, double>> windows;  // [change, next change)
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].down_bps != rows[i - 1].down_bps || rows[i].up_bps != rows[i - 1].up_bps ||
        rows[i].latency_ms != rows[i - 1].latency_ms)
      windows.push_back({rows[i].time_s, 1e300});
  for (std::size_t i = 0; i + 1 < windows.size(); ++i) windows[i].second = windows[i + 1].first;
  return windows;
}

// A run's iteration times that started in window w, without those with an evaluation.
std::vector<double> in_window(const PolicyRun& r, std::pair<double, double> w) {
  std::vector<double> v;
  for (std::size_t i = 0; i < r.ms.size(); ++i)
    if (r.start_s[i] >= w.first && r.start_s[i] < w.second && !r.evaluated[i]) v.push_back(r.ms[i]);
  return v;
}

// How a run followed the link's change in window w, against the oracle: a JSON entry and
// its two table cells.
nlohmann::json after_change(const PolicyRun& r, const PolicyRun* oracle,
                            std::pair<double, double> w, std::string& md) {
  const std::vector<double> mine = in_window(r, w);
  std::vector<double> ref = oracle ? in_window(*oracle, w) : std::vector<double>{};
  // The oracle's settled time: its iterations in the window after the first two.
  if (ref.size() > 2) ref.erase(ref.begin(), ref.begin() + 2);
  const double reference = ref.empty() ? 0 : median(ref);
  int settled = -1;  // 1-based: the iteration from which 3 in a row have a median within 10%
  for (std::size_t k = 0; reference > 0 && k + 3 <= mine.size() && settled < 0; ++k)
    if (median(std::vector<double>(mine.begin() + static_cast<long>(k),
                                   mine.begin() + static_cast<long>(k) + 3)) <= 1.1 * reference)
      settled = static_cast<int>(k) + 1;
  const std::vector<double> later(mine.size() > 5 ? mine.begin() + 5 : mine.end(), mine.end());
  const double later_median = later.empty() ? 0 : median(later);
  const nlohmann::json entry = {
      {"change_s", w.first},
      {"iterations", mine.size()},
      {"iterations_to_within_10pct_of_oracle", settled > 0 ? nlohmann::json(settled) : nullptr},
      {"median_ms_from_6th",
       later.empty() ? nlohmann::json(nullptr) : nlohmann::json(later_median)},
      {"oracle_ms", reference > 0 ? nlohmann::json(reference) : nullptr}};
  md += " " +
        (reference <= 0 ? std::string("-")
         : settled > 0  ? std::to_string(settled)
                        : "not within " + std::to_string(mine.size())) +
        " | " + (later.empty() ? std::string("-") : fmt("%.1f", later_median)) +
        (reference > 0 && !later.empty() ? fmt(" (%.2fx)", later_median / reference) : "") + " |";
  return entry;
}

// The link trace's bandwidths as worker 0 saw them, up to t_end (s).
std::string link_chart(const std::vector<plan::LinkTracePoint>& rows, double t_end) {
  report::LineChart link{"the link trace, worker 0",
                         "time since the job's start (s)",
                         "bandwidth (Mbit/s)",
                         {{"down", {}, {}}, {"up", {}, {}}}};
  link.continuous_x = true;
  link.x_min = 0;
  link.x_max = t_end;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double from = rows[i].time_s, to = i + 1 < rows.size() ? rows[i + 1].time_s : t_end;
    if (from > t_end) break;
    link.series[0].x.insert(link.series[0].x.end(), {from, std::min(to, t_end)});
    link.series[0].y.insert(link.series[0].y.end(),
                            {rows[i].down_bps / 1e6, rows[i].down_bps / 1e6});
    link.series[1].x.insert(link.series[1].x.end(), {from, std::min(to, t_end)});
    link.series[1].y.insert(link.series[1].y.end(), {rows[i].up_bps / 1e6, rows[i].up_bps / 1e6});
  }
  return report::render(link);
}

// One job per policy on the same trace, one after the other; epoch_iterations: the jobs'.
std::vector<PolicyRun> run_policies(const BenchFlags& f, const JobFlags& base,
                                    const std::vector<std::string>& policies,
                                    const std::string& out, int threads,
                                    std::int64_t& epoch_iterations) {
  std::vector<PolicyRun> runs;
  for (const std::string& name : policies) {
    JobFlags j = base;
    j.replan = plan::to_string(policy_mode(name));
    const std::vector<JobFlags> per_worker = per_worker_flags(j, {});
    const std::string dir = out + "/" + name;
    std::fprintf(
        stderr,
        "bench: %s, policy %s (--replan %s) on %s, %lld iterations after "
        "warm-up\n",
        j.model.c_str(), name.c_str(), j.replan.c_str(),
        base.link_trace.empty() ? base.device_slowdown_trace.c_str() : base.link_trace.c_str(),
        static_cast<long long>(f.iterations));
    // Under --net netns the job makes (and removes) its own namespaces.
    const nlohmann::json summary = run_cluster_job(j, per_worker, dir, threads, nullptr);
    const worker::MetricsTable m = worker::read_metrics_csv(dir + "/metrics.csv");
    const auto& it = m.at("iteration");
    PolicyRun run;
    run.name = name;
    run.ideal_ms = summary["ideal_ms"].get<double>();
    for (std::size_t i = 0; i + 1 < it.size(); ++i) {
      if (it[i] < j.warmup) continue;
      run.iteration.push_back(static_cast<std::int64_t>(it[i]));
      run.start_s.push_back(m.at("start_s")[i]);
      run.ms.push_back(m.at("iteration_ms")[i]);
      run.evaluated.push_back(m.at("test_accuracy")[i] >= 0);
    }
    run.plan_changes = summary["plan_changes"];
    epoch_iterations = summary.value("iterations_per_epoch", std::int64_t{0});
    runs.push_back(std::move(run));
  }
  return runs;
}

void run_trace_bench(const BenchFlags& f) {
  JobFlags base = f.job;
  const std::vector<std::string> policies = split(f.policies);
  if (policies.empty()) throw InvalidInput("bench: --policies names no policy");
  for (const auto& p : policies) (void)policy_mode(p);
  if (!f.sweep.empty() || !f.peers.empty())
    throw InvalidInput(
        "bench: --link-trace compares re-planning policies; it does not combine "
        "with --sweep-bandwidth or --peers");
  if (f.iterations < 1) throw InvalidInput("bench: --iterations must be at least 1");
  base.rotation.clear();
  base.iterations = base.warmup + f.iterations + 1;  // + the last, not measured
  base.epochs = 1000;                                // --iterations ends the run
  if (base.test_samples == 0) base.test_samples = 1000;
  validate_job(base, per_worker_flags(base, {}));  // before anything starts, traces included
  plan::LinkTrace trace;
  if (!base.link_trace.empty()) trace = plan::load_link_trace(base.link_trace);

  const std::string out = f.out.empty() ? "runs/bench-" + base.model + "-trace" : f.out;
  report::RunFolder folder(out);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = f.threads > 0 ? f.threads : std::max(1, cores / base.workers);
  cluster::install_interrupt_handler();

  std::int64_t epoch_iterations = 0;
  const std::vector<PolicyRun> runs =
      run_policies(f, base, policies, out, threads, epoch_iterations);

  // The link's changes as worker 0 sees them (after the first row).
  std::vector<plan::LinkTracePoint> rows = trace.for_worker(0);
  const std::vector<std::pair<double, double>> windows = change_windows(rows);
  const PolicyRun* oracle = nullptr;
  for (const auto& r : runs)
    if (r.name == "oracle") oracle = &r;

  nlohmann::json json_rows = nlohmann::json::array();
  std::string md =
      "# dynacomm bench: re-planning on a trace: " + base.model + ", " +
      std::to_string(base.workers) + " workers, batch " + std::to_string(base.batch) + ", links " +
      (base.net == "netns" ? "kernel tbf (netns)" : "user-space emulation") +
      "\n\nTrace: " + (base.link_trace.empty() ? "(none)" : base.link_trace) +
      (base.device_slowdown_trace.empty() ? "" : ", device " + base.device_slowdown_trace) + ". " +
      std::to_string(f.iterations) +
      " iterations after warm-up per policy, one job "
      "each, one after the other; an epoch is " +
      std::to_string(epoch_iterations) +
      " iterations. Statistics leave out the iterations in which worker 0 evaluated "
      "the model (epoch ends).\n\n";
  md +=
      "| policy | run time after warm-up (s) | median ms | min-max ms | plan changes | "
      "before the first change: median ms |";
  for (std::size_t w = 0; w < windows.size(); ++w)
    md += " after the change at " + fmt("%.0f", windows[w].first) +
          " s: iterations to within 10% of the oracle | then median ms (vs oracle) |";
  md += "\n|---|---|---|---|---|---|";
  for (std::size_t w = 0; w < windows.size(); ++w) md += "---|---|";
  md += "\n";
  std::string csv = "policy,iteration,start_s,iteration_ms\n";
  report::LineChart times{base.model + ": iteration time on the trace, worker 0",
                          "time since the job's start (s)",
                          "iteration time (ms)",
                          {}};
  times.continuous_x = true;
  double t_end = 0;
  for (const auto& r : runs) {
    std::vector<double> measured;
    for (std::size_t i = 0; i < r.ms.size(); ++i)
      if (!r.evaluated[i]) measured.push_back(r.ms[i]);
    const Stats st = stats_of(measured);
    double total = 0;
    for (double v : r.ms) total += v;
    nlohmann::json after = nlohmann::json::array();
    md += "| " + r.name + " | " + fmt("%.1f", total / 1e3) + " | " + fmt("%.1f", st.median) +
          " | " + fmt("%.1f", st.min) + "-" + fmt("%.1f", st.max) + " | " +
          std::to_string(r.plan_changes.size()) + " |";
    {
      const std::vector<double> before =
          in_window(r, {0.0, windows.empty() ? 1e300 : windows.front().first});
      md += " " + (before.empty() ? std::string("-") : fmt("%.1f", median(before))) + " |";
    }
    for (const auto& w : windows) after.push_back(after_change(r, oracle, w, md));
    md += "\n";
    json_rows.push_back({{"scheduler", r.name},
                         {"replan", plan::to_string(policy_mode(r.name))},
                         {"model", base.model},
                         {"workers", base.workers},
                         {"batch", base.batch},
                         {"net", base.net},
                         {"link_trace", base.link_trace},
                         {"device_slowdown_trace", base.device_slowdown_trace},
                         {"median_ms", st.median},
                         {"min_ms", st.min},
                         {"max_ms", st.max},
                         {"total_ms", total},
                         {"predicted_ms", nullptr},
                         {"ideal_ms", r.ideal_ms},
                         {"speedup_vs_sequential", nullptr},
                         {"iteration", r.iteration},
                         {"start_s", r.start_s},
                         {"iteration_ms", r.ms},
                         {"evaluated", r.evaluated},
                         {"plan_changes", r.plan_changes},
                         {"after_changes", after}});
    report::Series ser{r.name, {}, {}};
    for (std::size_t i = 0; i < r.ms.size(); ++i) {
      ser.x.push_back(r.start_s[i] + r.ms[i] / 1e3);  // plotted where the iteration ended
      ser.y.push_back(r.ms[i]);
      csv += r.name + "," + std::to_string(r.iteration[i]) + "," + fmt("%.3f", r.start_s[i]) + "," +
             fmt("%.3f", r.ms[i]) + "\n";
      t_end = std::max(t_end, ser.x.back());
    }
    times.series.push_back(std::move(ser));
  }
  md += "\nPlan changes (after the first plan):\n\n";
  for (const auto& r : runs)
    for (const auto& c : r.plan_changes)
      md += "- " + r.name + ", iteration " + std::to_string(c["iteration"].get<std::int64_t>()) +
            ": plan " + std::to_string(c["plan_id"].get<int>()) + ", " +
            c["why"].get<std::string>() +
            fmt(" (predicted %.1f", c["predicted_current_ms"].get<double>()) +
            fmt(" -> %.1f ms)\n", c["predicted_best_ms"].get<double>());
  times.x_min = 0;
  times.x_max = t_end;
  std::vector<std::string> charts = {report::render(times)};
  if (!rows.empty()) charts.push_back(link_chart(rows, t_end));
  folder.write_text("trace.svg", report::stack(charts));
  md += "\n![iteration time over the trace](trace.svg)\n";
  folder.write_json("bench.json", json_rows);
  folder.write_text("bench.csv", csv);
  folder.write_text("bench.md", md);
  std::printf("%s", md.c_str());
  std::printf("results in %s (bench.json, bench.csv, bench.md, trace.svg)\n", out.c_str());
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Every strategy side by side on one cluster and link, taking turns; vs the "
      "ideal and PyTorch DDP");
  f->job.add_model_and_optimizer(cmd);
  f->job.add_worker_flags(cmd);
  std::vector<std::string> known = plan::planner_names();
  known.push_back("all");
  cmd->add_option("--schedulers", f->schedulers,
                  "Comma-separated, or all:\n" + plan::planner_help())
      ->check(list_of_check(known))
      ->capture_default_str();
  cmd->add_option("--block", f->block, "Iterations per turn")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--settle", f->settle,
                  "Iterations at the start of each turn not measured (the first carries the "
                  "previous strategy's last push; a full-duplex turn after a phase-separated "
                  "one takes longer to reach its steady state)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--sweep-bandwidth", f->sweep,
                  "Bandwidths to run, both directions, e.g. 20mbit,100mbit,1gbit")
      ->check(bandwidth_list_check());
  cmd->add_option("--peers", f->peers, "Peers on the same links: ddp (needs --net netns)")
      ->check(CLI::IsMember({"ddp"}));
  cmd->add_option("--peer-script", f->peer_script, "The DDP peer script")->capture_default_str();
  cmd->add_option("--policies", f->policies,
                  "With --link-trace / --device-slowdown-trace: the re-planning policies to "
                  "compare, one job each on the same trace")
      ->check(list_of_check({"dynacomm", "dynacomm-static", "dynacomm-epoch", "oracle"}))
      ->capture_default_str();
  cmd->add_option("--out", f->out, "Results folder (default runs/bench-MODEL)");
  cmd->add_option("--threads", f->threads, "Compute threads per process (0: cores / workers)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->callback([f]() {
    // --iterations (a job flag) counts the measured iterations per strategy here.
    if (f->job.iterations > 0) f->iterations = static_cast<int>(f->job.iterations);
    run_bench(*f);
  });
}

}  // namespace dynacomm::cli
