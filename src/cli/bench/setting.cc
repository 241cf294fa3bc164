#include "cli/bench/setting.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>

#include "base/stats.h"
#include "cli/bench/common.h"
#include "cli/bench/ddp_peer.h"
#include "cli/bench/notes.h"
#include "cli/bench/rotation.h"
#include "cli/cluster_job.h"
#include "worker/metrics.h"

namespace dynacomm::cli::bench {

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
    topology =
        std::make_unique<cluster::NetnsTopology>(j.workers, link_rates(per_worker), cloud_rates(j));
  // The progress line: which setting, and the rotation's turns.
  const std::vector<std::string> sweep = split(f.sweep);
  const auto at = std::find(sweep.begin(), sweep.end(), bw);
  cluster::StatusStyle style{"bench " + bw, j.warmup, f.block};
  if (sweep.size() > 1 && at != sweep.end())
    style.label +=
        " (" + std::to_string(at - sweep.begin() + 1) + "/" + std::to_string(sweep.size()) + ")";
  const RunSummary summary = run_cluster_job(j, per_worker, dir, threads, topology.get(), style);
  const auto metrics = worker::read_metrics_csv(dir + "/metrics.csv");
  Measured sel =
      measured_iterations(metrics, repredict_run(dir, summary, wo), j.warmup, f.block, settle);
  auto& [by_plan, online_by_plan, ideal_by_plan, slowest_by_plan, spread_by_plan, online_down,
         online_up] = sel;
  const double run_ideal = summary.ideal_ms;
  std::map<std::string, Stats> measured;
  for (const auto& p : summary.plans) measured[p.scheduler] = stats_of(by_plan[p.id]);
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
  report::GanttChart gantt{j.model + ": one measured iteration per strategy, worker 0, " + bw +
                               " (full duplex: the steady state, with the neighbouring iterations)",
                           {}};
  std::ifstream trace_in(dir + "/trace.json");
  const nlohmann::json trace = nlohmann::json::parse(trace_in, nullptr, false);
  const double run_ideal_online = phase_separated_ideal(summary, ideal_by_plan);
  // A full-duplex plan is held to its own model's ideal (plan/model/duplex.h); the others and
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
        {"measured_link", summary.measured_link}};
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
  for (const auto& p : summary.plans) {
    const std::string& name = p.scheduler;
    add_row(name, measured[name], p.predicted_ms, median(online_by_plan[p.id]),
            p.predicted_final_ms, p.ideal_ms, median(ideal_by_plan[p.id]));
    // The job's warm-up prediction: the largest any worker made for this plan (each for
    // its own link and compute), as the pushes reported it.
    if (const double job = median(slowest_by_plan[p.id]); job > 0) {
      rows.back()["predicted_slowest_ms"] = job;
      rows.back()["measured_over_predicted_slowest"] = measured[name].median / job;
    }
    // With several workers: the period of workers whose compute differs as worker 0's did
    // over its last iterations (plan::predict_duplex_workers_ms), online.
    if (const double w = median(spread_by_plan[p.id]); w > 0) {
      rows.back()["predicted_workers_ms"] = w;
      rows.back()["measured_over_predicted_workers"] = measured[name].median / w;
      spread_note += (spread_note.empty() ? "" : ", ") + name + " " + fmt("%.1f", w) +
                     " ms (measured/predicted " + fmt("%.2f", measured[name].median / w) + ")";
    }
    const int k = p.id - 1;
    if (!trace.is_discarded())
      gantt.rows.push_back(gantt_row(trace, name,
                                     j.warmup + static_cast<std::int64_t>(k) * f.block + settle,
                                     p.full_duplex()));
  }
  std::string peer_note;
  for (const auto& peer : f.peers) {
    (void)peer;  // ddp
    const DdpRun ddp = run_ddp(f, j, *topology, dir, threads);
    add_row("pytorch-ddp", ddp.iterations, 0, 0, 0, run_ideal, run_ideal_online);
    peer_note += ddp_note(ddp.params, j, summary);
  }
  table += setting_note(j, summary, run_ideal, run_ideal_online, online_down, online_up,
                        spread_note, peer_note);
  md += table;
  folder.write_text("bench-" + bw + ".svg", report::render(bars));
  if (!gantt.rows.empty()) folder.write_text("gantt-" + bw + ".svg", report::render(gantt));
  md += "![iteration time](bench-" + bw + ".svg)\n![one iteration](gantt-" + bw + ".svg)\n\n";
}

}  // namespace dynacomm::cli::bench
