#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "plan/duplex.h"
#include "plan/planner.h"
#include "plan/simulate.h"
#include "plan/slicing.h"

namespace dynacomm::plan {

// Each planner lives in planners/<name>.cc.
Plan plan_sequential(const ModelProfile&, const LinkProfile&, const PlannerOptions&);
Plan plan_layerwise(const ModelProfile&, const LinkProfile&, const PlannerOptions&);
Plan plan_greedy(const ModelProfile&, const LinkProfile&, const PlannerOptions&);
Plan plan_mgwfbp(const ModelProfile&, const LinkProfile&, const PlannerOptions&);
Plan plan_bucket(const ModelProfile&, const LinkProfile&, const PlannerOptions&);
Plan plan_dynacomm(const ModelProfile&, const LinkProfile&, const PlannerOptions&);
Plan plan_dynacomm_fd(const ModelProfile&, const LinkProfile&, const PlannerOptions&);
Plan plan_p3(const ModelProfile&, const LinkProfile&, const PlannerOptions&);
Plan plan_bytescheduler(const ModelProfile&, const LinkProfile&, const PlannerOptions&);

const std::vector<PlannerInfo>& planner_registry() {
  static const std::vector<PlannerInfo> registry = {
      {"sequential", "one pull of everything, compute, one push of everything", plan_sequential},
      {"layerwise", "one transmission per unit, both ways (WFBP / Poseidon)", plan_layerwise},
      {"greedy", "iBatch-style: grow a segment while that delays nothing waiting on it",
       plan_greedy},
      {"mgwfbp", "MG-WFBP rule: merge a unit into its neighbour when that is not slower",
       plan_mgwfbp},
      {"bucket", "fixed-size buckets, PyTorch DDP style (first 1 MB, then 25 MB)", plan_bucket},
      {"dynacomm", "exact DP-optimal segments for pull and push", plan_dynacomm},
      {"dynacomm-fd",
       "full duplex: next iteration's pulls overlap this one's pushes; shortest steady-state "
       "period (searched)",
       plan_dynacomm_fd},
      {"p3", "P3: 40,000-parameter slices, lowest layer first, across iterations", plan_p3},
      {"bytescheduler",
       "ByteScheduler: 1M-parameter partitions, priority, credit (searched from 4M)",
       plan_bytescheduler},
  };
  return registry;
}

std::vector<std::string> planner_names() {
  std::vector<std::string> names;
  for (const auto& p : planner_registry()) names.emplace_back(p.name);
  return names;
}

std::string planner_help() {
  std::string out;
  for (const auto& p : planner_registry()) {
    std::string name = p.name;
    name.resize(std::max<std::size_t>(name.size(), 14), ' ');
    out += "  " + name + p.summary + "\n";
  }
  return out;
}

void PlannerOptions::validate() const {
  if (!std::isfinite(bucket_mb) || bucket_mb <= 0)
    throw InvalidInput("planner option bucket_mb: must be positive");
  if (!std::isfinite(first_bucket_mb) || first_bucket_mb <= 0)
    throw InvalidInput("planner option first_bucket_mb: must be positive");
  if (p3_slice_params <= 0 || p3_credit_slices <= 0 || bytescheduler_partition_params <= 0 ||
      bytescheduler_credit_params <= 0)
    throw InvalidInput("planner options: slice, partition and credit sizes must be positive");
  for (std::int64_t s : fd_slice_params)
    if (s <= 0) throw InvalidInput("planner options: dynacomm-fd slice sizes must be positive");
  if (workers < 1) throw InvalidInput("planner options: workers must be at least 1");
  if (fd_max_evaluations < 1)
    throw InvalidInput("planner options: dynacomm-fd's search needs at least 1 evaluation");
  for (const ComputeFactors& f : compute_spread)
    for (const std::vector<double>* pass : {&f.forward, &f.backward})
      for (double x : *pass)
        if (!(x > 0) || !std::isfinite(x))
          throw InvalidInput("planner options: compute spread factors must be positive and finite");
}

std::vector<std::int64_t> PlannerOptions::slice_params(
    const std::vector<std::string>& schedulers) const {
  std::vector<std::int64_t> sizes;
  for (const auto& s : schedulers) {
    if (s == "p3") sizes.push_back(p3_slice_params);
    if (s == "bytescheduler") sizes.push_back(bytescheduler_partition_params);
    if (s == "dynacomm-fd")
      sizes.insert(sizes.end(), fd_slice_params.begin(), fd_slice_params.end());
  }
  return sizes;
}

Plan make_plan(const std::string& name, const ModelProfile& profile, const LinkProfile& link,
               const PlannerOptions& options) {
  for (const auto& p : planner_registry()) {
    if (name != p.name) continue;
    profile.validate();
    link.validate();
    options.validate();
    Plan plan = p.fn(profile, link, options);
    plan.scheduler = p.name;
    // A planner bug must not reach the runtime: every unit, or atom, exactly once.
    plan.validate(plan.atom_params > 0 ? Slicing::make(profile, plan.atom_params).num_atoms()
                                       : profile.num_units());
    return plan;
  }
  std::string known;
  for (const auto& n : planner_names()) known += (known.empty() ? "" : ", ") + n;
  throw InvalidInput("unknown scheduler '" + name + "' (known: " + known + ")");
}

double predict_plan_ms(const ModelProfile& profile, const LinkProfile& link, const Plan& plan,
                       const PlannerOptions& options) {
  if (!plan.full_duplex || !options.models_workers()) return predict_ms(profile, link, plan);
  std::vector<ModelProfile> samples;
  for (const ComputeFactors& f : options.compute_spread) samples.push_back(scaled(profile, f));
  return predict_duplex_workers_ms(samples, options.workers, link, plan);
}

}  // namespace dynacomm::plan
