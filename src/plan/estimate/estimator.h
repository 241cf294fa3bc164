// Online estimates of a device and its link, from the measurements the runtime takes every
// iteration: per-unit forward/backward times, and per direction the (bytes, link-busy ms)
// of every transfer. Recent iterations weigh more (weight 2^(-age / half_life), age in
// iterations), older ones than `window` iterations are forgotten; every estimate is a
// (weighted) median or a Theil-Sen fit, so a few iterations or transfers disturbed by
// something else (a busy core, a retransmission) do not move it.
//
//   UnitTimeEstimator compute(n_units, {});
//   compute.add(it, forward_ms, backward_ms);       // every iteration
//   compute.apply(profile);                          // profile.units[u].forward_ms = ...
//   LinkEstimator down({});
//   down.add(it, bytes, ms);                         // every transfer
//   LinkFit f = down.estimate(given_bps);            // bandwidth + per-transmission overhead
//   AggregationEstimator ps({});
//   ps.add(it, bytes, ms);                           // every update a push ack reports
//   AggregationFit a = ps.estimate();                // the PS's a + b x MB
//
// Why the link fit is sound when every segment of the plan in use has a similar size: the
// points then sit at one x, where the slope (bandwidth) and the intercept (overhead) cannot
// be told apart. The estimator does not invent a slope. It holds the overhead from the last
// window whose sizes did spread (the warm-up guarantees one: it alternates one segment per
// unit with one segment for the whole model) and fits only the bandwidth given that
// overhead. That is exact for the sizes in use: whatever error the held overhead has, the
// line passes through the measured points, so the current plan's predicted time is right,
// and a change of the link (which moves the points) is seen at once. Only plans whose
// segments are much smaller or larger than the current ones are predicted with the held
// overhead's error; the per-transmission overhead is a property of the stack and changes
// far less than the bandwidth, and any plan with segments of different sizes (most are:
// unit sizes differ by orders of magnitude) refreshes it, so no probe transfers are needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "plan/estimate/link_fit.h"
#include "plan/model/profile.h"

namespace dynacomm::plan {

struct EstimatorOptions {
  int window = 8;                   // iterations remembered
  double half_life = 2.0;           // iterations after which a measurement weighs half as much
  std::size_t max_transfers = 256;  // per direction: the most recent ones (bounds the fit)

  void validate() const;  // throws InvalidInput naming the option
};

// Per-unit compute times: the recency-weighted median of each unit's recent times, scaled
// so that each pass (forward, backward) sums to the recency-weighted median of the recent
// iterations' totals for that pass. With several workers in lockstep (BSP), an iteration
// goes at the pace of its slowest worker: pace(t, f) says the slowest one computed f times
// as long as this one in iteration t, and t's totals then count f times over (the units'
// shape stays this worker's own).
class UnitTimeEstimator {
 public:
  UnitTimeEstimator(std::size_t units, EstimatorOptions options);
  // One iteration's times (ms, one per unit, both the same length as `units`).
  void add(std::int64_t iteration, const std::vector<double>& forward_ms,
           const std::vector<double>& backward_ms);
  // Iteration t (if still remembered) was paced by a worker `factor` (>= 1) times slower.
  void pace(std::int64_t iteration, double factor);
  bool empty() const { return iterations_.empty(); }
  // Writes the estimates into profile.units[u].forward_ms / backward_ms (sizes must match).
  void apply(ModelProfile& profile) const;
  double total_ms() const;  // sum over units, forward + backward (0 when empty)

 private:
  struct Iteration {
    std::int64_t iteration;
    std::vector<double> forward, backward;
    double pace = 1;  // the slowest worker's compute over this one's
  };
  std::size_t units_;
  EstimatorOptions options_;
  std::deque<Iteration> iterations_;
};

// One direction of a link.
class LinkEstimator {
 public:
  explicit LinkEstimator(EstimatorOptions options);
  void add(std::int64_t iteration, double bytes, double ms);
  std::size_t size() const { return samples_.size(); }
  // The link's figures from the recent transfers: the Theil-Sen line where their sizes
  // spread enough to tell the bandwidth; else one figure held from the last such window and
  // the other fitted through the transfers: where the bytes' time dominates (at the held
  // figures) the overhead is held and the bandwidth fitted, where the overhead dominates
  // (small transfers, compressed pushes) the bandwidth is held and the overhead fitted.
  // Before any such window: `fallback_bps` and the overhead at that bandwidth.
  // bandwidth_fitted says whether the bandwidth came from transfers. Sizes tell the
  // bandwidth when their spread, at the held bandwidth or the fitted one (the faster), takes
  // at least 4 times the timing noise (the median deviation of the transfers from the line):
  // 60 KB pushes that differ by 20 KB on a 1 Gbit/s link differ by 0.16 ms, less than the
  // noise, and their line's slope is noise. Not thread-safe; copy the estimator to fit
  // elsewhere.
  LinkFit estimate(double fallback_bps);
  // What is held for windows that cannot tell both (< 0: nothing yet). A copy fitted
  // elsewhere hands it back with hold.
  struct Held {
    double overhead_ms = -1, bandwidth_bps = -1;
  };
  Held held() const { return held_; }
  void hold(Held h) { held_ = h; }
  // The transfers remembered, each with its recency weight.
  std::vector<TransferSample> weighted() const;

 private:
  struct Sample {
    std::int64_t iteration;
    double bytes, ms;
  };
  EstimatorOptions options_;
  std::deque<Sample> samples_;
  Held held_;
};

// The PS's aggregation (LinkProfile::aggregation_ms and aggregation_ms_per_mb) from the
// updates the push acks report, as bytes of the push that completed the units and the
// PS's ms over it: the same window and recency weights as a link, fit_aggregation's line.
// The warm-up's fit seeds the plans; this one follows a PS whose core gets busier.
class AggregationEstimator {
 public:
  explicit AggregationEstimator(EstimatorOptions options) : updates_(options) {}
  void add(std::int64_t iteration, double bytes, double ms) { updates_.add(iteration, bytes, ms); }
  std::size_t size() const { return updates_.size(); }
  AggregationFit estimate() const { return fit_aggregation(updates_.weighted()); }

 private:
  LinkEstimator updates_;  // the window and the weights (its own fit unused)
};

}  // namespace dynacomm::plan
