#include "worker/replanner.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "plan/model/simulate.h"
#include "ps/sync_policy.h"
#include "worker/job_plans.h"

namespace dynacomm::worker {

namespace {

// epoch and oracle take any plan predicted faster, ignoring differences in the last digits.
constexpr double kAnyGain = 1e-3;

// dynacomm-fd's search budget when re-planning, a tenth of the first plan's: the search
// runs beside training, and the next one waits four times as long as it took. Measured
// (`dynacomm plan --fd-evaluations N`, mobilenetv2 at 100 Mbit/s, 2 ms per message): 8.8 s
// with 200000 evaluations, 4.0 s with 20000 for a plan predicted 1.2% slower; resnet18
// 3.5 s and 2.5 s for the same plan.
constexpr long kReplanSearchEvaluations = 20000;

// The policy's decision for the estimates; with --compress auto, the codecs chosen afresh.
plan::ReplanDecision decide(const plan::ReplanPolicy& policy, const Replanned& r,
                            const PushCodecs& codecs, double threshold = -1) {
  if (!codecs.choose) return policy.evaluate(r.profile, r.link, threshold);
  return policy.evaluate_codecs(r.dense, codecs.options, codecs.choice, r.link, threshold);
}

// The re-planning task's thread runs at the lowest priority (nice 19, this thread only):
// on a device whose cores are busy training, the search takes the cycles training leaves
// idle (the waits for the link) instead of stretching compute. Best effort: a refusal
// leaves it as it was.
void lowest_cpu_priority() {
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);
}

std::string fmt_g(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

}  // namespace

Replanner::Replanner(ReplanContext c)
    : c_(c),
      mode_(c.o.rotation.empty() ? c.o.replan : plan::ReplanMode::kStatic),  // a rotation: static
      policy_(c.o.scheduler, c.o.planner, c.o.replan_options) {}

Replanner::~Replanner() {
  if (replanning_.valid()) replanning_.wait();
}

void Replanner::start(std::int64_t it, const plan::PlannerOptions& planner,
                      const plan::LinkProfile& link) {
  if (c_.o.scheduler == plan::kAutoScheduler)  // re-planning refines the strategy auto chose
    policy_ = plan::ReplanPolicy(c_.result.plans[0].scheduler, c_.o.planner, c_.o.replan_options);
  plan::PlannerOptions replanning = planner;  // searches with a smaller budget
  replanning.fd_max_evaluations = std::min(planner.fd_max_evaluations, kReplanSearchEvaluations);
  policy_.set_planner_options(replanning);
  current_plan_id_ = 1;
  policy_.adopt(it, c_.result.plans[0].plan, c_.estimators.codecs.apply(c_.profile), link);
  if (c_.o.workers > 1 && c_.result.plans[0].plan.full_duplex && c_.o.sync == "bsp" &&
      mode_ != plan::ReplanMode::kStatic) {
    job_plan_ = true;  // re-planned on each worker alone, the plans would part again
    job_plan_from_ = it;
    c_.progress << "worker " << c_.o.rank << ": the job runs one full-duplex plan; its workers "
                << "re-plan it together (the slowest one's proposal, through the PS)\n";
  }
  oracle_row_ = c_.link_row.load();
}

Replanned Replanner::estimates_now() const {
  return estimate(c_.estimators, c_.profile, c_.given, c_.comm.latency_ms());
}

void Replanner::say_codec_times(std::int64_t it) {
  const CodecTimes& t = c_.estimators.codec_times;
  if (t.encode_samples() < 3) return;
  const double e = t.encode_ratio(), d = t.decode_ratio();
  auto moved = [](double now, double said) {
    return said <= 0 || now > 1.5 * said || said > 1.5 * now;
  };
  if (!moved(e, said_encode_) && !moved(d, said_decode_)) return;
  said_encode_ = e;
  said_decode_ = d;
  char line[160];
  std::snprintf(line, sizeof line,
                "encoding %.2fx its time at the warm-up's end, the PS's decoding %.2fx", e, d);
  c_.progress << "worker " << c_.o.rank << ": codecs in training by iteration " << it << ": "
              << line << "; pushes now " << describe_choice(c_.estimators.codecs) << "\n";
}

void Replanner::follow_codecs(std::int64_t it, const plan::ReplanDecision& d) {
  PushCodecs& codecs = c_.estimators.codecs;
  if (!codecs.choose || d.codec_choice.empty() || d.codec_choice == codecs.choice) return;
  c_.comm.set_push_methods(d.codec_choice);
  codecs.choice = d.codec_choice;
  c_.progress << "worker " << c_.o.rank << ": pushes from iteration " << it << ": "
              << describe_choice(codecs) << "\n";
}

void Replanner::adopt(std::int64_t it, const plan::ReplanDecision& d, const Replanned& r,
                      const std::string& why, Change& change) {
  follow_codecs(it, d);
  const plan::ModelProfile p = c_.estimators.codecs.apply(r.dense);
  const plan::LinkProfile& l = r.link;
  policy_.adopt(it, d.plan, p, l);
  current_plan_id_ = static_cast<int>(c_.result.plans.size()) + 1;
  c_.result.plans.push_back({current_plan_id_, policy_.scheduler(), d.plan, d.best_ms, d.best_ms,
                             plan::ideal_ms(p, l, d.plan), 0});
  c_.result.plan_changes.push_back({it, current_plan_id_, why, d.current_ms, d.best_ms});
  change.why = why;
  change.gain_ms = d.gain_ms();
  char line[160];
  std::snprintf(line, sizeof line, "; predicted %.1f -> %.1f ms)", d.current_ms, d.best_ms);
  c_.progress << "worker " << c_.o.rank << ": plan " << current_plan_id_ << " ("
              << plan::to_string(mode_) << ") from iteration " << it << ": "
              << plan::format_segments(d.plan.pull) << " / " << plan::format_segments(d.plan.push)
              << " (" << why << line << "\n";
  c_.log.plan_changed(it, current_plan_id_, why, d.current_ms, d.best_ms);
}

// What a re-planning decided: adopted, or for a job's plan reported to the PS (its
// prediction of the plan in use, and the plan it would change to).
void Replanner::consider(std::int64_t it, const plan::ReplanDecision& d, const Replanned& r,
                         const std::string& why, Change& change) {
  if (!job_plan_) {
    if (d.change) adopt(it, d, r, why, change);
    return;
  }
  // A job's plan changes through the PS; a worker's codecs are its own.
  if (d.change) follow_codecs(it, d);
  if (!(d.current_ms > 0) || !std::isfinite(d.current_ms)) return;
  net::ReplanReport report{d.current_ms, std::nullopt};
  if (d.change && d.best_ms > 0 && std::isfinite(d.best_ms))
    report.proposal = net::ReplanReport::Proposal{d.best_ms, plan::to_json(d.plan).dump(), why};
  c_.comm.report_replan(it, report);
}

// The PS's change of the job's plan: taken when it comes, adopted from its iteration on.
void Replanner::follow_the_job(std::int64_t it, Change& change) {
  const std::string me = "worker " + std::to_string(c_.o.rank);
  if (std::optional<net::JobPlanChange> c = c_.comm.take_job_replan()) job_change_ = std::move(c);
  if (!job_change_ || it < job_change_->from_iteration) return;
  const net::JobPlanChange& c = *job_change_;
  const int from = c.rank;
  plan::ReplanDecision d;
  d.change = true;
  d.plan = plan_from_peer(nlohmann::json::parse(c.plan), c_.profile, c_.slicing,
                          me + ": rank " + std::to_string(from) + "'s proposal for the job");
  if (!d.plan.full_duplex || d.plan.scheduler != policy_.scheduler())
    throw Error(me + ": rank " + std::to_string(from) + "'s proposal for the job is '" +
                d.plan.scheduler + "', not full-duplex '" + policy_.scheduler() + "'");
  d.current_ms = c.current_ms;  // the proposer's predictions
  d.best_ms = c.predicted_ms;
  const Replanned r = estimates_now();
  const std::string why = c.why;
  adopt(it, d, r,
        "the job's plan, proposed by rank " + std::to_string(from) +
            " (the slowest by its prediction)" + (why.empty() ? "" : ": " + why),
        change);
  job_plan_from_ = it;
  job_change_.reset();
}

// Consume a finished task; start the next one when a change would be allowed.
void Replanner::dynamic(std::int64_t it, Change& change) {
  if (replanning_.valid() &&
      replanning_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    Replanned r = replanning_.get();
    // A slow planner (dynacomm-fd searches for seconds) must not take a core from training:
    // the next task waits four times as long as this one took, or starts at once when the
    // estimates have moved far from this one's (plan::SearchCadence).
    cadence_.searched(ms_between(c_.started, Clock::now()), r.planning_ms, r.profile, r.link);
    // The task fitted on copies: what the link estimators hold comes back.
    c_.estimators.down.hold(r.held_down);
    c_.estimators.up.hold(r.held_up);
    // Else it judged the job's previous plan, or the model before a change.
    if (replanning_from_ >= job_plan_from_ && replanning_from_ >= model_from_) {
      plan::ReplanDecision d = r.decision;
      d.change = d.change && policy_.due(it);
      if (replanning_from_ == model_from_ && !model_why_.empty()) d.why = model_why_ + "; " + d.why;
      consider(it, d, r, d.why, change);
    }
  }
  std::optional<Replanned> now_estimates;
  auto estimates_if_asked = [&] {
    now_estimates = estimates_now();
    return plan::SearchCadence::Estimates{now_estimates->profile, now_estimates->link};
  };
  if (replanning_.valid() || !policy_.due(it + 1)) return;
  const bool forced = search_now_;  // the model changed: no back-off
  if (!forced && !cadence_.may_start(ms_between(c_.started, Clock::now()), estimates_if_asked))
    return;
  search_now_ = false;
  if (forced) model_from_ = it;  // this search is the first on the new model
  // Said only where the back-off it skips is worth a line (a search of a quarter second
  // or more waits a second or more): a fast planner on a jittery fast link would say it
  // every few iterations and bury the progress line.
  if (!forced && cadence_.started_early() && cadence_.last_took_ms() >= 250) {
    char factor[96];
    std::snprintf(factor, sizeof factor, "x%.2f from those the last search (%.1f s) ran on",
                  cadence_.last_move(), cadence_.last_took_ms() / 1e3);
    c_.progress << "worker " << c_.o.rank << ": the estimates moved " << factor << " ("
                << plan::describe_change(cadence_.made_from().profile, cadence_.made_from().link,
                                         now_estimates->profile, now_estimates->link)
                << "): searching again now, not after the back-off\n";
  }
  replanning_from_ = it;
  replanning_ =
      std::async(std::launch::async, [policy = policy_, e = c_.estimators, profile = c_.profile,
                                      given = c_.given, latency = c_.comm.latency_ms()]() mutable {
        lowest_cpu_priority();
        const auto t0 = Clock::now();
        Replanned r = estimate(e.compute, std::move(e.down), std::move(e.up), e.aggregation,
                               e.codecs, profile, given, latency);
        r.decision = decide(policy, r, e.codecs);
        r.planning_ms = ms_between(t0, Clock::now());
        return r;
      });
}

void Replanner::round_begun(std::int64_t it, std::int64_t round) {
  if (!ps::is_backup(c_.o.sync) || mode_ != plan::ReplanMode::kDynamic) return;
  left_behind_.round(round);  // the warm-up's rounds count too
  if (it <= c_.o.warmup ||
      policy_.planner_options().pulls_answered_at_once == left_behind_.left_behind())
    return;
  plan::PlannerOptions planner = policy_.planner_options();
  planner.pulls_answered_at_once = left_behind_.left_behind();
  policy_.set_planner_options(planner);
  search_now_ = true;
  model_from_ = it + 1;  // a search started before the next iteration judged the old model
  char line[200];
  std::snprintf(line, sizeof line,
                left_behind_.left_behind()
                    ? "left behind (%d of its last 4 rounds skipped to a newer version): "
                      "planning for pulls answered at once"
                    : "back with the others (%d of its last 4 rounds skipped): planning for "
                      "pulls that wait for the update",
                left_behind_.skipped());
  model_why_ = line;
  c_.progress << "worker " << c_.o.rank << ": iteration " << it << ": " << line << "\n";
}

Replanner::Change Replanner::before_iteration(std::int64_t it, std::int64_t step, int epoch) {
  Change change;
  if (it <= c_.o.warmup || mode_ == plan::ReplanMode::kStatic) return change;
  // What the pushes cost now (dgc's density shrinks over its warm-up).
  bytes_at(c_.estimators.codecs.options, c_.slicing, it);
  say_codec_times(it);
  if (job_plan_) follow_the_job(it, change);
  if (mode_ == plan::ReplanMode::kDynamic) {
    dynamic(it, change);
  } else if (mode_ == plan::ReplanMode::kEpoch && step == 0) {
    // The paper's policy: plan afresh at every epoch's start from what was measured.
    Replanned r = estimates_now();
    r.decision = decide(policy_, r, c_.estimators.codecs, kAnyGain);
    consider(it, r.decision, r, "epoch " + std::to_string(epoch) + " starts; " + r.decision.why,
             change);
  } else if (mode_ == plan::ReplanMode::kOracle && c_.link_row.load() != oracle_row_) {
    // Handed the true link figures at every change (the overheads as estimated).
    oracle_row_ = c_.link_row.load();
    Replanned r = estimates_now();
    const plan::LinkTracePoint& row = c_.link_rows[static_cast<std::size_t>(oracle_row_)];
    r.link.down_bps = row.down_bps;
    r.link.up_bps = row.up_bps;
    r.link.latency_ms = row.latency_ms;
    r.decision = decide(policy_, r, c_.estimators.codecs, kAnyGain);
    consider(it, r.decision, r,
             "the link changed at " +
                 (c_.o.link_trace.by_iteration ? "iteration " + std::to_string(row.iteration)
                                               : fmt_g(row.time_s) + " s") +
                 " (oracle); " + r.decision.why,
             change);
  }
  return change;
}

}  // namespace dynacomm::worker
