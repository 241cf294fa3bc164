#include "plan/planners/architecture.h"

#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "plan/model/ring.h"
#include "plan/planners/planner.h"
#include "plan/planners/ring_buckets.h"
#include "plan/test_util.h"

namespace dynacomm::plan {
namespace {

TEST(Architecture, ThePsSharesTheCloudLinkFairly) {
  const LinkProfile edge{100e6, 50e6, 1, 2, 5};
  const LinkProfile unlimited = ps_link_share(edge, {}, 8);
  EXPECT_EQ(unlimited.down_bps, 100e6);
  EXPECT_EQ(unlimited.up_bps, 50e6);
  const LinkProfile shared = ps_link_share(edge, {200e6, 1e9}, 8);
  EXPECT_EQ(shared.up_bps, 25e6);     // 200 / 8 < 50
  EXPECT_EQ(shared.down_bps, 100e6);  // 1000 / 8 > 100
  EXPECT_EQ(shared.latency_ms, 5);
  EXPECT_EQ(shared.overhead_up_ms, 2);
}

// Each prediction is its architecture's own model, and the choice is their argmin, over
// random profiles, links and cloud links.
TEST(Architecture, ChoosesTheFastestOfTheModelsPredictions) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 14; ++trial) {
    const ModelProfile p = testing::random_profile(rng, 2, 5);
    const LinkProfile edge = testing::random_link(rng);
    const int workers = 2 + trial % 7;
    const CloudLink cloud = trial % 3 ? CloudLink{edge.up_bps * 2, edge.down_bps * 3} : CloudLink{};
    const ArchitectureChoice c =
        choose_architecture(p, edge, cloud, workers, {"ps", "allreduce", "gossip"});
    ASSERT_EQ(c.predictions.size(), 3u);
    const LinkProfile shared = ps_link_share(edge, cloud, workers);
    const PlannerOptions o;
    const double ps =
        std::min(predict_plan_ms(p, shared, make_plan("dynacomm", p, shared, o), o),
                 predict_plan_ms(p, shared, make_plan("dynacomm-fd", p, shared, o), o));
    const RingCost ring = RingCost::of(edge, workers);
    const double allreduce = simulate_ring(p, ring, optimal_ring_buckets(p, ring));
    const double gossip = simulate_gossip(p, edge, Topology::kRing, workers);
    EXPECT_DOUBLE_EQ(c.predictions[0].ms, ps);
    EXPECT_DOUBLE_EQ(c.predictions[1].ms, allreduce);
    EXPECT_DOUBLE_EQ(c.predictions[2].ms, gossip);
    const double best = std::min({ps, allreduce, gossip});
    const std::string want = best == ps ? "ps" : best == allreduce ? "allreduce" : "gossip";
    EXPECT_EQ(c.chosen, want) << c.text();
  }
}

// Eight workers of 100 Mbit/s behind a 200 Mbit/s cloud link with a large model: the PS's
// share is 25 Mbit/s, and the peer-to-peer architectures win; unlimited, the PS's plan
// (which overlaps pulls with compute) is no slower than the ring's.
TEST(Architecture, ASharedCloudLinkTurnsTheChoiceAwayFromThePs) {
  const ModelProfile p = testing::uniform_profile("big", 32, 10, 1000000, 10, 20);
  const LinkProfile edge{100e6, 100e6, 0, 0, 1};
  const ArchitectureChoice shared =
      choose_architecture(p, edge, {200e6, 200e6}, 8, {"ps", "allreduce", "gossip"});
  EXPECT_NE(shared.chosen, "ps") << shared.text();
  EXPECT_GT(shared.predictions[0].ms,
            2 * std::min(shared.predictions[1].ms, shared.predictions[2].ms))
      << shared.text();
  const ArchitectureChoice only_ps = choose_architecture(p, edge, {200e6, 200e6}, 8, {"ps"});
  EXPECT_EQ(only_ps.chosen, "ps");
  EXPECT_THROW(choose_architecture(p, edge, {}, 8, {}), InvalidInput);
  EXPECT_THROW(choose_architecture(p, edge, {}, 8, {"mesh"}), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::plan
