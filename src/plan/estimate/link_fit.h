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

// Whether the line `f` through `samples` can tell the bandwidth: the sizes' spread, at the
// faster of f's bandwidth and `other_bps`, takes at least 4 times the timing noise (the
// median deviation of the transfers from the line). 60 KB transfers that differ by 20 KB on
// a 1 Gbit/s link differ by 0.16 ms, less than the noise, and their line's slope is noise.
bool tells_bandwidth(const std::vector<TransferSample>& samples, const LinkFit& f,
                     double other_bps = 0);

// The figures to plan with from transfers and the bandwidth the user gave (`given_bps`):
// the fitted line where its bandwidth is near the given one (0.25x..1.5x, which bounds the
// damage of a bad fit from few points) or where the transfers tell the fitted bandwidth
// (tells_bandwidth) and the line is off them by at most half as much as the given bandwidth (at the
// overhead fitted for it), each transfer's relative error weighted by its bytes: a link slower or
// faster than declared, such as a 5 Mbit/s uplink given as 100 Mbit/s, which at the given bandwidth
// would be planned with seconds of overhead per transfer. Else the given bandwidth with
// the overhead fitted for it.
LinkFit planned_link(const LinkFit& fit, const std::vector<TransferSample>& samples,
                     double given_bps);

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
