#include "worker/estimates.h"

#include <utility>

namespace dynacomm::worker {

namespace {
// Updates below this many in the window: the aggregation stays the warm-up's.
constexpr std::size_t kMinAggregationUpdates = 5;
}  // namespace

Replanned estimate(const plan::UnitTimeEstimator& compute, plan::LinkEstimator down,
                   plan::LinkEstimator up, const plan::AggregationEstimator& aggregation,
                   const PushCodecs& codecs, plan::ModelProfile profile, plan::LinkProfile given,
                   double latency_ms) {
  Replanned r;
  compute.apply(profile);
  r.dense = profile;
  profile = codecs.apply(profile);
  const plan::LinkFit d = down.estimate(given.down_bps), u = up.estimate(given.up_bps);
  if (aggregation.size() >= kMinAggregationUpdates) {
    const plan::AggregationFit a = aggregation.estimate();
    given.aggregation_ms = a.ms;
    given.aggregation_ms_per_mb = a.ms_per_mb;
  }
  r.link = given;
  r.link.down_bps = d.bandwidth_bps > 0 ? d.bandwidth_bps : given.down_bps;
  r.link.up_bps = u.bandwidth_bps > 0 ? u.bandwidth_bps : given.up_bps;
  r.link.overhead_down_ms = d.overhead_ms;
  r.link.overhead_up_ms = u.overhead_ms;
  r.link.latency_ms = latency_ms;
  r.profile = std::move(profile);
  r.held_down = down.held();
  r.held_up = up.held();
  return r;
}

}  // namespace dynacomm::worker
