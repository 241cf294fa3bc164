#include "plan/estimate/estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/error.h"

namespace dynacomm::plan {
namespace {

// A stream of transfers of a link (bandwidth, overhead) over iterations: segment sizes as
// a plan would have them, 5% multiplicative noise, and one transfer in ten an outlier
// delayed by up to 10x (a busy core).
struct Stream {
  std::mt19937_64 rng{7};
  template <typename Estimator>
  void iteration(Estimator& e, std::int64_t it, double bps, double overhead_ms,
                 const std::vector<double>& sizes) {
    std::normal_distribution<double> noise(1.0, 0.05);
    std::uniform_real_distribution<double> u(0, 1);
    for (double bytes : sizes) {
      double ms = (overhead_ms + 8000 * bytes / bps) * std::max(0.5, noise(rng));
      if (u(rng) < 0.1) ms *= 1 + 9 * u(rng);
      e.add(it, bytes, ms);
    }
  }
};

const std::vector<double> kMixed = {4e3, 60e3, 250e3, 1.2e6, 3e6, 9e3, 400e3};
const std::vector<double> kEqual = {1e6, 1.02e6, 0.98e6, 1.01e6};

TEST(LinkEstimator, ConvergesWithNoiseAndOutliers) {
  LinkEstimator e({});
  Stream s;
  for (int it = 0; it < 8; ++it) s.iteration(e, it, 100e6, 2.0, kMixed);
  const LinkFit f = e.estimate(50e6);
  ASSERT_TRUE(f.bandwidth_fitted);
  EXPECT_NEAR(f.bandwidth_bps, 100e6, 8e6);
  EXPECT_NEAR(f.overhead_ms, 2.0, 0.6);
}

TEST(LinkEstimator, FollowsAStepWithinAFewIterations) {
  LinkEstimator e({});
  Stream s;
  for (int it = 0; it < 10; ++it) s.iteration(e, it, 100e6, 1.0, kMixed);
  EXPECT_NEAR(e.estimate(0).bandwidth_bps, 100e6, 10e6);
  int caught_up = -1;
  for (int it = 10; it < 20 && caught_up < 0; ++it) {
    s.iteration(e, it, 10e6, 1.0, kMixed);
    if (std::abs(e.estimate(0).bandwidth_bps - 10e6) < 1.5e6) caught_up = it - 9;
  }
  EXPECT_GE(caught_up, 1);
  EXPECT_LE(caught_up, 3) << "iterations after the step until the estimate follows";
}

TEST(LinkEstimator, EqualSizesHoldTheOverheadAndFitTheBandwidth) {
  LinkEstimator e({});
  Stream s;
  for (int it = 0; it < 4; ++it) s.iteration(e, it, 100e6, 3.0, kMixed);  // warm-up: spread
  const LinkFit before = e.estimate(0);
  ASSERT_TRUE(before.bandwidth_fitted);
  // Now a plan whose segments all have about one size, on a link that became 4x slower.
  for (int it = 4; it < 16; ++it) s.iteration(e, it, 25e6, 3.0, kEqual);
  const LinkFit after = e.estimate(0);
  EXPECT_TRUE(after.bandwidth_fitted);
  EXPECT_DOUBLE_EQ(after.overhead_ms, before.overhead_ms) << "held from the spread window";
  EXPECT_NEAR(after.bandwidth_bps, 25e6, 2.5e6);
  // The line passes through the points in use: 1 MB is predicted right.
  const double predicted = after.overhead_ms + 8000 * 1e6 / after.bandwidth_bps;
  EXPECT_NEAR(predicted, 3.0 + 8000 * 1e6 / 25e6, 0.06 * predicted);
}

// Compressed pushes on a fast link: tens of kilobytes whose sizes differ by less time
// than the timing noise. Their line's slope is noise (it swung between 6 Mbit/s and
// 5.5 Gbit/s on a 1 Gbit/s link); the bandwidth from the warm-up's spread stays and the
// overhead follows, so a dense push is still predicted right and a small one too.
TEST(LinkEstimator, SmallTransfersHoldTheBandwidthAndFitTheOverhead) {
  LinkEstimator e({});
  Stream s;
  for (int it = 0; it < 4; ++it) s.iteration(e, it, 1e9, 2.0, kMixed);  // warm-up: spread
  ASSERT_NEAR(e.estimate(0).bandwidth_bps, 1e9, 0.15e9);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> jitter(-1.0, 1.0);  // ms: within it, the fit
  const std::vector<double> small = {16e3, 20e3, 30e3, 36e3};
  double held = 0, lowest = 1e18, highest = 0;
  for (int it = 4; it < 48; ++it) {
    for (double bytes : small) e.add(it, bytes, 3.0 + 8000 * bytes / 1e9 + jitter(rng));
    const LinkFit f = e.estimate(0);
    if (it < 12) {  // the warm-up's spread still in the 8-iteration window
      held = f.bandwidth_bps;
      continue;
    }
    lowest = std::min(lowest, f.bandwidth_bps);
    highest = std::max(highest, f.bandwidth_bps);
    EXPECT_NEAR(f.overhead_ms + 8000 * 30e3 / f.bandwidth_bps, 3.24, 1.0) << "iteration " << it;
  }
  EXPECT_DOUBLE_EQ(lowest, held);
  EXPECT_DOUBLE_EQ(highest, held);
  EXPECT_NEAR(held, 1e9, 0.15e9);
  const LinkFit f = e.estimate(0);
  EXPECT_NEAR(f.overhead_ms + 8000 * 3.3e6 / f.bandwidth_bps, 3.0 + 26.4, 0.15 * 29.4);
  // Large pushes of one size on a link 100x slower, 3% noise (their sizes, 4% apart, tell
  // nothing either): the bandwidth they tell is held...
  std::uniform_real_distribution<double> noise(0.97, 1.03);
  for (int it = 48; it < 56; ++it) {
    for (double bytes : kEqual) e.add(it, bytes, (3.0 + 8000 * bytes / 1e7) * noise(rng));
    e.estimate(0);
  }
  EXPECT_NEAR(e.estimate(0).bandwidth_bps, 1e7, 1e6);
  EXPECT_NEAR(e.held().bandwidth_bps, 1e7, 1e6);
  // ...when small ones follow, whose line would tell nothing.
  for (int it = 56; it < 64; ++it) {
    for (double bytes : small) e.add(it, bytes, 3.0 + 8000 * bytes / 1e7 + jitter(rng));
    e.estimate(0);
  }
  EXPECT_NEAR(e.estimate(0).bandwidth_bps, 1e7, 1e6);
  // Sizes that do spread in time again are fitted afresh.
  for (int it = 64; it < 72; ++it) s.iteration(e, it, 1e8, 2.0, kMixed);
  EXPECT_NEAR(e.estimate(0).bandwidth_bps, 1e8, 1.5e7);
}

TEST(LinkEstimator, WithoutAnySpreadUsesTheFallbackBandwidth) {
  LinkEstimator e({});
  for (int it = 0; it < 3; ++it) e.add(it, 1e6, 85.0);
  const LinkFit f = e.estimate(100e6);
  EXPECT_FALSE(f.bandwidth_fitted);
  EXPECT_DOUBLE_EQ(f.bandwidth_bps, 100e6);
  EXPECT_NEAR(f.overhead_ms, 5.0, 1e-9);
}

TEST(LinkEstimator, ForgetsOutsideTheWindowAndBoundsItsSamples) {
  EstimatorOptions o;
  o.window = 3;
  o.max_transfers = 10;
  LinkEstimator e(o);
  for (int it = 0; it < 10; ++it)
    for (int k = 0; k < 6; ++k) e.add(it, 1e3 * (k + 1), 1.0);
  EXPECT_EQ(e.size(), 10u);
  EXPECT_THROW(e.add(11, -1, 1.0), InvalidInput);
}

TEST(AggregationEstimator, FollowsAPsWhoseCoreGetsBusier) {
  // The PS's updates as its acks report them: 0.2 ms per push and 2 ms per MB, then, its
  // core shared with more work, 8 ms per MB (as a link of 4 Gbit/s, then 1 Gbit/s).
  AggregationEstimator e({});
  EXPECT_EQ(e.estimate().samples, 0u);
  Stream s;
  for (int it = 0; it < 10; ++it) s.iteration(e, it, 8e9 / 2, 0.2, kMixed);
  AggregationFit a = e.estimate();
  EXPECT_NEAR(a.ms_per_mb, 2, 0.3);
  EXPECT_NEAR(a.ms, 0.2, 0.15);
  int caught_up = -1;
  for (int it = 10; it < 20 && caught_up < 0; ++it) {
    s.iteration(e, it, 8e9 / 8, 0.2, kMixed);
    a = e.estimate();
    if (std::abs(a.ms_per_mb - 8) < 1) caught_up = it - 9;
  }
  EXPECT_GE(caught_up, 1);
  EXPECT_LE(caught_up, 3) << "iterations after the change until the estimate follows";
  // Pushes of one size (a sliced plan): the median per push.
  AggregationEstimator sliced({});
  for (int it = 0; it < 4; ++it) s.iteration(sliced, it, 8e9 / 2, 0.2, {160e3, 160e3, 160e3});
  EXPECT_NEAR(sliced.estimate().ms, 0.2 + 0.32, 0.1);
  EXPECT_DOUBLE_EQ(sliced.estimate().ms_per_mb, 0);
}

TEST(UnitTimeEstimator, RecentIterationsWinAndOutliersDoNot) {
  UnitTimeEstimator c(2, {});
  for (int it = 0; it < 8; ++it) c.add(it, {10, 20}, {30, 40});
  c.add(8, {500, 20}, {30, 40});  // one disturbed iteration
  ModelProfile p;
  p.units.resize(2);
  c.apply(p);
  EXPECT_DOUBLE_EQ(p.units[0].forward_ms, 10);
  // The device becomes 2x slower: after a few iterations the estimate follows.
  for (int it = 9; it < 12; ++it) c.add(it, {20, 40}, {60, 80});
  c.apply(p);
  EXPECT_DOUBLE_EQ(p.units[0].forward_ms, 20);
  EXPECT_DOUBLE_EQ(p.units[1].backward_ms, 80);
  EXPECT_DOUBLE_EQ(c.total_ms(), 20 + 40 + 60 + 80);
}

TEST(UnitTimeEstimator, TotalsFollowTheIterationsNotTheSumOfUnitMedians) {
  // Every iteration one of four units (in turn) loses 6 ms to a busy core: each unit's
  // median is undisturbed (10 ms), every iteration's forward pass takes 46 ms.
  UnitTimeEstimator c(4, {});
  for (int it = 0; it < 8; ++it) {
    std::vector<double> f(4, 10.0), b = {5, 5, 5, 5};
    f[static_cast<std::size_t>(it % 4)] += 6;
    c.add(it, f, b);
  }
  ModelProfile p;
  p.units.resize(4);
  c.apply(p);
  double forward = 0;
  for (const auto& u : p.units) {
    EXPECT_NEAR(u.forward_ms, 11.5, 1e-12);  // the shape kept (all equal), scaled to 46
    EXPECT_NEAR(u.backward_ms, 5, 1e-12);    // undisturbed: no scaling
    forward += u.forward_ms;
  }
  EXPECT_NEAR(forward, 46, 1e-12);
  EXPECT_NEAR(c.total_ms(), 46 + 20, 1e-12);
}

TEST(UnitTimeEstimator, PacedIterationsCountAtTheSlowestWorkersTotal) {
  // Two workers in lockstep: in every iteration the other one computed 1.25x as long (as
  // the PS reported), so each pass is planned at that pace; this worker's shape is kept.
  UnitTimeEstimator c(2, {});
  for (int it = 0; it < 5; ++it) c.add(it, {10, 30}, {20, 20});
  for (int it = 0; it < 5; ++it) c.pace(it, 1.25);
  ModelProfile p;
  p.units.resize(2);
  c.apply(p);
  EXPECT_NEAR(p.units[0].forward_ms, 12.5, 1e-12);
  EXPECT_NEAR(p.units[1].forward_ms, 37.5, 1e-12);
  EXPECT_NEAR(p.units[0].backward_ms, 25, 1e-12);
  EXPECT_NEAR(c.total_ms(), 100, 1e-12);
  // A pace for an iteration no longer (or not yet) remembered changes nothing; a median
  // of paces: one outlier iteration does not move it.
  UnitTimeEstimator d(1, {});
  for (int it = 0; it < 5; ++it) d.add(it, {10}, {10});
  d.pace(99, 3);
  EXPECT_NEAR(d.total_ms(), 20, 1e-12);
  d.pace(1, 3);
  EXPECT_NEAR(d.total_ms(), 20, 1e-12);
  for (int it = 0; it < 5; ++it) d.pace(it, 1.5);
  EXPECT_NEAR(d.total_ms(), 30, 1e-12);
  EXPECT_THROW(d.pace(1, 0.5), InvalidInput);
  EXPECT_THROW(d.pace(1, std::nan("")), InvalidInput);
}

TEST(UnitTimeEstimator, RejectsBadInput) {
  UnitTimeEstimator c(2, {});
  EXPECT_THROW(c.add(0, {1}, {1, 2}), InvalidInput);
  EXPECT_THROW(c.add(0, {1, -2}, {1, 2}), InvalidInput);
  ModelProfile p;
  p.units.resize(3);
  EXPECT_THROW(c.apply(p), InvalidInput);
  EstimatorOptions bad;
  bad.half_life = 0;
  EXPECT_THROW(UnitTimeEstimator(2, bad), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::plan
