// Re-planning while training runs: when to change the plan, and to which.
//
// The policy keeps the plan in use and the estimates it was made for. Given new estimates
// it re-predicts the plan in use under them and plans afresh; it changes plan when the
// fresh plan is predicted faster by more than `threshold` (a fraction of the plan in use's
// time) and at least `min_interval` iterations have passed since the last change. The
// threshold is the hysteresis that keeps noise in the estimates from flipping between two
// nearly equal plans; the interval bounds how often a change can happen at all. The clock
// is the iteration number the caller passes in, so the policy is tested without sleeping.
//
//   ReplanPolicy policy("dynacomm", {}, {0.05, 3});
//   policy.adopt(2, plan, profile, link);                 // after warm-up
//   if (policy.due(it)) {
//     ReplanDecision d = policy.evaluate(new_profile, new_link);   // any thread
//     if (d.change) policy.adopt(it + 1, d.plan, new_profile, new_link);
//   }
//
// Modes, as `dynacomm bench --link-trace` compares them: dynamic (the above), static
// (planned once after warm-up), epoch (the paper's: re-plan at every epoch start, whatever
// the gain) and oracle (re-plan at every change of the link, handed its true figures).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "plan/model/plan.h"
#include "plan/model/profile.h"
#include "plan/planners/codec_choice.h"
#include "plan/planners/planner.h"

namespace dynacomm::plan {

enum class ReplanMode { kDynamic, kStatic, kEpoch, kOracle };
ReplanMode parse_replan_mode(const std::string& text);  // throws InvalidInput listing modes
const char* to_string(ReplanMode mode);

struct ReplanOptions {
  double threshold = 0.05;        // change when the best plan is faster by more than this
  std::int64_t min_interval = 3;  // iterations between changes (and after the first plan)

  void validate() const;  // throws InvalidInput naming the option
};

struct ReplanDecision {
  bool change = false;
  Plan plan;              // the best plan for the estimates
  double current_ms = 0;  // the plan in use, predicted under the estimates
  double best_ms = 0;     // the best plan, predicted under the estimates
  std::string why;        // what moved since the plan in use was made
  std::vector<int> codec_choice;  // evaluate_codecs: the choice the best plan is made for
  double gain_ms() const { return current_ms - best_ms; }
};

class ReplanPolicy {
 public:
  ReplanPolicy(std::string scheduler, PlannerOptions planner, ReplanOptions options);

  // The plan now in use from `iteration` on, and the estimates it was made for.
  void adopt(std::int64_t iteration, const Plan& plan, const ModelProfile& profile,
             const LinkProfile& link);
  bool adopted() const { return adopted_at_ >= 0; }
  // What later plans are made with (e.g. the compute spread, known after the warm-up).
  void set_planner_options(PlannerOptions planner);
  const PlannerOptions& planner_options() const { return planner_; }
  // Whether a change may take effect at `iteration` (min_interval after the last one).
  bool due(std::int64_t iteration) const;
  // Plans for the estimates and compares; `threshold` < 0 uses the option. Pure and
  // const: safe to run on another thread on a copy of the policy.
  ReplanDecision evaluate(const ModelProfile& profile, const LinkProfile& link,
                          double threshold = -1) const;
  // The same with the pushes' codecs chosen afresh per unit (--compress auto,
  // codec_choice.h): `dense` is the estimates' profile without codecs; the plan in use is
  // predicted with the choice in use, the best plan is the scheduler's for the best choice
  // (choose_job_codecs, searched phase-separated). A change of the choice alone is a change.
  ReplanDecision evaluate_codecs(const ModelProfile& dense, const CodecOptions& options,
                                 const std::vector<int>& in_use, const LinkProfile& link,
                                 double threshold = -1) const;

  const Plan& current() const { return current_; }
  const std::string& scheduler() const { return scheduler_; }

 private:
  std::string scheduler_;
  PlannerOptions planner_;
  ReplanOptions options_;
  Plan current_;
  ModelProfile made_for_profile_;
  LinkProfile made_for_link_;
  std::int64_t adopted_at_ = -1;
};

// When the next re-planning search may start, for a planner slow enough to matter
// (dynacomm-fd searches for seconds beside training). A search takes a core from training,
// so the next one waits `backoff` times as long as the last one took. But when the
// estimates have moved by `urgent_factor` or more since the ones the last search was made
// from (a link that stepped, a device that slowed), that search judged a world that is
// gone, and the next may start at once; not twice in a row, so a link that keeps moving
// costs at most two searches per back-off. The caller starts a search whenever may_start
// says yes. The clock is whatever milliseconds the caller passes in, so it is tested
// without sleeping.
//
//   SearchCadence cadence;
//   if (cadence.may_start(now_ms, [&] { return estimates_now(); })) start_search();
//   ...
//   cadence.searched(end_ms, took_ms, profile, link);   // the estimates it was made from
class SearchCadence {
 public:
  struct Estimates {
    ModelProfile profile;
    LinkProfile link;
  };
  explicit SearchCadence(double backoff = 4, double urgent_factor = 1.5);

  // The search last started ended at `end_ms`, after `took_ms`, made from these estimates.
  void searched(double end_ms, double took_ms, const ModelProfile& profile,
                const LinkProfile& link);
  // Whether a search may start at `now_ms`; `estimates` is called only when the answer
  // depends on them. Before any search: at once.
  bool may_start(double now_ms, const std::function<Estimates()>& estimates);
  // Whether the last yes came early, for the move, and by what factor the estimates had
  // moved (1 until asked).
  bool started_early() const { return started_early_; }
  double last_move() const { return last_move_; }
  const Estimates& made_from() const { return made_from_; }  // the last search's
  double last_took_ms() const { return took_ms_; }           // and how long it took

 private:
  double backoff_, urgent_factor_;
  bool searched_ = false;
  double end_ms_ = 0, took_ms_ = 0;
  Estimates made_from_;
  bool started_early_ = false;   // the last search started (or the last yes) was early
  bool last_was_early_ = false;  // the search that ended last had started early
  double last_move_ = 1;
};

// The largest factor (>= 1, either way) by which the downlink or uplink bandwidth or the
// total compute differ between two sets of estimates.
double largest_move(const ModelProfile& before_profile, const LinkProfile& before_link,
                    const ModelProfile& after_profile, const LinkProfile& after_link);

// "downlink 95.0 Mbit/s -> 9.8 Mbit/s, compute x2.05", naming what moved by more than 5%
// between two sets of estimates ("no figure moved by more than 5%" otherwise).
std::string describe_change(const ModelProfile& before_profile, const LinkProfile& before_link,
                            const ModelProfile& after_profile, const LinkProfile& after_link);

}  // namespace dynacomm::plan
