// simulate_at_once (plan/model/duplex.h): the full-duplex model where the PS answers pulls
// at once (--sync asp).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "base/error.h"
#include "plan/model/duplex.h"
#include "plan/model/slicing.h"
#include "plan/planners/planner.h"
#include "plan/test_util.h"

namespace dynacomm::plan {
namespace {

ModelProfile units(std::vector<std::int64_t> bytes, double f, double g) {
  return testing::hand_profile(bytes, f, g);
}

Plan one_unit() {
  Plan plan{"layerwise", {{0, 0}}, {{0, 0}}};
  plan.full_duplex = true;
  return plan;
}

// One unit of 1 MB, forward and backward 10 ms each, no latency. With the downlink the
// slower (8 Mbit/s: 1000 ms; uplink 16 Mbit/s: 500 ms) iteration t+1's parameters are
// requested as t's backward starts and come 1000 ms later: the period is forward +
// transfer, 1010 ms, where under BSP they wait for t's push as well.
TEST(AtOnce, TheNextParametersComeAsTheBackwardPassStarts) {
  const ModelProfile p = units({1'000'000}, 10, 10);
  const LinkProfile l{8e6, 16e6, 0, 0, 0};
  const DuplexResult r = simulate_at_once({p}, l, one_unit());
  ASSERT_TRUE(r.converged);
  EXPECT_DOUBLE_EQ(r.period_ms, 1010);
  // Iteration 0 pulls 0-1000, forward 1000-1010; iteration 1's reply 1010-2010.
  EXPECT_DOUBLE_EQ(r.forward_start_ms[0], 1000);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[1], 2010);
  DuplexOptions bsp;
  EXPECT_GT(simulate_duplex(p, l, one_unit(), bsp).period_ms, 1500);
  DuplexOptions at_once;
  at_once.pulls_answered_at_once = true;
  EXPECT_DOUBLE_EQ(simulate_duplex(p, l, one_unit(), at_once).period_ms, 1010);
}

// With the uplink the slower (2000 ms a push, pulls 100 ms), the worker runs one iteration
// ahead of its uplink: t begins once t-2's push is acknowledged, so pushes go back to back
// and the period is the push's 2000 ms.
TEST(AtOnce, AWorkerRunsOneIterationAheadOfItsUplink) {
  const ModelProfile p = units({1'000'000}, 10, 10);
  const LinkProfile l{80e6, 4e6, 0, 0, 0};
  const DuplexResult r = simulate_at_once({p}, l, one_unit());
  ASSERT_TRUE(r.converged);
  EXPECT_NEAR(r.period_ms, 2000, 1e-9);
}

// Two units of 1 MB, no forward time, backward 100 ms each, 8 Mbit/s both ways (1 MB in
// 1000 ms), one push unacknowledged at a time. Iteration 0 pulls 0-1000 and 1000-2000, its
// forward ends at 2000, when iteration 1's replies are handed over (2000-3000, 3000-4000);
// backward ends unit 1 at 2100, unit 0 at 2200. Iteration 1 starts at 3000 and hands over
// iteration 2's replies at 4000 (4000-6000). Unit 1's push 2100-3100: its ack waits
// behind iteration 1's replies, back at 4000; unit 0's push 4000-5000, behind iteration
// 2's, back at 6000. Iteration 2 waits for them: it starts at 6000, and iteration 3 at
// 9000, where without the credit the second push goes at once and the pushes are no
// longer what the worker waits for.
TEST(AtOnce, ACreditWaitsBehindTheNextIterationsReplies) {
  const ModelProfile p = units({1'000'000, 1'000'000}, 0, 100);
  const LinkProfile l{8e6, 8e6, 0, 0, 0};
  Plan plan{"priority", {{0, 0}, {1, 1}}, {{1, 1}, {0, 0}}};
  plan.full_duplex = true;
  plan.credit_bytes = 1;
  const DuplexResult credit = simulate_at_once({p}, l, plan);
  ASSERT_GE(credit.forward_start_ms.size(), 4u);
  EXPECT_DOUBLE_EQ(credit.forward_start_ms[0], 1000);
  EXPECT_DOUBLE_EQ(credit.forward_start_ms[1], 3000);
  EXPECT_DOUBLE_EQ(credit.forward_start_ms[2], 6000);
  EXPECT_DOUBLE_EQ(credit.forward_start_ms[3], 9000);
  plan.credit_bytes = 0;
  const DuplexResult none = simulate_at_once({p}, l, plan);
  EXPECT_DOUBLE_EQ(none.forward_start_ms[3], 8000);
  EXPECT_LT(none.period_ms, credit.period_ms);
}

// cnn's four units (the sizes of the job in docs/sync.md) on a 5 Mbit/s link both ways,
// 5 ms latency, about 40 ms of compute: P3's slices with a credit of one slice against
// dynacomm-fd's plan without one. Measured under ASP, a straggler on that link ran 9.8 s
// an iteration with the credit plan and 5.6 s with one without; under BSP's model the
// credit plan was predicted 5.8 s.
TEST(AtOnce, ACreditPlanOnASlowSymmetricLinkIsPredictedSlow) {
  const ModelProfile p = testing::cnn_units(5, 5);
  const LinkProfile l{5e6, 5e6, 0, 0, 5};
  const Slicing s = Slicing::make(p, 40000);
  const ModelProfile atoms = s.atom_profile(p);
  const Plan credit = priority_plan(s, 40000 * 4);
  DuplexOptions at_once;
  at_once.pulls_answered_at_once = true;
  const double with_credit = simulate_at_once({atoms}, l, credit).period_ms;
  const double bsp_credit = simulate_duplex(atoms, l, credit).period_ms;
  PlannerOptions o;
  o.fd_max_evaluations = 200;
  o.pulls_answered_at_once = true;
  const Plan fd = make_plan("dynacomm-fd", p, l, o);
  const double without = predict_plan_ms(p, l, fd, o);
  const double bytes_ms = l.down_ms(p.total_pull_bytes());
  EXPECT_EQ(fd.credit_bytes, 0);
  EXPECT_LT(without, 1.1 * bytes_ms);  // near the link's bound
  EXPECT_GT(with_credit, 1.5 * without);
  EXPECT_LT(bsp_credit, 1.2 * without);
}

// Properties over random cases: the period is never below compute or either link's busy
// time; samples alike give the one-sample period; the same plan never runs slower than
// under BSP, whose pulls wait for pushes besides.
TEST(AtOnce, NeverBelowItsResourcesAndSamplesAlikeAreOneSample) {
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 300; ++trial) {
    const ModelProfile p = testing::random_profile(rng, 1, 10);
    const LinkProfile l = testing::random_link(rng);
    Plan plan = trial % 4 == 0 ? make_plan("layerwise", p, l, {})
                               : plan_duplex(p, l, DuplexPlannerOptions{{}, 4, 400, 2});
    plan.full_duplex = true;
    if (trial % 3 == 0) {
      plan.credit_bytes = p.total_push_bytes() / (1 + trial % 5);
      plan.pull_order.clear();
    }
    const DuplexResult r = simulate_at_once({p}, l, plan);
    ASSERT_TRUE(r.converged) << "trial " << trial;
    const double tol = 1e-6 * r.period_ms;
    EXPECT_GE(r.period_ms + tol, testing::resource_bound_ms(p, l, plan)) << "trial " << trial;
    EXPECT_NEAR(simulate_at_once({p, p, p}, l, plan).period_ms, r.period_ms, tol)
        << "trial " << trial << " cycle " << r.cycle << " transient " << r.transient;
    if (plan.credit_bytes == 0) {
      EXPECT_LE(r.period_ms, simulate_duplex(p, l, plan).period_ms + tol) << "trial " << trial;
    }
  }
}

TEST(AtOnce, RejectsSamplesOfDifferentModels) {
  const ModelProfile a = units({1000, 2000}, 1, 1), b = units({1000, 3000}, 1, 1);
  Plan plan{"layerwise", {{0, 0}, {1, 1}}, {{1, 1}, {0, 0}}};
  plan.full_duplex = true;
  const LinkProfile l{8e6, 8e6, 0, 0, 0};
  EXPECT_THROW(simulate_at_once({a, b}, l, plan), InvalidInput);
  EXPECT_THROW(simulate_at_once({}, l, plan), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::plan
