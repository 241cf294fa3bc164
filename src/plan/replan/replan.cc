#include "plan/replan/replan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "base/error.h"
#include "plan/model/quantity.h"
#include "plan/model/simulate.h"

namespace dynacomm::plan {

ReplanMode parse_replan_mode(const std::string& text) {
  if (text == "dynamic") return ReplanMode::kDynamic;
  if (text == "static") return ReplanMode::kStatic;
  if (text == "epoch") return ReplanMode::kEpoch;
  if (text == "oracle") return ReplanMode::kOracle;
  throw InvalidInput("unknown re-planning mode '" + text +
                     "' (known: dynamic, static, epoch, oracle)");
}

const char* to_string(ReplanMode mode) {
  switch (mode) {
    case ReplanMode::kDynamic:
      return "dynamic";
    case ReplanMode::kStatic:
      return "static";
    case ReplanMode::kEpoch:
      return "epoch";
    case ReplanMode::kOracle:
      return "oracle";
  }
  return "?";
}

void ReplanOptions::validate() const {
  if (!(threshold >= 0) || !std::isfinite(threshold))
    throw InvalidInput("--replan-threshold must be a fraction >= 0, e.g. 0.05");
  if (min_interval < 1) throw InvalidInput("--replan-interval must be at least 1 iteration");
}

ReplanPolicy::ReplanPolicy(std::string scheduler, PlannerOptions planner, ReplanOptions options)
    : scheduler_(std::move(scheduler)), planner_(planner), options_(options) {
  options_.validate();
  planner_.validate();
}

void ReplanPolicy::adopt(std::int64_t iteration, const Plan& plan, const ModelProfile& profile,
                         const LinkProfile& link) {
  current_ = plan;
  made_for_profile_ = profile;
  made_for_link_ = link;
  adopted_at_ = iteration;
}

void ReplanPolicy::set_planner_options(PlannerOptions planner) {
  planner.validate();
  planner_ = std::move(planner);
}

bool ReplanPolicy::due(std::int64_t iteration) const {
  return adopted_at_ >= 0 && iteration - adopted_at_ >= options_.min_interval;
}

ReplanDecision ReplanPolicy::evaluate(const ModelProfile& profile, const LinkProfile& link,
                                      double threshold) const {
  if (adopted_at_ < 0) throw Error("re-planning: no plan adopted yet");
  if (threshold < 0) threshold = options_.threshold;
  ReplanDecision d;
  d.plan = make_plan(scheduler_, profile, link, planner_);
  d.best_ms = predict_plan_ms(profile, link, d.plan, planner_);
  d.current_ms = predict_plan_ms(profile, link, current_, planner_);
  d.change = !(d.plan == current_) && d.current_ms > d.best_ms * (1 + threshold);
  d.why = describe_change(made_for_profile_, made_for_link_, profile, link);
  return d;
}

ReplanDecision ReplanPolicy::evaluate_codecs(const ModelProfile& dense, const CodecOptions& options,
                                             const std::vector<int>& in_use,
                                             const LinkProfile& link, double threshold) const {
  if (adopted_at_ < 0) throw Error("re-planning: no plan adopted yet");
  if (threshold < 0) threshold = options_.threshold;
  const ModelProfile now = with_codecs(dense, options, in_use);
  const CodecChoice c = choose_job_codecs(
      dense, options, plan_and_predict("dynacomm", link, planner_),
      plan_and_predict(scheduler_, link, planner_), in_use, threshold, /*uniform=*/false);
  ReplanDecision d;
  d.plan = c.plan;
  d.best_ms = c.predicted_ms;
  d.codec_choice = c.choice;
  d.current_ms = predict_plan_ms(now, link, current_, planner_);
  d.change =
      (!(d.plan == current_) || c.choice != in_use) && d.current_ms > d.best_ms * (1 + threshold);
  d.why = describe_change(made_for_profile_, made_for_link_, now, link);
  return d;
}

namespace {
bool moved(double before, double after) {
  const double base = std::max(std::abs(before), 1e-9);
  return std::abs(after - before) / base > 0.05;
}
double compute_total(const ModelProfile& p) {
  double t = 0;
  for (const auto& u : p.units) t += u.forward_ms + u.backward_ms;
  return t;
}
}  // namespace

std::string describe_change(const ModelProfile& bp, const LinkProfile& bl, const ModelProfile& ap,
                            const LinkProfile& al) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (moved(bl.down_bps, al.down_bps))
    add("downlink " + format_bandwidth(bl.down_bps) + " -> " + format_bandwidth(al.down_bps));
  if (moved(bl.up_bps, al.up_bps))
    add("uplink " + format_bandwidth(bl.up_bps) + " -> " + format_bandwidth(al.up_bps));
  // Overheads below 0.1 ms are noise around zero, not a change.
  if (std::max(bl.overhead_down_ms, al.overhead_down_ms) > 0.1 &&
      moved(bl.overhead_down_ms, al.overhead_down_ms))
    add("pull overhead " + format_ms(bl.overhead_down_ms) + " -> " +
        format_ms(al.overhead_down_ms));
  if (std::max(bl.overhead_up_ms, al.overhead_up_ms) > 0.1 &&
      moved(bl.overhead_up_ms, al.overhead_up_ms))
    add("push overhead " + format_ms(bl.overhead_up_ms) + " -> " + format_ms(al.overhead_up_ms));
  if (moved(bl.latency_ms, al.latency_ms))
    add("latency " + format_ms(bl.latency_ms) + " -> " + format_ms(al.latency_ms));
  const double cb = compute_total(bp), ca = compute_total(ap);
  if (cb > 0 && moved(cb, ca)) {
    char s[64];
    std::snprintf(s, sizeof s, "compute x%.2f", ca / cb);
    add(s);
  }
  return out.empty() ? "no figure moved by more than 5%" : out;
}

double largest_move(const ModelProfile& bp, const LinkProfile& bl, const ModelProfile& ap,
                    const LinkProfile& al) {
  auto factor = [](double before, double after) {
    if (!(before > 0) || !(after > 0)) return 1.0;  // unknown: no evidence of a move
    return std::max(before / after, after / before);
  };
  return std::max({factor(bl.down_bps, al.down_bps), factor(bl.up_bps, al.up_bps),
                   factor(compute_total(bp), compute_total(ap))});
}

SearchCadence::SearchCadence(double backoff, double urgent_factor)
    : backoff_(backoff), urgent_factor_(urgent_factor) {
  if (!(backoff >= 1) || !std::isfinite(backoff))
    throw InvalidInput("re-planning: the search back-off must be a factor >= 1");
  if (!(urgent_factor > 1) || !std::isfinite(urgent_factor))
    throw InvalidInput("re-planning: the factor that cuts the back-off short must be > 1");
}

void SearchCadence::searched(double end_ms, double took_ms, const ModelProfile& profile,
                             const LinkProfile& link) {
  searched_ = true;
  end_ms_ = end_ms;
  took_ms_ = std::max(0.0, took_ms);
  made_from_ = {profile, link};
  last_was_early_ = started_early_;
}

bool SearchCadence::may_start(double now_ms, const std::function<Estimates()>& estimates) {
  started_early_ = false;
  if (!searched_ || now_ms >= end_ms_ + backoff_ * took_ms_) return true;
  if (last_was_early_) return false;
  const Estimates e = estimates();
  last_move_ = largest_move(made_from_.profile, made_from_.link, e.profile, e.link);
  started_early_ = last_move_ >= urgent_factor_;
  return started_early_;
}

}  // namespace dynacomm::plan
