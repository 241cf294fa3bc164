// Re-planning the ring's buckets: the bandwidth refit against samples on a known line, and
// the decision against the planner and the threshold.
#include "plan/replan/ring_replan.h"

#include <gtest/gtest.h>

#include <random>

#include "plan/planners/ring_buckets.h"
#include "plan/test_util.h"

namespace dynacomm::plan {
namespace {

TEST(RingReplan, RefitFollowsBothFiguresWhenTheSizesDiffer) {
  const RingCost warm{1, 100e6}, now{120, 20e6};  // the latency rose, the bandwidth fell
  std::vector<TransferSample> recent;
  for (const std::int64_t bytes : {100000, 400000, 2000000, 8000000, 3000000})
    recent.push_back({static_cast<double>(bytes), now.ms(bytes), 1});
  recent.push_back({400000, now.ms(400000) + 900, 1});  // one bucket held up by a busy core
  const RingCost got = refit_ring_cost(warm, recent);
  EXPECT_NEAR(got.fixed_ms, 120, 1e-6);
  EXPECT_NEAR(got.bps, 20e6, 1e-6 * 20e6);
}

TEST(RingReplan, RefitOfOneSizeMovesTheBandwidthAndKeepsTheFixedPart) {
  const RingCost warm{30, 100e6}, now{30, 20e6};
  std::vector<TransferSample> recent(3, {2e6, now.ms(2000000), 1});  // one bucket, 3 times
  recent.push_back({2e6, now.ms(2000000) + 900, 1});                 // held up once
  const RingCost got = refit_ring_cost(warm, recent);
  EXPECT_DOUBLE_EQ(got.fixed_ms, 30);
  EXPECT_NEAR(got.bps, 20e6, 1e-6 * 20e6);
  EXPECT_NEAR(refit_ring_cost(warm, {{1e6, now.ms(1000000), 1}}).bps, 20e6, 1);
  // Nothing longer than the fixed part: nothing to fit, the warm-up's cost stands.
  EXPECT_EQ(refit_ring_cost(warm, {{1e6, 20, 1}}).bps, 100e6);
  EXPECT_EQ(refit_ring_cost(warm, {}).bps, 100e6);
}

// Four 1 MB units whose backward takes 100 ms each: behind a fixed part of 400 ms one
// bucket is best; on a slow link with a small fixed part, buckets that overlap backward.
TEST(RingReplan, ChangesWhenTheLinkMakesOtherBucketsFasterByTheThreshold) {
  const ModelProfile p = testing::uniform_profile("toy", 1, 4, 1000000, 10, 100);
  const RingCost fast{400, 1e9}, slow{1, 10e6};
  const std::vector<Segment> one = optimal_ring_buckets(p, fast);
  ASSERT_EQ(one, (std::vector<Segment>{{0, 3}}));
  const RingReplan r = replan_ring(p, slow, one, 0.05);
  EXPECT_TRUE(r.change);
  EXPECT_EQ(r.buckets, optimal_ring_buckets(p, slow));
  EXPECT_GT(r.buckets.size(), 1u);
  EXPECT_DOUBLE_EQ(r.current_ms, simulate_ring(p, slow, one));
  EXPECT_DOUBLE_EQ(r.best_ms, simulate_ring(p, slow, r.buckets));
  EXPECT_LT(r.best_ms, r.current_ms * 0.95);
  // Not when the gain is under the threshold, nor when the plan in use is the best.
  EXPECT_FALSE(replan_ring(p, slow, one, (r.current_ms - r.best_ms) / r.current_ms + 0.01).change);
  EXPECT_FALSE(replan_ring(p, slow, r.buckets, 0).change);
  EXPECT_FALSE(replan_ring(p, fast, one, 0).change);
}

// A plan of one bucket cannot tell a latency drop from a bandwidth rise: refitted to its
// own all-reduces it keeps the old fixed part and stays one bucket. One iteration with the
// probe's two unequal buckets gives the sizes to fit both figures, and the re-plan then
// finds the buckets the new link calls for.
TEST(RingReplan, AProbeLetsAOneBucketPlanSeeALatencyDrop) {
  const ModelProfile p = testing::uniform_profile("toy", 1, 4, 1000000, 10, 100);
  const RingCost before{400, 10e6}, now{1, 10e6};
  const std::vector<Segment> one = optimal_ring_buckets(p, before);
  ASSERT_EQ(one, (std::vector<Segment>{{0, 3}}));
  std::vector<TransferSample> recent(3, {4e6, now.ms(4000000), 1});
  EXPECT_FALSE(replan_ring(p, refit_ring_cost(before, recent), one, 0.05).change);
  const std::optional<std::vector<Segment>> probe = ring_probe(p, recent);
  ASSERT_TRUE(probe);
  EXPECT_EQ(*probe, (std::vector<Segment>{{3, 3}, {0, 2}}));  // 1 MB nearest a third of 4
  recent.push_back({1e6, now.ms(1000000), 1});
  recent.push_back({3e6, now.ms(3000000), 1});
  EXPECT_FALSE(ring_probe(p, recent));  // the sizes differ now
  const RingCost got = refit_ring_cost(before, recent);
  EXPECT_NEAR(got.fixed_ms, 1, 1e-6);
  EXPECT_NEAR(got.bps, 10e6, 1e-6 * 10e6);
  const RingReplan r = replan_ring(p, got, one, 0.05);
  EXPECT_TRUE(r.change);
  EXPECT_EQ(r.buckets, optimal_ring_buckets(p, now));
  // A model of one unit has nothing to split.
  EXPECT_FALSE(ring_probe(testing::uniform_profile("one", 1, 1, 1000000, 10, 100), {}));
}

// Whatever buckets are in use, the re-plan's are never predicted slower, and a change is
// always a gain above the threshold.
TEST(RingReplan, NeverProposesSlowerBucketsOnRandomCases) {
  std::mt19937_64 rng(2929);
  for (int c = 0; c < 500; ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    const ModelProfile p = testing::random_profile(rng, 1, 12);
    const RingCost before =
        RingCost::of(testing::random_link(rng), 2 + static_cast<int>(rng() % 8));
    const RingCost after = RingCost::of(testing::random_link(rng), 2 + static_cast<int>(rng() % 8));
    const std::vector<Segment> current = optimal_ring_buckets(p, before);
    const RingReplan r = replan_ring(p, after, current, 0.05);
    ASSERT_LE(r.best_ms, r.current_ms * (1 + 1e-12));
    if (r.change) {
      ASSERT_LT(r.best_ms, r.current_ms * 0.95);
    } else {
      ASSERT_GE(r.best_ms, r.current_ms * 0.95 * (1 - 1e-12));
    }
  }
}

}  // namespace
}  // namespace dynacomm::plan
