// Fitting a link's figures from measured transfers: each transfer of `bytes` that kept
// the link busy for `ms` is one point of the line  ms = overhead + 8000 * bytes / bps.
//
//   std::vector<TransferSample> s = {{1280, 0.3}, {3212288, 257.5}, ...};
//   LinkFit f = fit_link(s);                 // both figures, when the sizes differ enough
//   double a = fit_overhead(s, 100e6);       // the overhead, for a known bandwidth
//
// Both fits are robust: a few transfers delayed by something else (a busy core, a
// retransmission) do not move them. fit_link is a Theil-Sen fit (median of the slopes
// between pairs of points, then the median residual), which tolerates up to ~29% bad
// points; fit_overhead is the median residual for the given bandwidth, which tolerates
// up to half.
//
// Why the fit is sound when every segment of a plan has a similar size: then all points
// sit at one x and the slope (bandwidth) is not identifiable from them, so fit_link says
// so (bandwidth_fitted = false) instead of inventing one; the overhead is still well
// defined for a given bandwidth (fit_overhead). A worker that wants both needs points of
// other sizes: its warm-up runs one iteration with one segment per unit, whose sizes
// differ by orders of magnitude, which is cheap and enough.
#pragma once

#include <cstddef>
#include <vector>

namespace dynacomm::plan {

struct TransferSample {
  double bytes = 0;
  double ms = 0;      // time the link was busy with it, without queueing or latency
  double weight = 1;  // relative weight (e.g. recent samples count more); > 0
};

struct LinkFit {
  double bandwidth_bps = 0;  // 0 when not fitted
  double overhead_ms = 0;    // per transmission, >= 0
  std::size_t samples = 0;
  bool bandwidth_fitted = false;
};

// Needs points whose sizes differ by at least `min_spread` (fraction of the largest size)
// in at least 3 pairs to fit the bandwidth; otherwise only the overhead is fitted, using
// `fallback_bps` (0: then nothing is fitted).
LinkFit fit_link(const std::vector<TransferSample>& samples, double fallback_bps = 0,
                 double min_spread = 0.1);

// The (weighted) median of ms - 8000 * bytes / bps, clamped at 0. 0 for no samples.
double fit_overhead(const std::vector<TransferSample>& samples, double bps);

// The bandwidth for a known overhead: the median of (ms - overhead) / bytes over the
// transfers, each weighted by weight x bytes (the large transfers say most about the
// bandwidth). 0 when no transfer took longer than the overhead.
double fit_bandwidth(const std::vector<TransferSample>& samples, double overhead_ms);

// The PS's aggregation (LinkProfile::aggregation_ms and aggregation_ms_per_mb) from the
// pushes that completed their units: each sample's `ms` the time the PS took over a push
// of `bytes` (the sum and the optimiser step). fit_link's robust line where the sizes
// differ enough, else the median time per push; all 0 for no samples.
struct AggregationFit {
  double ms = 0;         // per push
  double ms_per_mb = 0;  // per 10^6 bytes
  std::size_t samples = 0;
};
AggregationFit fit_aggregation(const std::vector<TransferSample>& samples);

}  // namespace dynacomm::plan
