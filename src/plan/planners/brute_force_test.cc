// The proof that the DP planner is optimal: on thousands of random profiles and links it
// finds exactly the iteration time of exhaustive search, jointly over pull x push for small
// L (which also proves that optimising the two directions apart is right), and per
// direction up to L = 14.
#include "plan/planners/brute_force.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "plan/model/simulate.h"
#include "plan/planners/dynacomm.h"
#include "plan/planners/planner.h"
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

// With compressed pushes (push_bytes below bytes, decoding at the PS) and pulls (pull_bytes)
// the DPs work on the encoded bytes: still the optimum over every segmentation.
TEST(DynacommOptimal, EqualsBruteForceWithCompressedPushes) {
  std::mt19937_64 rng(20261);
  for (int c = 0; c < 600; ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    const ModelProfile profile = testing::random_compressed_profile(rng, 1, 8);
    const LinkProfile link = testing::random_link(rng);
    const Plan dp = make_plan("dynacomm", profile, link, PlannerOptions{});
    const double dp_ms = simulate(profile, link, dp);
    ASSERT_NEAR(
        optimal_pull(profile, link).end_ms + optimal_push(profile, link).end_ms + link.latency_ms,
        dp_ms, tol(dp_ms));
    ASSERT_NEAR(brute_force_joint(profile, link).iteration_ms, dp_ms, tol(dp_ms));
  }
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

// The tie-break among optimal plans, on a hand-made case with no per-transmission cost: 8
// Mbit/s, units of 1 kB, 1 kB and 1 MB (1, 1 and 1000 ms on the link), 1 ms of forward
// and of backward each. The pull is optimal once units 0 and 1 arrive before unit 2 (the
// forward pass ends at 1003 ms); the DP's fewest segments, [0,1] [2], make unit 0 wait for
// unit 1, so [0,1] is split (free, and the forward pass starts at 1 ms instead of 2). The
// push [2] [0,1] keeps [0,1] whole: the uplink is busy with unit 2 until 1001 ms, long after
// both gradients are ready, so a split would start nothing earlier.
TEST(DynacommOptimal, SplitsOnlyWhereASplitIsFreeAndStartsWorkEarlier) {
  ModelProfile p;
  p.model = "hand";
  p.batch = 1;
  for (std::int64_t bytes : {1000, 1000, 1000000}) p.units.push_back({"u", bytes / 4, bytes, 1, 1});
  const LinkProfile link{8e6, 8e6, 0, 0, 0};
  const Plan plan = make_plan("dynacomm", p, link, {});
  EXPECT_EQ(plan.pull, (std::vector<Segment>{{0, 0}, {1, 1}, {2, 2}}));
  EXPECT_EQ(plan.push, (std::vector<Segment>{{2, 2}, {0, 1}}));
  EXPECT_NEAR(simulate(p, link, plan), 1003 + 1003, 1e-9);
}

// On random cases: no split is left that is free (does not delay the iteration) and starts
// work earlier (pull: the forward pass of the segment's first unit; push: the transmission),
// the latter read from the simulator's timeline, not from the planner's own arithmetic.
TEST(DynacommOptimal, LeavesNoFreeAndUsefulSplit) {
  std::mt19937_64 rng(31);
  int splits_checked = 0;
  for (int c = 0; c < 600; ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    ModelProfile profile = testing::random_profile(rng, 1, 12);
    LinkProfile link = testing::random_link(rng);
    if (c % 4 == 0) link = link.without_overhead();
    const Plan dp = make_plan("dynacomm", profile, link, {});
    Timeline dp_timeline;
    const double dp_ms = simulate(profile, link, dp, &dp_timeline);
    // Pull: when unit u's forward starts; push: when segment i's transmission starts.
    auto start = [](const Timeline& t, EventKind kind, int index) {
      for (const Event& e : t.events)
        if (e.kind == kind && e.index == index) return e.start_ms;
      ADD_FAILURE() << "no event " << to_string(kind) << " " << index;
      return 0.0;
    };
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
          Timeline t;
          const double split_ms = simulate(profile, link, split, &t);
          const EventKind kind = direction == 0 ? EventKind::kForward : EventKind::kPush;
          const int index = direction == 0 ? segments[i].first : static_cast<int>(i);
          const double before = start(dp_timeline, kind, index), after = start(t, kind, index);
          ++splits_checked;
          ASSERT_TRUE(split_ms > dp_ms || after >= before - tol(before))
              << (direction == 0 ? "pull " : "push ") << format_segments(s)
              << " is free and starts work earlier (" << after << " ms, not " << before
              << "); plan " << format_segments(segments);
        }
      }
    }
  }
  EXPECT_GT(splits_checked, 1000);
}

}  // namespace
}  // namespace dynacomm::plan
