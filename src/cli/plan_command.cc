// `dynacomm plan`: predicted iteration time of every strategy for a profile and a link.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/commands.h"
#include "plan/duplex.h"
#include "plan/planner.h"
#include "plan/quantity.h"
#include "plan/simulate.h"
#include "report/chrome_trace.h"

namespace dynacomm::cli {

namespace {

struct PlanFlags {
  std::string profile;
  std::string down = "";
  std::string up;  // empty: same as down
  std::string latency = "10ms";
  std::string overhead = "5ms";
  std::string overhead_down, overhead_up;  // empty: --overhead
  std::string scheduler = "all";
  bool json = false;
  std::string timeline;
  std::vector<std::string> sweep;  // symmetric bandwidths, one table row each
  plan::PlannerOptions planner;
  bool full_duplex = false;
  std::string aggregation = "0ms";
};

struct Row {
  plan::Plan plan;
  plan::Timeline timeline;
  double predicted_ms;
};

std::string segment_text(const plan::ModelProfile& p, const plan::Segment& s) {
  std::int64_t bytes = 0;
  for (int u = s.first; u <= s.last; ++u) bytes += p.units[u].bytes;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f MB", static_cast<double>(bytes) / 1e6);
  std::string range = s.first == s.last ? std::to_string(s.first)
                                        : std::to_string(s.first) + "-" + std::to_string(s.last);
  std::string names = s.first == s.last ? p.units[s.first].name
                                        : p.units[s.first].name + " .. " + p.units[s.last].name;
  return range + "  (" + names + ", " + buf + ")";
}

// One row per bandwidth (both directions), one column per strategy: predicted ms.
int run_sweep(const PlanFlags& f, const plan::ModelProfile& profile, plan::LinkProfile link) {
  const std::vector<std::string> names = plan::planner_names();
  std::printf(
      "%s: predicted iteration time (ms), symmetric links, %.3g ms per transmission, "
      "%.3g ms latency\n\n",
      profile.model.c_str(), link.overhead_down_ms, link.latency_ms);
  std::printf("%-14s", "bandwidth");
  for (const auto& n : names) std::printf(" %11s", n.c_str());
  std::printf(" %11s %11s\n", "ideal", "dynacomm/seq");
  for (const auto& text : f.sweep) {
    link.down_bps = link.up_bps = plan::parse_bandwidth_bps(text);
    std::printf("%-14s", plan::format_bandwidth(link.down_bps).c_str());
    double seq = 0, dyn = 0;
    for (const auto& n : names) {
      double ms = plan::predict_ms(profile, link, plan::make_plan(n, profile, link, f.planner));
      if (n == "sequential") seq = ms;
      if (n == "dynacomm") dyn = ms;
      std::printf(" %11.1f", ms);
    }
    std::printf(" %11.1f %10.2fx\n", plan::ideal_ms(profile, link), seq / dyn);
  }
  return 0;
}

// The full-duplex, cross-iteration model (docs/full-duplex.md): the steady-state period of
// the phase-separated best plan when run full duplex, and of dynacomm-fd's plan.
void print_full_duplex(const plan::ModelProfile& profile, const plan::LinkProfile& link,
                       const plan::Plan& best, double best_ms) {
  const plan::DuplexPlannerOptions o;
  const auto t0 = std::chrono::steady_clock::now();
  const plan::Plan fd = plan::plan_duplex(profile, link, o);
  const double planning_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double as_duplex = plan::simulate_duplex(profile, link, best, o.simulation).period_ms;
  const plan::DuplexResult r = plan::simulate_duplex(profile, link, fd, o.simulation);
  std::printf(
      "\nfull duplex, steady state (docs/full-duplex.md), aggregation %.3g ms per push; "
      "whole units in a searched pull order (the dynacomm-fd strategy above also searches "
      "slices and priority):\n",
      link.aggregation_ms);
  std::printf("  %s's plan, pulls overlapping the previous pushes: period %.1f ms\n",
              best.scheduler.c_str(), as_duplex);
  std::printf(
      "  dynacomm-fd: period %.1f ms, %.2fx faster than %s's %.1f ms iteration; %zu pull "
      "and %zu push segments; planned in %.0f ms\n",
      r.period_ms, best_ms / r.period_ms, best.scheduler.c_str(), best_ms, fd.pull.size(),
      fd.push.size(), planning_ms);
  std::printf("  pull segments in the order they are fetched:\n");
  for (int k : fd.pull_order)
    std::printf("    %s\n", segment_text(profile, fd.pull[static_cast<std::size_t>(k)]).c_str());
}

int run_plan(const PlanFlags& f) {
  plan::ModelProfile profile = plan::load_model_profile(f.profile);
  plan::LinkProfile link;
  if (f.down.empty() && f.sweep.empty())
    throw InvalidInput("plan: give --down (and optionally --up), or --sweep-bandwidth");
  link.down_bps = f.down.empty() ? 1e6 : plan::parse_bandwidth_bps(f.down);
  link.up_bps = f.up.empty() ? link.down_bps : plan::parse_bandwidth_bps(f.up);
  link.latency_ms = plan::parse_duration_ms(f.latency);
  const double overhead = plan::parse_duration_ms(f.overhead);
  link.overhead_down_ms =
      f.overhead_down.empty() ? overhead : plan::parse_duration_ms(f.overhead_down);
  link.overhead_up_ms = f.overhead_up.empty() ? overhead : plan::parse_duration_ms(f.overhead_up);
  link.aggregation_ms = plan::parse_duration_ms(f.aggregation);
  link.validate();
  f.planner.validate();
  if (!f.sweep.empty()) return run_sweep(f, profile, link);

  std::vector<std::string> names;
  if (f.scheduler == "all")
    names = plan::planner_names();
  else
    names.push_back(f.scheduler);

  const double ideal = plan::ideal_ms(profile, link);
  const double sequential =
      plan::simulate(profile, link, plan::make_plan("sequential", profile, link, f.planner));
  std::vector<Row> rows;
  for (const auto& name : names) {
    Row r{plan::make_plan(name, profile, link, f.planner), {}, 0};
    r.predicted_ms = r.plan.full_duplex  // a steady-state period; no one-iteration timeline
                         ? plan::predict_ms(profile, link, r.plan)
                         : plan::simulate(profile, link, r.plan, &r.timeline);
    rows.push_back(std::move(r));
  }

  if (!f.timeline.empty()) {
    report::ChromeTrace trace;
    for (std::size_t i = 0; i < rows.size(); ++i)
      trace.add_timeline(rows[i].timeline, rows[i].plan.scheduler + " (simulated)",
                         static_cast<int>(i));
    trace.write(f.timeline);
  }

  if (f.json) {
    for (const Row& r : rows) {
      // Keys in the documented order: scheduler, pull, push, predicted_ms, ideal_ms.
      nlohmann::json p = plan::to_json(r.plan);
      nlohmann::ordered_json j;
      j["scheduler"] = r.plan.scheduler;
      j["pull"] = p["pull"];
      j["push"] = p["push"];
      for (const char* key : {"full_duplex", "pull_order", "atom_params", "credit_bytes"})
        if (p.contains(key)) j[key] = p[key];
      j["predicted_ms"] = r.predicted_ms;
      j["ideal_ms"] = plan::ideal_ms(profile, link, r.plan);
      std::cout << j.dump() << "\n";
    }
    return 0;
  }

  std::printf("profile: %s, batch %d, %d units, %.2f MB, forward %.1f ms, backward %.1f ms\n",
              profile.model.c_str(), profile.batch, profile.num_units(),
              static_cast<double>(profile.total_bytes()) / 1e6, profile.total_forward_ms(),
              profile.total_backward_ms());
  std::printf(
      "link:    down %s, up %s, per transmission %.3g ms down / %.3g ms up, latency %.3g ms\n\n",
      plan::format_bandwidth(link.down_bps).c_str(), plan::format_bandwidth(link.up_bps).c_str(),
      link.overhead_down_ms, link.overhead_up_ms, link.latency_ms);
  std::printf("%-13s %14s %14s %10s %6s %6s\n", "scheduler", "predicted", "vs sequential",
              "vs ideal", "pull", "push");
  const Row* best = &rows.front();
  for (const Row& r : rows) {
    std::printf("%-13s %11.1f ms %13.2fx %9.3fx %6zu %6zu\n", r.plan.scheduler.c_str(),
                r.predicted_ms, sequential / r.predicted_ms,
                r.predicted_ms / plan::ideal_ms(profile, link, r.plan), r.plan.pull.size(),
                r.plan.push.size());
    // Ties: the later (dynacomm last). The full-duplex plan is another model: below.
    if (!r.plan.full_duplex && r.predicted_ms <= best->predicted_ms) best = &r;
  }
  std::printf("%-13s %11.1f ms %13.2fx %9.3fx %6d %6d   (layerwise, no per-transmission cost)\n",
              "ideal", ideal, sequential / ideal, 1.0, profile.num_units(), profile.num_units());
  std::string duplex;
  for (const Row& r : rows)
    if (r.plan.full_duplex) duplex += (duplex.empty() ? "" : ", ") + r.plan.scheduler;
  if (!duplex.empty())
    std::printf(
        "full duplex (%s): steady-state periods; \"vs ideal\" is to that model's bound, "
        "%.1f ms (docs/full-duplex.md)\n",
        duplex.c_str(), plan::ideal_duplex_ms(profile, link));
  std::printf("\nbest phase-separated: %s, %.1f ms per iteration\n", best->plan.scheduler.c_str(),
              best->predicted_ms);
  std::printf("  pull segments (in order):\n");
  for (const auto& s : best->plan.pull) std::printf("    %s\n", segment_text(profile, s).c_str());
  std::printf("  push segments (in send order):\n");
  for (const auto& s : best->plan.push) std::printf("    %s\n", segment_text(profile, s).c_str());
  if (f.full_duplex) print_full_duplex(profile, link, best->plan, best->predicted_ms);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Plan the pull and push of one iteration with every strategy and predict its time");
  cmd->add_option("--profile", flags->profile, "Model profile JSON (see profiles/)")->required();
  cmd->add_option("--down", flags->down, "Downlink bandwidth, e.g. 100mbit (kbit, mbit, gbit)");
  cmd->add_option("--up", flags->up, "Uplink bandwidth (default: same as --down)");
  cmd->add_option("--latency", flags->latency, "One-way latency, e.g. 10ms (us, ms, s)")
      ->capture_default_str();
  cmd->add_option("--overhead", flags->overhead, "Fixed cost of one transmission, both directions")
      ->capture_default_str();
  cmd->add_option("--overhead-down", flags->overhead_down, "Fixed cost of one pull transmission");
  cmd->add_option("--overhead-up", flags->overhead_up, "Fixed cost of one push transmission");
  std::string known = "all";
  for (const auto& n : plan::planner_names()) known += "|" + n;
  cmd->add_option("--scheduler", flags->scheduler, "Strategy: " + known)->capture_default_str();
  cmd->add_option("--sweep-bandwidth", flags->sweep,
                  "Comma-separated symmetric bandwidths: one table row each, e.g. "
                  "10mbit,100mbit,1gbit")
      ->delimiter(',');
  cmd->add_flag("--json", flags->json, "One JSON object per strategy, one per line");
  cmd->add_flag(
      "--full-duplex", flags->full_duplex,
      "Also show the full-duplex model: the best phase-separated plan run full duplex, and "
      "dynacomm-fd's plan with its pull order");
  cmd->add_option("--aggregation", flags->aggregation,
                  "PS time from a push's last gradient to its units' update (charged by the "
                  "full-duplex model)")
      ->capture_default_str();
  cmd->add_option("--timeline", flags->timeline,
                  "Write a Chrome-trace JSON of the simulated iteration(s) to this file");
  cmd->add_option("--bucket-mb", flags->planner.bucket_mb, "bucket: bucket cap in MiB")
      ->capture_default_str();
  cmd->add_option("--first-bucket-mb", flags->planner.first_bucket_mb,
                  "bucket: first bucket's cap in MiB")
      ->capture_default_str();
  cmd->add_option("--fd-evaluations", flags->planner.fd_max_evaluations,
                  "dynacomm-fd: simulations its local search may run per family")
      ->capture_default_str();
  cmd->callback([flags]() {
    int rc = run_plan(*flags);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dynacomm::cli
