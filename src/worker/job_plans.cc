#include "worker/job_plans.h"

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
// The adopted plans are predicted from this worker's own estimates.
void agree_on_full_duplex_plans(Comm& comm, const WorkerOptions& o,
                                const plan::ModelProfile& profile, const plan::LinkProfile& link,
                                const plan::PlannerOptions& planner, const plan::Slicing& slicing,
                                std::vector<WorkerResult::PlanInfo>& plans,
                                std::ostream& progress) {
  net::PlanOffer offer;
  for (std::size_t k = 0; k < plans.size(); ++k)
    if (plans[k].plan.full_duplex)
      offer.plans.push_back(
          {static_cast<int>(k), plans[k].predicted_ms, plan::to_json(plans[k].plan).dump()});
  const std::string context = "worker " + std::to_string(o.rank) + ": the job's plans from the PS";
  for (const net::AgreedPlans::Entry& e : comm.agree_plans(offer).plans) {
    const auto k = static_cast<std::size_t>(e.index);
    if (k >= plans.size() || !plans[k].plan.full_duplex)
      throw Error(context + ": strategy " + std::to_string(k) +
                  " is not a full-duplex plan of this worker's");
    const int from = e.rank;
    if (from == o.rank) continue;
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

}  // namespace

std::vector<WorkerResult::PlanInfo> first_plans(Comm& comm, const WorkerOptions& o,
                                                const plan::ModelProfile& profile,
                                                const plan::LinkProfile& link,
                                                const plan::PlannerOptions& planner,
                                                const plan::Slicing& slicing,
                                                std::ostream& progress) {
  std::vector<WorkerResult::PlanInfo> plans;
  const std::vector<std::string> schedulers =
      o.rotation.empty() ? std::vector<std::string>{o.scheduler} : o.rotation;
  for (std::size_t k = 0; k < schedulers.size(); ++k) {
    plan::Plan p = plan::make_plan(schedulers[k], profile, link, planner);
    const double predicted = plan::predict_plan_ms(profile, link, p, planner);
    plans.push_back({static_cast<int>(k) + 1, schedulers[k], p, predicted, predicted,
                     plan::ideal_ms(profile, link, p), 0});
  }
  if (o.workers > 1)
    agree_on_full_duplex_plans(comm, o, profile, link, planner, slicing, plans, progress);
  return plans;
}

}  // namespace dynacomm::worker
