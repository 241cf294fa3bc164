// Planners: pure functions (model profile, link profile, options) -> Plan, chosen by name.
//
// Every strategy the project compares is a planner; the runtime executes any plan, so
// every comparison is one of plans alone. Adding a strategy is one new file under
// planners/ and one line in planner_registry.cc.
//
//   Plan p = make_plan("dynacomm", profile, link, PlannerOptions{});
//   for (const auto& info : planner_registry()) std::cout << info.name << "\n";
//
// Planners are stateless and thread-safe. They assume a validated profile and link (the
// public entry point make_plan validates them and throws InvalidInput otherwise).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"

namespace dynacomm::plan {

struct PlannerOptions {
  double bucket_mb = 25.0;       // `bucket`: bucket cap in MB (1 MB = 2^20 bytes), as PyTorch DDP
  double first_bucket_mb = 1.0;  // `bucket`: cap of the first bucket in MB, as PyTorch DDP
  std::int64_t p3_slice_params = 40000;  // `p3`: slice size, as the P3 paper
  std::int64_t p3_credit_slices = 4;     // `p3`: slices unacknowledged at a time on the uplink
  std::int64_t bytescheduler_partition_params = 1000000;  // `bytescheduler`: its default
  std::int64_t bytescheduler_credit_params = 4000000;     // `bytescheduler`: its default
                                                          // credit, the start of its search
  // `dynacomm-fd`: besides whole units, it searches plans over units cut into slices of
  // these sizes (parameters), and keeps the fastest.
  std::vector<std::int64_t> fd_slice_params{1000000, 200000, 40000};
  // `dynacomm-fd`: simulations its local search may run per family searched (above the
  // exhaustive size; DuplexPlannerOptions::max_evaluations). Re-planning passes fewer.
  long fd_max_evaluations = 200000;
  // Several workers whose compute differs: with workers > 1 and a spread given, a
  // full-duplex plan is predicted with the model of several workers (plan/model/duplex.h), worker
  // w of iteration k computing with the profile scaled by compute_spread[(k + w) % n]
  // (predict_plan_ms), and dynacomm-fd picks from its shortlist by that prediction. Else,
  // and for phase-separated plans, the workers are modelled alike (one worker).
  int workers = 1;
  std::vector<ComputeFactors> compute_spread;
  // The PS answers this worker's pulls without waiting for any push (--sync asp; a
  // straggler under backup:B too, not planned for): full-duplex plans are then planned and
  // predicted with simulate_at_once (plan/model/duplex.h), one worker on its own, its
  // compute drawn from compute_spread when given. There its push acks queue on the
  // downlink behind the next iteration's pull replies, so a plan with a push credit leaves
  // the uplink idle behind them (a 5 Mbit/s straggler under ASP ran 9.8 s an iteration on
  // its credit plan, 5.6 s without; docs/sync.md).
  bool pulls_answered_at_once = false;

  // Throws InvalidInput naming the option when a value is not positive and finite (the
  // spread's sizes are checked against the profile where it is used).
  void validate() const;
  bool models_workers() const { return workers > 1 && !compute_spread.empty(); }
  // The slice sizes (parameters) the named schedulers cut units into; empty when none is
  // sliced. The job's runtime uses atoms that divide them all (plan/model/slicing.h).
  std::vector<std::int64_t> slice_params(const std::vector<std::string>& schedulers) const;
};

using PlannerFn = Plan (*)(const ModelProfile&, const LinkProfile&, const PlannerOptions&);

using SliceFn = std::vector<std::int64_t> (*)(const PlannerOptions&);

// Everything about a planner, in one place: what lists, help texts, errors and the
// runtime's atoms read.
struct PlannerInfo {
  const char* name;
  const char* summary;  // one line for --help and docs
  PlannerFn fn;
  bool full_duplex = false;  // its plans overlap the next iteration's pulls with the pushes
  // The slice sizes (parameters) it cuts units into; nullptr: whole units.
  SliceFn slices = nullptr;
  const char* tuned_by = "";  // the PlannerOptions (and their flags) it reads
};

// Not a planner: every planner's plan predicted, the fastest run (worker/worker.h).
constexpr const char* kAutoScheduler = "auto";

// --scheduler auto's order of the strategies (indices into `schedulers`), the one it runs
// first: by `predicted_ms`, fastest first, except that among those tied with the fastest
// (within 1e-6 relative) the exact optimisers come first, dynacomm-fd then dynacomm, in
// `schedulers`' order otherwise. dynacomm's DP is optimal over every segmentation its
// model has, so a fixed rule (sequential, layerwise, greedy, mgwfbp, bucket) at best ties
// it; and re-planning refines the chosen strategy's plan as the links move, where a fixed
// rule re-plans to itself (a device on a 5 Mbit/s link, where sequential tied dynacomm,
// kept its sequential plan after the link came back to 100 Mbit/s).
std::vector<std::size_t> auto_order(const std::vector<std::string>& schedulers,
                                    const std::vector<double>& predicted_ms);

// All planners, in the order they are reported (sequential first: the baseline).
const std::vector<PlannerInfo>& planner_registry();
std::vector<std::string> planner_names();
// One line per planner, "  name  summary", for help texts.
std::string planner_help();
// The registry's entry; InvalidInput naming the known ones.
const PlannerInfo& planner_info(const std::string& name);

// Validates inputs, runs the named planner, stamps the plan's scheduler name and checks the
// result covers every unit. Throws InvalidInput for an unknown name (listing the known
// ones) or bad inputs.
Plan make_plan(const std::string& name, const ModelProfile& profile, const LinkProfile& link,
               const PlannerOptions& options);

// A plan's predicted period as the planners and the runtime state it: for a full-duplex plan,
// predict_at_once_ms when options.pulls_answered_at_once (over the spread's samples of
// `profile`, or `profile`), else the model of several workers when
// options.models_workers() (predict_duplex_workers_ms over the spread's samples); else
// predict_ms (simulate.h).
double predict_plan_ms(const ModelProfile& profile, const LinkProfile& link, const Plan& plan,
                       const PlannerOptions& options);

}  // namespace dynacomm::plan
