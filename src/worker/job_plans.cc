#include "worker/job_plans.h"

#include <cstdio>

#include "base/error.h"
#include "plan/model/simulate.h"

namespace dynacomm::worker {

plan::Plan plan_from_peer(const nlohmann::json& j, const plan::ModelProfile& profile,
                          const plan::Slicing& slicing, const std::string& whose) {
  try {
    const std::int64_t atoms =
        j.is_object() && j.contains("atom_params") && j["atom_params"].is_number_integer()
            ? j["atom_params"].get<std::int64_t>()
            : 0;
    plan::Plan p = plan::plan_from_json(
        j, atoms > 0 ? plan::Slicing::make(profile, atoms).num_atoms() : profile.num_units(),
        whose);
    (void)slicing.lift(p);  // the job's atoms can carry it
    return p;
  } catch (const InvalidInput& x) {
    throw Error(whose + " is unusable here: " + x.what());
  }
}

namespace {

// A full-duplex plan's releases wait for every worker's gradients, so workers pushing in
// different orders stall each other (docs/full-duplex.md, "Workers that plan apart").
// Phase-separated plans stay each worker's own (DynaComm plans for each device's link).
// The adopted plans are predicted from this worker's own estimates. With --scheduler auto
// every plan is offered, so that each strategy's job-wide prediction (the slowest
// worker's) comes back in job_ms; a phase-separated one is still each worker's own.
void agree_on_plans(Comm& comm, const WorkerOptions& o, const plan::ModelProfile& profile,
                    const plan::LinkProfile& link, const plan::PlannerOptions& planner,
                    const plan::Slicing& slicing, std::vector<WorkerResult::PlanInfo>& plans,
                    std::vector<double>& job_ms, std::ostream& progress) {
  const bool all = o.scheduler == plan::kAutoScheduler && o.rotation.empty();
  net::PlanOffer offer;
  for (std::size_t k = 0; k < plans.size(); ++k)
    if (all || plans[k].plan.full_duplex)
      offer.plans.push_back(
          {static_cast<int>(k), plans[k].predicted_ms, plan::to_json(plans[k].plan).dump()});
  const std::string context = "worker " + std::to_string(o.rank) + ": the job's plans from the PS";
  for (const net::AgreedPlans::Entry& e : comm.agree_plans(offer).plans) {
    const auto k = static_cast<std::size_t>(e.index);
    if (k >= plans.size() || (!all && !plans[k].plan.full_duplex))
      throw Error(context + ": strategy " + std::to_string(k) +
                  " is not a full-duplex plan of this worker's");
    job_ms[k] = e.predicted_ms;
    const int from = e.rank;
    if (from == o.rank || !plans[k].plan.full_duplex) continue;
    const plan::Plan p = plan_from_peer(
        nlohmann::json::parse(e.plan), profile, slicing,
        context + ": rank " + std::to_string(from) + "'s plan for strategy " + std::to_string(k));
    if (!p.full_duplex || p.scheduler != plans[k].scheduler)
      throw Error(context + ": rank " + std::to_string(from) + "'s plan for strategy " +
                  std::to_string(k) + " is '" + p.scheduler + "', not full-duplex '" +
                  plans[k].scheduler + "'");
    plans[k].plan = p;
    plans[k].predicted_ms = plans[k].predicted_final_ms =
        plan::predict_plan_ms(profile, link, p, planner);
    plans[k].ideal_ms = plan::ideal_ms(profile, link, p);
    progress << "worker " << o.rank << ": " << plans[k].scheduler << " runs worker " << from
             << "'s plan, the job's slowest by their own predictions\n";
  }
}

// --scheduler auto: the strategy predicted fastest for the job, its plan id 1; `choice`
// says which and why (the runners-up with their predictions).
WorkerResult::PlanInfo choose(const WorkerOptions& o,
                              const std::vector<WorkerResult::PlanInfo>& plans,
                              const std::vector<double>& job_ms, std::ostream& progress,
                              std::string& choice, std::vector<WorkerResult::Ranked>& ranking) {
  std::vector<std::string> names;
  for (const auto& p : plans) names.push_back(p.scheduler);
  const std::vector<std::size_t> order = plan::auto_order(names, job_ms);
  for (std::size_t k : order) ranking.push_back({plans[k].scheduler, job_ms[k]});
  WorkerResult::PlanInfo best = plans[order.front()];
  best.id = 1;
  char line[96];
  std::snprintf(line, sizeof line, "%s, predicted %.1f ms per iteration", best.scheduler.c_str(),
                job_ms[order.front()]);
  choice = std::string(line) +
           (o.workers == 1    ? ""
            : o.sync == "bsp" ? " for the job (its slowest worker's prediction)"
                              : " for this worker (--sync " + o.sync + ": each runs its own)") +
           ", the fastest of all " + std::to_string(plans.size()) + " strategies; then";
  for (std::size_t i = 1; i < order.size() && i <= 3; ++i) {
    std::snprintf(line, sizeof line, " %s %.1f ms%s", plans[order[i]].scheduler.c_str(),
                  job_ms[order[i]], i < 3 && i + 1 < order.size() ? "," : "");
    choice += line;
  }
  progress << "worker " << o.rank << ": --scheduler auto chose " << choice << "\n";
  return best;
}

}  // namespace

std::vector<WorkerResult::PlanInfo> first_plans(Comm& comm, const WorkerOptions& o,
                                                const plan::ModelProfile& profile,
                                                const plan::LinkProfile& link,
                                                const plan::PlannerOptions& planner,
                                                const plan::Slicing& slicing,
                                                std::ostream& progress, std::string& choice,
                                                std::vector<WorkerResult::Ranked>& ranking) {
  std::vector<WorkerResult::PlanInfo> plans;
  const std::vector<std::string> schedulers = planned_schedulers(o);
  for (std::size_t k = 0; k < schedulers.size(); ++k) {
    plan::Plan p = plan::make_plan(schedulers[k], profile, link, planner);
    const double predicted = plan::predict_plan_ms(profile, link, p, planner);
    plans.push_back({static_cast<int>(k) + 1, schedulers[k], p, predicted, predicted,
                     plan::ideal_ms(profile, link, p), 0});
  }
  std::vector<double> job_ms;  // each strategy's prediction for the job
  for (const auto& p : plans) job_ms.push_back(p.predicted_ms);
  if (o.workers > 1 && o.sync == "bsp")
    agree_on_plans(comm, o, profile, link, planner, slicing, plans, job_ms, progress);
  if (o.scheduler == plan::kAutoScheduler && o.rotation.empty())
    plans = {choose(o, plans, job_ms, progress, choice, ranking)};
  return plans;
}

}  // namespace dynacomm::worker
