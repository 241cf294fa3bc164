// The peers that slice units (plan/model/slicing.h) and schedule by priority, full duplex:
//  - p3 (Jayarajan et al., "Priority-based Parameter Propagation", SysML 2019): every unit
//    cut into slices of 40,000 parameters, each its own transmission both ways; the lowest
//    layer's ready slice goes first, across iterations (the next iteration's pulls overlap
//    this one's pushes). The original hands slices to the network in priority order; here
//    at most `p3_credit_slices` are unacknowledged at a time so that priority can act on
//    a kernel-queued link.
//  - bytescheduler (Peng et al., SOSP 2019): partitions of 1M parameters, priority, and a
//    credit (bytes in flight) of 4M parameters by default, tuned at start-up: the
//    original searches online (Bayesian optimisation over measured speed); here the
//    planner searches credits of 1/2..16 partitions with the steady-state model.
#include <cmath>

#include "plan/model/simulate.h"
#include "plan/model/slicing.h"
#include "plan/planners/planner.h"

namespace dynacomm::plan {

Plan plan_p3(const ModelProfile& profile, const LinkProfile&, const PlannerOptions& o) {
  return priority_plan(Slicing::make(profile, o.p3_slice_params),
                       o.p3_credit_slices * o.p3_slice_params * 4);
}

Plan plan_bytescheduler(const ModelProfile& profile, const LinkProfile& link,
                        const PlannerOptions& o) {
  const std::int64_t partition = o.bytescheduler_partition_params;
  Plan best = priority_plan(Slicing::make(profile, partition), o.bytescheduler_credit_params * 4);
  double best_ms = predict_ms(profile, link, best);
  for (double k : {0.5, 1.0, 2.0, 8.0, 16.0}) {  // partitions of credit; 4 is the default
    Plan p = best;
    p.credit_bytes =
        static_cast<std::int64_t>(std::llround(k * static_cast<double>(partition))) * 4;
    const double ms = predict_ms(profile, link, p);
    if (ms < best_ms * (1 - 1e-9)) {  // ties keep the default
      best_ms = ms;
      best = p;
    }
  }
  return best;
}

}  // namespace dynacomm::plan
