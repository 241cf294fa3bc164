// The two fixed strategies every comparison starts from.
#include "plan/planners/planner.h"

namespace dynacomm::plan {

// Vanilla parameter server: one pull of the whole model, compute, one push of everything.
Plan plan_sequential(const ModelProfile& profile, const LinkProfile&, const PlannerOptions&) {
  const int last = profile.num_units() - 1;
  return Plan{"sequential", {{0, last}}, {{0, last}}};
}

// WFBP / Poseidon: every unit is its own transmission in both directions.
Plan plan_layerwise(const ModelProfile& profile, const LinkProfile&, const PlannerOptions&) {
  Plan p{"layerwise", {}, {}};
  const int n = profile.num_units();
  for (int u = 0; u < n; ++u) p.pull.push_back({u, u});
  for (int u = n - 1; u >= 0; --u) p.push.push_back({u, u});
  return p;
}

}  // namespace dynacomm::plan
