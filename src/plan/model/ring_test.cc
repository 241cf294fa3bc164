// The ring's cost model by hand, and the bucket planner against exhaustive search under it.
#include "plan/model/ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "plan/planners/brute_force.h"
#include "plan/planners/ring_buckets.h"
#include "plan/test_util.h"

namespace dynacomm::plan {
namespace {

UnitProfile unit(std::int64_t bytes, double fwd, double bwd) {
  UnitProfile u;
  u.name = "u";
  u.bytes = bytes;
  u.forward_ms = fwd;
  u.backward_ms = bwd;
  return u;
}

TEST(RingCost, IsTwoPMinusOneStepsOfOverheadAndShareOfTheBytes) {
  LinkProfile link{100e6, 20e6, 1.0, 2.0, 5.0};
  // 4 workers: 6 steps of (2 + 5) ms, and 6/4 of 1 MB over 20 Mbit/s (400 ms).
  EXPECT_DOUBLE_EQ(ring_allreduce_ms(link, 4, 1000000), 6 * 7.0 + 1.5 * 400.0);
  EXPECT_DOUBLE_EQ(ring_allreduce_ms(link, 1, 1000000), 0);
  EXPECT_DOUBLE_EQ(ring_allreduce_ms(link, 4, 0), 0);
  EXPECT_THROW(ring_allreduce_ms(link, 0, 1), InvalidInput);
  LinkProfile push = RingCost::of(link, 4).as_push_link();
  EXPECT_DOUBLE_EQ(push.up_ms(1000000), ring_allreduce_ms(link, 4, 1000000));
  EXPECT_NEAR(RingCost::of(link, 1).as_push_link().up_ms(1000000), 0.0, 1e-200);
}

TEST(RingCost, BucketsOverlapBackwardAndQueueOnTheLink) {
  ModelProfile p;
  p.model = "toy";
  p.batch = 1;
  p.units = {unit(1000000, 1, 10), unit(1000000, 1, 10)};
  LinkProfile link{8e6, 8e6, 0, 0, 0};  // 2 workers: T(B) = B * 8 / 8e6 s: 1 s per MB
  // One bucket: forward 2, backward 20, then 2000 ms.
  EXPECT_DOUBLE_EQ(simulate_ring(p, RingCost::of(link, 2), {{0, 1}}), 2 + 20 + 2000.0);
  // Two: unit 1's bucket from 12 ms to 1012, unit 0's from 1012 to 2012.
  EXPECT_DOUBLE_EQ(simulate_ring(p, RingCost::of(link, 2), {{1, 1}, {0, 0}}), 2012.0);
  EXPECT_THROW(simulate_ring(p, RingCost::of(link, 2), {{0, 0}, {1, 1}}),
               InvalidInput);  // not send order
}

double brute_force_ring(const ModelProfile& profile, const RingCost& cost) {
  const int n = profile.num_units();
  double best = std::numeric_limits<double>::infinity();
  for (std::uint32_t cuts = 0; cuts < (1u << (n - 1)); ++cuts)
    best = std::min(
        best, simulate_ring(profile, cost, reverse_to_send_order(segments_from_cuts(n, cuts))));
  return best;
}

TEST(RingBuckets, OptimalEqualsBruteForceOn1500RandomCases) {
  std::mt19937_64 rng(2828);
  for (int c = 0; c < 1500; ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    ModelProfile profile = testing::random_profile(rng, 1, 12);
    LinkProfile link = testing::random_link(rng);
    const RingCost cost = RingCost::of(link, 1 + static_cast<int>(rng() % 16));
    const double planned = simulate_ring(profile, cost, optimal_ring_buckets(profile, cost));
    const double best = brute_force_ring(profile, cost);
    ASSERT_NEAR(planned, best, 1e-9 * std::max(1.0, best));
  }
}

TEST(RingBuckets, FixedFillsBucketsInBackwardOrderUpToTheCap) {
  ModelProfile p;
  p.model = "toy";
  p.batch = 1;
  p.units = {unit(30, 1, 1), unit(10, 1, 1), unit(10, 1, 1), unit(5, 1, 1), unit(20, 1, 1)};
  // First bucket up to 15 bytes (unit 4 alone is over), then up to 25.
  EXPECT_EQ(fixed_ring_buckets(p, 25, 15),
            (std::vector<Segment>{{4, 4}, {1, 3}, {0, 0}}));
  EXPECT_EQ(fixed_ring_buckets(p, 1000, 1000), (std::vector<Segment>{{0, 4}}));
}

}  // namespace
}  // namespace dynacomm::plan
