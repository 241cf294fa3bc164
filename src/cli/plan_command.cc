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
#include "cli/flag_checks.h"
#include "plan/model/duplex.h"
#include "plan/model/quantity.h"
#include "plan/model/simulate.h"
#include "plan/model/slicing.h"
#include "plan/planners/planner.h"
#include "ps/sync_policy.h"
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
  std::string sync = "bsp";  // asp: the PS answers pulls at once (planner.pulls_answered_at_once)
};

struct Row {
  plan::Plan plan;
  plan::Timeline timeline;
  double predicted_ms;  // a phase-separated iteration, or a full-duplex steady-state period
};

// A segment as the user reads it: units (a sliced plan's atoms mapped to their units),
// names and bytes.
std::string segment_text(const plan::ModelProfile& p, const plan::Slicing& slicing,
                         const plan::Plan& plan, const plan::Segment& s) {
  std::int64_t bytes = 0;
  int first = s.first, last = s.last;
  if (plan.atom_params > 0) {
    for (int a = s.first; a <= s.last; ++a)
      bytes += slicing.atoms[static_cast<std::size_t>(a)].bytes;
    first = slicing.atoms[static_cast<std::size_t>(s.first)].unit;
    last = slicing.atoms[static_cast<std::size_t>(s.last)].unit;
  } else {
    for (int u = s.first; u <= s.last; ++u) bytes += p.units[static_cast<std::size_t>(u)].bytes;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f MB", static_cast<double>(bytes) / 1e6);
  auto range = [](int a, int b) {
    return a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b);
  };
  const std::string names = first == last ? p.units[static_cast<std::size_t>(first)].name
                                          : p.units[static_cast<std::size_t>(first)].name + " .. " +
                                                p.units[static_cast<std::size_t>(last)].name;
  if (plan.atom_params > 0)
    return (s.first == s.last ? "slice " : "slices ") + range(s.first, s.last) + " of unit" +
           (first == last ? " " : "s ") + range(first, last) + "  (" + names + ", " + buf + ")";
  return range(s.first, s.last) + "  (" + names + ", " + buf + ")";
}

// At most this many segments listed per direction; the rest counted.
constexpr std::size_t kListed = 12;

void print_segments(const char* title, const plan::ModelProfile& profile, const plan::Plan& plan,
                    const std::vector<plan::Segment>& segments, const std::vector<int>& order) {
  const plan::Slicing slicing = plan::Slicing::make(profile, plan.atom_params);
  std::printf("  %s:\n", title);
  for (std::size_t i = 0; i < order.size() && i < kListed; ++i)
    std::printf(
        "    %s\n",
        segment_text(profile, slicing, plan, segments[static_cast<std::size_t>(order[i])]).c_str());
  if (order.size() > kListed) std::printf("    ... and %zu more\n", order.size() - kListed);
}

std::vector<int> in_order(std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
  return v;
}

// One row per bandwidth (both directions), one column per strategy: predicted ms.
int run_sweep(const PlanFlags& f, const plan::ModelProfile& profile, plan::LinkProfile link) {
  const std::vector<std::string> names = plan::planner_names();
  std::printf(
      "%s: predicted ms per iteration (full-duplex strategies: steady-state period), symmetric "
      "links, %.3g ms per transmission, %.3g ms latency\n\n",
      profile.model.c_str(), link.overhead_down_ms, link.latency_ms);
  std::printf("%-14s", "bandwidth");
  for (const auto& n : names) std::printf(" %13s", n.c_str());
  std::printf(" %11s %13s\n", "ideal", "dynacomm/seq");
  for (const auto& text : f.sweep) {
    link.down_bps = link.up_bps = plan::parse_bandwidth_bps(text);
    std::printf("%-14s", plan::format_bandwidth(link.down_bps).c_str());
    double seq = 0, dyn = 0;
    for (const auto& n : names) {
      const plan::Plan p = plan::make_plan(n, profile, link, f.planner);
      const double ms = plan::predict_plan_ms(profile, link, p, f.planner);
      if (n == "sequential") seq = ms;
      if (n == "dynacomm") dyn = ms;
      std::printf(" %13.1f", ms);
    }
    std::printf(" %11.1f %12.2fx\n", plan::ideal_ms(profile, link), seq / dyn);
  }
  return 0;
}

// The full-duplex, cross-iteration model (docs/full-duplex.md): the best phase-separated
// plan run full duplex, against dynacomm-fd's plan (the table's own row when it has one).
void print_full_duplex(const PlanFlags& f, const plan::ModelProfile& profile,
                       const plan::LinkProfile& link, const std::vector<Row>& rows,
                       const Row& best_separated, bool list_pulls) {
  const Row* fd_row = nullptr;
  for (const Row& r : rows)
    if (r.plan.scheduler == "dynacomm-fd") fd_row = &r;
  double planning_ms = 0;
  Row fd_own;
  if (!fd_row) {
    const auto t0 = std::chrono::steady_clock::now();
    fd_own.plan = plan::make_plan("dynacomm-fd", profile, link, f.planner);
    planning_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fd_own.predicted_ms = plan::predict_plan_ms(profile, link, fd_own.plan, f.planner);
    fd_row = &fd_own;
  }
  plan::DuplexPlannerOptions o;
  o.simulation.pulls_answered_at_once = f.planner.pulls_answered_at_once;
  plan::Plan as_duplex = best_separated.plan;
  const double as_duplex_ms =
      plan::simulate_duplex(profile, link, as_duplex, o.simulation).period_ms;
  std::printf("\nfull duplex, steady state (docs/full-duplex.md), aggregation %.3g ms per push:\n",
              link.aggregation_ms);
  std::printf("  %s's plan, its pulls overlapping the previous pushes: period %.1f ms\n",
              best_separated.plan.scheduler.c_str(), as_duplex_ms);
  std::printf(
      "  dynacomm-fd: period %.1f ms, %.2fx faster than %s's %.1f ms iteration; %zu pull "
      "and %zu push transmissions%s",
      fd_row->predicted_ms, best_separated.predicted_ms / fd_row->predicted_ms,
      best_separated.plan.scheduler.c_str(), best_separated.predicted_ms, fd_row->plan.pull.size(),
      fd_row->plan.push.size(), fd_row->plan.atom_params > 0 ? " (slices of units)" : "");
  if (planning_ms > 0) std::printf("; planned in %.0f ms", planning_ms);
  std::printf("\n");
  if (!list_pulls) return;  // the recommendation below lists them
  print_segments("pull segments in the order they are fetched", profile, fd_row->plan,
                 fd_row->plan.pull,
                 fd_row->plan.pull_order.empty() ? in_order(fd_row->plan.pull.size())
                                                 : fd_row->plan.pull_order);
}

plan::LinkProfile link_from_flags(const PlanFlags& f) {
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
  return link;
}

void print_json(const plan::ModelProfile& profile, const plan::LinkProfile& link,
                const std::vector<Row>& rows) {
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
}

// The row --scheduler auto would run (plan::auto_order: ties go to the optimisers) among
// all rows, or among the phase-separated ones; nullptr for none.
const Row* fastest(const std::vector<Row>& rows, bool full_duplex_too) {
  std::vector<const Row*> candidates;
  std::vector<std::string> names;
  std::vector<double> predicted;
  for (const Row& r : rows)
    if (full_duplex_too || !r.plan.full_duplex) {
      candidates.push_back(&r);
      names.push_back(r.plan.scheduler);
      predicted.push_back(r.predicted_ms);
    }
  if (candidates.empty()) return nullptr;
  return candidates[plan::auto_order(names, predicted).front()];
}

// The table: one row per strategy; returns the fastest of all (either model) and the
// fastest phase-separated one.
std::pair<const Row*, const Row*> print_table(const plan::ModelProfile& profile,
                                              const plan::LinkProfile& link,
                                              const std::vector<Row>& rows, double sequential) {
  std::printf("profile: %s, batch %d, %d units, %.2f MB, forward %.1f ms, backward %.1f ms\n",
              profile.model.c_str(), profile.batch, profile.num_units(),
              static_cast<double>(profile.total_bytes()) / 1e6, profile.total_forward_ms(),
              profile.total_backward_ms());
  std::printf(
      "link:    down %s, up %s, per transmission %.3g ms down / %.3g ms up, latency %.3g ms\n\n",
      plan::format_bandwidth(link.down_bps).c_str(), plan::format_bandwidth(link.up_bps).c_str(),
      link.overhead_down_ms, link.overhead_up_ms, link.latency_ms);
  std::printf("%-13s %14s %14s %10s %10s %10s\n", "scheduler", "predicted", "vs sequential",
              "vs ideal", "pull msgs", "push msgs");
  bool sliced = false;
  for (const Row& r : rows) {
    const char* mark = r.plan.atom_params > 0 ? "*" : " ";
    sliced = sliced || r.plan.atom_params > 0;
    std::printf("%-13s %11.1f ms %13.2fx %9.3fx %9zu%s %9zu%s%s\n", r.plan.scheduler.c_str(),
                r.predicted_ms, sequential / r.predicted_ms,
                r.predicted_ms / plan::ideal_ms(profile, link, r.plan), r.plan.pull.size(), mark,
                r.plan.push.size(), mark, r.plan.full_duplex ? "  full duplex" : "");
  }
  std::printf("%-13s %11.1f ms %13.2fx %9.3fx %10d %10d   (layerwise, no per-transmission cost)\n",
              "ideal", plan::ideal_ms(profile, link), sequential / plan::ideal_ms(profile, link),
              1.0, profile.num_units(), profile.num_units());
  if (sliced) std::printf("* counts slices of units (atoms), not whole units\n");
  std::string duplex;
  for (const Row& r : rows)
    if (r.plan.full_duplex) duplex += (duplex.empty() ? "" : ", ") + r.plan.scheduler;
  if (!duplex.empty())
    std::printf(
        "full duplex (%s): steady-state periods, the time per iteration once pulls overlap the "
        "previous pushes; \"vs ideal\" is to that model's bound, %.1f ms (docs/full-duplex.md)\n",
        duplex.c_str(), plan::ideal_duplex_ms(profile, link));
  return {fastest(rows, true), fastest(rows, false)};
}

// The strategy to run, its segments, and the command line that runs it.
void print_recommendation(const PlanFlags& f, const plan::ModelProfile& profile, const Row& best) {
  std::printf("\nrecommended: %s, %.1f ms per iteration%s\n", best.plan.scheduler.c_str(),
              best.predicted_ms, best.plan.full_duplex ? " (steady-state period)" : "");
  print_segments(
      best.plan.full_duplex ? "pull segments in the order they are fetched"
                            : "pull segments (in order)",
      profile, best.plan, best.plan.pull,
      best.plan.pull_order.empty() ? in_order(best.plan.pull.size()) : best.plan.pull_order);
  print_segments("push segments (in send order)", profile, best.plan, best.plan.push,
                 in_order(best.plan.push.size()));
  std::string cmd = "dynacomm train --model " + profile.model + " --batch " +
                    std::to_string(profile.batch) + " --scheduler " + best.plan.scheduler +
                    " --down " + f.down;
  if (!f.up.empty()) cmd += " --up " + f.up;
  cmd += " --latency " + f.latency;
  if (f.sync != "bsp") cmd += " --sync " + f.sync;
  std::printf("run it (links emulated on this machine): %s\n", cmd.c_str());
}

int run_plan(const PlanFlags& f) {
  plan::ModelProfile profile = plan::load_model_profile(f.profile);
  const plan::LinkProfile link = link_from_flags(f);
  f.planner.validate();
  if (!f.sweep.empty()) return run_sweep(f, profile, link);

  std::vector<std::string> names;
  if (f.scheduler == "all")
    names = plan::planner_names();
  else
    names.push_back(f.scheduler);

  const double sequential =
      plan::simulate(profile, link, plan::make_plan("sequential", profile, link, f.planner));
  std::vector<Row> rows;
  for (const auto& name : names) {
    Row r{plan::make_plan(name, profile, link, f.planner), {}, 0};
    r.predicted_ms = r.plan.full_duplex  // a steady-state period; no one-iteration timeline
                         ? plan::predict_plan_ms(profile, link, r.plan, f.planner)
                         : plan::simulate(profile, link, r.plan, &r.timeline);
    rows.push_back(std::move(r));
  }

  if (!f.timeline.empty()) {
    report::ChromeTrace trace;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (!rows[i].plan.full_duplex)
        trace.add_timeline(rows[i].timeline, rows[i].plan.scheduler + " (simulated)",
                           static_cast<int>(i));
    trace.write(f.timeline);
  }
  if (f.json) {
    print_json(profile, link, rows);
    return 0;
  }
  const auto [best, best_separated] = print_table(profile, link, rows, sequential);
  if (f.full_duplex) {
    Row seq_row{plan::make_plan("sequential", profile, link, f.planner), {}, sequential};
    print_full_duplex(f, profile, link, rows, best_separated ? *best_separated : seq_row,
                      best->plan.scheduler != "dynacomm-fd");
  }
  print_recommendation(f, profile, *best);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Plan the pull and push of one iteration with every strategy and predict its time");
  cmd->add_option("--profile", flags->profile, "Model profile JSON (see profiles/)")->required();
  cmd->add_option("--down", flags->down, "Downlink bandwidth, e.g. 100mbit (kbit, mbit, gbit)")
      ->check(bandwidth_check());
  cmd->add_option("--up", flags->up, "Uplink bandwidth (default: same as --down)")
      ->check(bandwidth_check());
  cmd->add_option("--latency", flags->latency, "One-way latency, e.g. 10ms (us, ms, s)")
      ->check(duration_check())
      ->capture_default_str();
  cmd->add_option("--overhead", flags->overhead, "Fixed cost of one transmission, both directions")
      ->check(duration_check())
      ->capture_default_str();
  cmd->add_option("--overhead-down", flags->overhead_down, "Fixed cost of one pull transmission")
      ->check(duration_check());
  cmd->add_option("--overhead-up", flags->overhead_up, "Fixed cost of one push transmission")
      ->check(duration_check());
  std::vector<std::string> known = plan::planner_names();
  known.insert(known.begin(), "all");
  cmd->add_option("--scheduler", flags->scheduler, "Strategy, or all:\n" + plan::planner_help())
      ->check(CLI::IsMember(known))
      ->capture_default_str();
  cmd->add_option("--sweep-bandwidth", flags->sweep,
                  "Comma-separated symmetric bandwidths: one table row each, e.g. "
                  "10mbit,100mbit,1gbit")
      ->check(bandwidth_check())
      ->delimiter(',');
  cmd->add_flag("--json", flags->json, "One JSON object per strategy, one per line");
  cmd->add_flag(
      "--full-duplex", flags->full_duplex,
      "Also show the full-duplex model: the best phase-separated plan run full duplex, and "
      "dynacomm-fd's plan with its pull order");
  cmd->add_option("--aggregation", flags->aggregation,
                  "PS time from a push's last gradient to its units' update (charged by the "
                  "full-duplex model)")
      ->check(duration_check())
      ->capture_default_str();
  cmd->add_option("--sync", flags->sync,
                  "The job's synchronisation, as the plans are for: bsp, or asp (the PS answers "
                  "pulls at once; the full-duplex strategies are planned and predicted for it)")
      ->check(CLI::IsMember({"bsp", "asp"}))
      ->capture_default_str();
  cmd->add_option("--timeline", flags->timeline,
                  "Write a Chrome-trace JSON of the simulated iteration(s) to this file");
  cmd->add_option("--bucket-mb", flags->planner.bucket_mb, "bucket: bucket cap in MiB")
      ->check(CLI::Range(1e-6, 1e6))
      ->capture_default_str();
  cmd->add_option("--first-bucket-mb", flags->planner.first_bucket_mb,
                  "bucket: first bucket's cap in MiB")
      ->check(CLI::Range(1e-6, 1e6))
      ->capture_default_str();
  cmd->add_option("--fd-evaluations", flags->planner.fd_max_evaluations,
                  "dynacomm-fd: simulations its local search may run per family")
      ->check(CLI::Range(1L, 1000000000L))
      ->capture_default_str();
  cmd->callback([flags]() {
    flags->planner.pulls_answered_at_once = ps::is_asp(flags->sync);
    int rc = run_plan(*flags);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dynacomm::cli
