#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "plan/model/duplex.h"
#include "plan/model/simulate.h"
#include "plan/model/slicing.h"
#include "plan/planners/planner.h"

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

namespace {
std::vector<std::int64_t> p3_slices(const PlannerOptions& o) { return {o.p3_slice_params}; }
std::vector<std::int64_t> bytescheduler_slices(const PlannerOptions& o) {
  return {o.bytescheduler_partition_params};
}
std::vector<std::int64_t> fd_slices(const PlannerOptions& o) { return o.fd_slice_params; }
}  // namespace

const std::vector<PlannerInfo>& planner_registry() {
  static const std::vector<PlannerInfo> registry = {
      {"sequential", "one pull of everything, compute, one push of everything", plan_sequential},
      {"layerwise", "one transmission per unit, both ways (WFBP / Poseidon)", plan_layerwise},
      {"greedy", "iBatch-style: grow a segment while that delays nothing waiting on it",
       plan_greedy},
      {"mgwfbp", "MG-WFBP rule: merge a unit into its neighbour when that is not slower",
       plan_mgwfbp},
      {"bucket", "fixed-size buckets, PyTorch DDP style (first 1 MB, then 25 MB)", plan_bucket,
       false, nullptr, "bucket_mb, first_bucket_mb"},
      {"dynacomm", "exact DP-optimal segments for pull and push", plan_dynacomm},
      {"dynacomm-fd",
       "full duplex: next iteration's pulls overlap this one's pushes; shortest steady-state "
       "period (searched)",
       plan_dynacomm_fd, true, fd_slices,
       "fd_slice_params, fd_max_evaluations, workers, compute_spread"},
      {"p3", "P3: 40,000-parameter slices, lowest layer first, across iterations", plan_p3, true,
       p3_slices, "p3_slice_params, p3_credit_slices"},
      {"bytescheduler",
       "ByteScheduler: 1M-parameter partitions, priority, credit (searched from 4M)",
       plan_bytescheduler, true, bytescheduler_slices,
       "bytescheduler_partition_params, bytescheduler_credit_params"},
  };
  return registry;
}

const PlannerInfo& planner_info(const std::string& name) {
  for (const auto& p : planner_registry())
    if (name == p.name) return p;
  std::string known;
  for (const auto& n : planner_names()) known += (known.empty() ? "" : ", ") + n;
  throw InvalidInput("unknown scheduler '" + name + "' (known: " + known + ")");
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
  for (const auto& s : schedulers)
    for (const auto& p : planner_registry())
      if (s == p.name && p.slices) {
        const std::vector<std::int64_t> own = p.slices(*this);
        sizes.insert(sizes.end(), own.begin(), own.end());
      }
  return sizes;
}

Plan make_plan(const std::string& name, const ModelProfile& profile, const LinkProfile& link,
               const PlannerOptions& options) {
  const PlannerInfo& p = planner_info(name);
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

double predict_plan_ms(const ModelProfile& profile, const LinkProfile& link, const Plan& plan,
                       const PlannerOptions& options) {
  const bool at_once = plan.full_duplex && options.pulls_answered_at_once;  // each on its own
  if (!at_once && (!plan.full_duplex || !options.models_workers()))
    return predict_ms(profile, link, plan);
  std::vector<ModelProfile> samples;
  for (const ComputeFactors& f : options.compute_spread) samples.push_back(scaled(profile, f));
  if (!at_once) return predict_duplex_workers_ms(samples, options.workers, link, plan);
  if (samples.empty()) samples.push_back(profile);
  return predict_at_once_ms(samples, link, plan);
}

}  // namespace dynacomm::plan
