// The proof that the DP planner is optimal: on thousands of random profiles and links it
// finds exactly the iteration time of exhaustive search, jointly over pull x push for small
// L (which also proves that optimising the two directions apart is right), and per
// direction up to L = 14.
#include "plan/brute_force.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "plan/planner.h"
#include "plan/planners/dynacomm.h"
#include "plan/simulate.h"
#include "plan/test_util.h"

namespace dynacomm::plan {
namespace {

double tol(double x) { return 1e-9 * std::max(1.0, std::abs(x)); }

TEST(SegmentsFromCuts, EnumeratesAllPartitions) {
  EXPECT_EQ(segments_from_cuts(1, 0), (std::vector<Segment>{{0, 0}}));
  EXPECT_EQ(segments_from_cuts(4, 0), (std::vector<Segment>{{0, 3}}));
  EXPECT_EQ(segments_from_cuts(4, 0b101), (std::vector<Segment>{{0, 0}, {1, 2}, {3, 3}}));
  EXPECT_EQ(segments_from_cuts(4, 0b111), (std::vector<Segment>{{0, 0}, {1, 1}, {2, 2}, {3, 3}}));
}

TEST(BruteForce, RejectsTooManyUnits) {
  std::mt19937_64 rng(1);
  ModelProfile p = testing::random_profile(rng, 11, 11);
  EXPECT_THROW(brute_force_joint(p, testing::random_link(rng)), InvalidInput);
}

TEST(DynacommOptimal, EqualsBruteForceOn2000RandomCases) {
  std::mt19937_64 rng(20221);
  int joint_cases = 0;
  for (int c = 0; c < 2000; ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    ModelProfile profile = testing::random_profile(rng, 1, 14);
    LinkProfile link = testing::random_link(rng);
    Plan dp = make_plan("dynacomm", profile, link, PlannerOptions{});
    const double dp_ms = simulate(profile, link, dp);

    // The DP's own figures agree with the simulator.
    DirectionPlan pull = optimal_pull(profile, link);
    DirectionPlan push = optimal_push(profile, link);
    ASSERT_NEAR(pull.end_ms + push.end_ms + link.latency_ms, dp_ms, tol(dp_ms));

    // Each direction is optimal with the other one fixed.
    BruteForceResult bf_pull = brute_force_pull(profile, link, dp.push);
    ASSERT_NEAR(bf_pull.iteration_ms, dp_ms, tol(dp_ms));
    BruteForceResult bf_push = brute_force_push(profile, link, dp.pull);
    ASSERT_NEAR(bf_push.iteration_ms, dp_ms, tol(dp_ms));
    // And with the other one fixed to something else: the push optimum does not depend
    // on the pull plan.
    Plan seq = make_plan("sequential", profile, link, PlannerOptions{});
    BruteForceResult bf_push_seq = brute_force_push(profile, link, seq.pull);
    ASSERT_NEAR(bf_push_seq.iteration_ms, simulate(profile, link, Plan{"x", seq.pull, dp.push}),
                tol(dp_ms));

    if (profile.num_units() <= 8) {
      ++joint_cases;
      BruteForceResult joint = brute_force_joint(profile, link);
      ASSERT_NEAR(joint.iteration_ms, dp_ms, tol(dp_ms))
          << "brute force plan pull " << format_segments(joint.plan.pull) << " push "
          << format_segments(joint.plan.push) << " vs DP pull " << format_segments(dp.pull)
          << " push " << format_segments(dp.push);
    }
  }
  EXPECT_GT(joint_cases, 1000);
}

// Edge cases the random ranges rarely hit: zero overhead, zero-byte units, huge overhead.
TEST(DynacommOptimal, EqualsBruteForceAtExtremes) {
  std::mt19937_64 rng(7);
  for (int c = 0; c < 300; ++c) {
    ModelProfile profile = testing::random_profile(rng, 1, 8);
    LinkProfile link = testing::random_link(rng);
    switch (c % 3) {
      case 0:
        link = link.without_overhead();
        break;
      case 1:
        for (auto& u : profile.units)
          if (rng() % 2) u.bytes = 0;
        break;
      case 2:
        link.overhead_down_ms = link.overhead_up_ms = 5000;
        break;
    }
    const double dp_ms = simulate(profile, link, make_plan("dynacomm", profile, link, {}));
    ASSERT_NEAR(brute_force_joint(profile, link).iteration_ms, dp_ms, tol(dp_ms)) << c;
  }
}

// The tie-break among optimal plans: no segment of either direction can be split without
// delaying the iteration (a split left free would transmit earlier at no cost), and with no
// per-transmission cost the plan is the layer-wise one.
TEST(DynacommOptimal, LeavesNoFreeSplit) {
  std::mt19937_64 rng(31);
  int refined = 0;
  for (int c = 0; c < 600; ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    ModelProfile profile = testing::random_profile(rng, 1, 12);
    LinkProfile link = testing::random_link(rng);
    if (c % 4 == 0) link = link.without_overhead();
    const Plan dp = make_plan("dynacomm", profile, link, {});
    const double dp_ms = simulate(profile, link, dp);
    if (c % 4 == 0) {
      ASSERT_EQ(dp.pull, make_plan("layerwise", profile, link, {}).pull);
      ASSERT_EQ(dp.push, make_plan("layerwise", profile, link, {}).push);
    }
    for (int direction = 0; direction < 2; ++direction) {
      const std::vector<Segment>& segments = direction == 0 ? dp.pull : dp.push;
      for (std::size_t i = 0; i < segments.size(); ++i) {
        for (int cut = segments[i].first; cut < segments[i].last; ++cut) {
          Plan split = dp;
          std::vector<Segment>& s = direction == 0 ? split.pull : split.push;
          Segment low{segments[i].first, cut}, high{cut + 1, segments[i].last};
          // Pull segments ascend, push segments go top first.
          s[i] = direction == 0 ? low : high;
          s.insert(s.begin() + static_cast<std::ptrdiff_t>(i) + 1, direction == 0 ? high : low);
          ASSERT_GT(simulate(profile, link, split), dp_ms)
              << (direction == 0 ? "pull " : "push ") << format_segments(s) << " is free, plan "
              << format_segments(segments);
        }
      }
    }
    refined += dp.pull.size() + dp.push.size() > 2;
  }
  EXPECT_GT(refined, 300);
}

}  // namespace
}  // namespace dynacomm::plan
