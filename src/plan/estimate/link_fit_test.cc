#include "plan/estimate/link_fit.h"

#include <gtest/gtest.h>

#include <random>

#include "base/error.h"

namespace dynacomm::plan {
namespace {

// Transfers over a link of `bps` with `overhead` ms each, sizes spread over 3 decades,
// multiplicative noise, and a share of outliers delayed by up to 50x.
std::vector<TransferSample> stream(double bps, double overhead, int n, double noise,
                                   double outlier_share, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> size_log(3, 6.5), unit(0, 1);
  std::normal_distribution<double> jitter(0, noise);
  std::vector<TransferSample> out;
  for (int i = 0; i < n; ++i) {
    const double bytes = std::pow(10.0, size_log(rng));
    double ms = (overhead + 8000.0 * bytes / bps) * (1 + jitter(rng));
    if (unit(rng) < outlier_share) ms *= 2 + 48 * unit(rng);
    out.push_back({bytes, ms});
  }
  return out;
}

TEST(LinkFit, ExactOnNoiselessTransfers) {
  LinkFit f = fit_link(stream(20e6, 1.5, 12, 0, 0, 1));
  ASSERT_TRUE(f.bandwidth_fitted);
  EXPECT_NEAR(f.bandwidth_bps, 20e6, 1);
  EXPECT_NEAR(f.overhead_ms, 1.5, 1e-9);
  EXPECT_EQ(f.samples, 12u);
}

TEST(LinkFit, ConvergesWithNoiseAndOutliers) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    // 5% noise and 20% of transfers delayed by 2-50x.
    LinkFit f = fit_link(stream(100e6, 2.0, 200, 0.05, 0.2, seed));
    ASSERT_TRUE(f.bandwidth_fitted) << seed;
    EXPECT_NEAR(f.bandwidth_bps / 100e6, 1.0, 0.08) << "seed " << seed;
    EXPECT_NEAR(f.overhead_ms, 2.0, 1.0) << "seed " << seed;
  }
}

TEST(LinkFit, MoreSamplesGiveATighterFit) {
  double err_small = 0, err_large = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    err_small += std::abs(fit_link(stream(50e6, 1, 10, 0.1, 0, seed)).bandwidth_bps / 50e6 - 1);
    err_large += std::abs(fit_link(stream(50e6, 1, 300, 0.1, 0, seed)).bandwidth_bps / 50e6 - 1);
  }
  EXPECT_LT(err_large, err_small / 2);
}

TEST(LinkFit, EqualSizesFitOnlyTheOverhead) {
  std::vector<TransferSample> s;
  for (int i = 0; i < 10; ++i) s.push_back({1e6, 80.0 + 3.0 + (i % 3) * 0.1});  // 100 Mbit/s
  LinkFit f = fit_link(s);
  EXPECT_FALSE(f.bandwidth_fitted);
  EXPECT_EQ(f.bandwidth_bps, 0);
  f = fit_link(s, 100e6);
  EXPECT_FALSE(f.bandwidth_fitted);
  EXPECT_EQ(f.bandwidth_bps, 100e6);
  EXPECT_NEAR(f.overhead_ms, 3.1, 1e-9);
}

TEST(LinkFit, OverheadIsAWeightedMedianClampedAtZero) {
  // Residuals at 100 Mbit/s (8e-5 ms per byte): 1, 2, 50; weights favour the last.
  std::vector<TransferSample> s = {{1000, 1.08, 1}, {1000, 2.08, 1}, {1000, 50.08, 5}};
  EXPECT_NEAR(fit_overhead(s, 100e6), 50.0, 1e-9);
  s[2].weight = 1;
  EXPECT_NEAR(fit_overhead(s, 100e6), 2.0, 1e-9);
  EXPECT_EQ(fit_overhead({{1e6, 10}}, 100e6), 0);  // faster than the line: clamped
  EXPECT_EQ(fit_overhead({}, 100e6), 0);
}

TEST(AggregationFit, PerPushAndPerMegabyteFromTheCompletingPushes) {
  // 0.3 ms per push and 4 ms per MB (an update at 250 MB/s), 5% noise, 10% of the pushes
  // held up 2-50x (the PS's thread descheduled): the robust line recovers both.
  const double bps = 8e9 / 4;  // fit_link's "bandwidth" of 4 ms per 10^6 bytes
  const AggregationFit a = fit_aggregation(stream(bps, 0.3, 120, 0.05, 0.1, 7));
  EXPECT_EQ(a.samples, 120u);
  EXPECT_NEAR(a.ms_per_mb, 4, 0.4);
  EXPECT_NEAR(a.ms, 0.3, 0.15);
  // Pushes all of one size (a sliced plan): the median time per push, nothing per MB.
  const AggregationFit same = fit_aggregation({{160000, 0.7}, {160000, 0.5}, {160000, 9}});
  EXPECT_DOUBLE_EQ(same.ms, 0.7);
  EXPECT_DOUBLE_EQ(same.ms_per_mb, 0);
  const AggregationFit none = fit_aggregation({});
  EXPECT_EQ(none.samples, 0u);
  EXPECT_DOUBLE_EQ(none.ms + none.ms_per_mb, 0);
}

// A third of the transfers delayed by up to `most` ms each (a busy core, a retransmission).
std::vector<TransferSample> delayed(std::vector<TransferSample> s, std::uint64_t seed,
                                    double most = 30) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  for (TransferSample& t : s)
    if (unit(rng) < 0.33) t.ms += most * unit(rng);
  return s;
}

// A link slower or faster than the user gave is planned at what its transfers show. A
// 5 Mbit/s uplink given as 100 Mbit/s was planned at 100 Mbit/s with the fit's excess as
// ~5 s of overhead per push, and the planner then sent the gradient in one push.
TEST(PlannedLink, ALinkFarFromTheGivenOneIsPlannedAsMeasured) {
  for (const double actual : {5e6, 1e9}) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      // Delays up to 2% of the largest transfer's time: 100 ms at 5 Mbit/s, 0.5 at 1 Gbit/s.
      const std::vector<TransferSample> s =
          delayed(stream(actual, 0.5, 12, 0.05, 0, seed), seed, 0.02 * 8000 * 3.2e6 / actual);
      const LinkFit p = planned_link(fit_link(s, 100e6), s, 100e6);
      EXPECT_NEAR(p.bandwidth_bps / actual, 1.0, 0.15) << actual << " seed " << seed;
      EXPECT_LT(p.overhead_ms, 50) << actual << " seed " << seed;
    }
  }
  // A warm-up's pushes over a 5 Mbit/s link: one per unit (sizes as cnn's), then whole.
  const std::vector<TransferSample> warm = {{3216, 5.6},       {205056, 328.9}, {3212288, 5141.1},
                                            {5160, 8.8},       {3216, 5.4},     {205056, 329.4},
                                            {3212288, 5150.2}, {5160, 8.6},     {3425720, 5483.0}};
  const LinkFit p = planned_link(fit_link(warm, 100e6), warm, 100e6);
  EXPECT_NEAR(p.bandwidth_bps, 5e6, 0.1e6);
  EXPECT_LT(p.overhead_ms, 1);
  // A straggler's warm-up pulls through tbf at 5 Mbit/s (measured): the small ones go out
  // in the token bucket's burst, far faster than the rate; the large ones set the line.
  const std::vector<TransferSample> burst = {
      {3297832, 5410.49}, {1280, 1.42}, {73984, 48.57}, {3212288, 5359.60}, {10280, 0.01}};
  const LinkFit b = planned_link(fit_link(burst, 100e6), burst, 100e6);
  EXPECT_NEAR(b.bandwidth_bps, 4.8e6, 0.2e6);
  EXPECT_LT(b.overhead_ms, 50);
}

// Where the given bandwidth is right, few noisy transfers do not move the plan off it: the
// fitted line is kept only near it or where it explains the transfers far better.
TEST(PlannedLink, TheGivenBandwidthStandsAgainstANoisyFit) {
  int fits_far_off = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    // 8 transfers of 1 KB..3 MB, 10% noise, a third delayed: the fit's slope is noise
    // where the sizes are close.
    const std::vector<TransferSample> s = delayed(stream(50e6, 2.0, 8, 0.1, 0, seed), seed);
    const LinkFit f = fit_link(s, 50e6);
    if (f.bandwidth_fitted && (f.bandwidth_bps < 12.5e6 || f.bandwidth_bps > 75e6)) ++fits_far_off;
    const LinkFit p = planned_link(f, s, 50e6);
    EXPECT_GT(p.bandwidth_bps, 12.5e6) << "seed " << seed;
    EXPECT_LT(p.bandwidth_bps, 75e6) << "seed " << seed;
  }
  EXPECT_GT(fits_far_off, 0);  // the fits this guards against do occur
  // Nothing fitted: the given bandwidth and the overhead at it.
  const std::vector<TransferSample> same = {{1e6, 83}, {1e6, 84}, {1e6, 82}};
  const LinkFit p = planned_link(fit_link(same, 100e6), same, 100e6);
  EXPECT_DOUBLE_EQ(p.bandwidth_bps, 100e6);
  EXPECT_NEAR(p.overhead_ms, 3, 1e-9);
}

TEST(LinkFit, RejectsBadSamples) {
  EXPECT_THROW(fit_link({{-1, 1}}), InvalidInput);
  EXPECT_THROW(fit_link({{1, NAN}}), InvalidInput);
  EXPECT_THROW(fit_overhead({{1, 1, 0}}, 1e6), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::plan
