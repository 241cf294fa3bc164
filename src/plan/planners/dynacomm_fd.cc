// dynacomm-fd: the full-duplex, cross-iteration plan with the shortest steady-state period
// (plan/duplex.h; docs/full-duplex.md says what it is optimal over).
#include "plan/duplex.h"
#include "plan/planner.h"

namespace dynacomm::plan {

Plan plan_dynacomm_fd(const ModelProfile& profile, const LinkProfile& link, const PlannerOptions&) {
  return plan_duplex(profile, link);
}

}  // namespace dynacomm::plan
