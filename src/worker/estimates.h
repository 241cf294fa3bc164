// The worker's online estimates (plan/estimate/estimator.h) and what they say now: the profile
// and link a re-planning task plans for.
#pragma once

#include <cstddef>
#include <utility>

#include "plan/estimate/estimator.h"
#include "plan/model/profile.h"
#include "plan/replan/replan.h"
#include "worker/codec_costs.h"
#include "worker/codec_times.h"

namespace dynacomm::worker {

// Every unit's compute, each direction's transfers, the PS's updates. Filled by the
// training thread; a re-planning task works on a copy.
struct Estimators {
  Estimators(std::size_t units, const plan::EstimatorOptions& o)
      : compute(units, o), down(o), up(o), aggregation(o) {}
  plan::UnitTimeEstimator compute;
  plan::LinkEstimator down, up;
  plan::AggregationEstimator aggregation;
  PushCodecs codecs;  // what the pushes cost encoded, from the warm-up's end (empty: dense)
  CodecTimes codec_times;  // and while training: codecs' times follow it (worker/codec_times.h)
  // The codecs measured at the warm-up's end, and their times followed from then on.
  void set_codecs(PushCodecs c, const plan::Slicing& slicing, bool mixed) {
    codecs = std::move(c);
    if (!codecs.empty()) codec_times = CodecTimes(slicing, mixed, codecs.options);
  }
};

// What the estimates say, and (for a re-planning task) what it decided from them and how
// long it took; what the link estimators hold goes back to the originals.
struct Replanned {
  plan::ReplanDecision decision;
  plan::ModelProfile profile;  // with the pushes' codecs
  plan::ModelProfile dense;    // without: what a fresh codec choice starts from
  plan::LinkProfile link;
  plan::LinkEstimator::Held held_down, held_up;
  double planning_ms = 0;
};

// Unit times from `compute`, the pushes' bytes and codec times from `codecs`, the link
// from the transfer estimators (the `given` bandwidths before any fit), the PS's
// aggregation from its updates (the warm-up's, in `given`, before enough of them), and the
// emulated latency. `profile` is the dense one.
Replanned estimate(const plan::UnitTimeEstimator& compute, plan::LinkEstimator down,
                   plan::LinkEstimator up, const plan::AggregationEstimator& aggregation,
                   const PushCodecs& codecs, plan::ModelProfile profile, plan::LinkProfile given,
                   double latency_ms);
inline Replanned estimate(const Estimators& e, const plan::ModelProfile& profile,
                          const plan::LinkProfile& given, double latency_ms) {
  return estimate(e.compute, e.down, e.up, e.aggregation, e.codecs, profile, given, latency_ms);
}

}  // namespace dynacomm::worker
