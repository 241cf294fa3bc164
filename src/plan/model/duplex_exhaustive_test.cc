// The full-duplex planner against brute force up to 10 units (label `exhaustive`: about a
// minute on one core, so kept out of the millisecond unit tests of plan_test).
//
// What each check covers:
//  - the family dynacomm-fd searches holds the optimum over every pull order: its exact
//    search equals brute force over every segmentation and every order of the pull
//    segments, up to 7 units (7: 751,000 simulations);
//  - the exact search (what plan_duplex runs up to 8 units) equals brute force over every
//    point of the family (no pruning) at 8 units;
//  - the bounded local search (what plan_duplex runs above 8 units) against brute force over
//    the family at 9 and 10 units (10: 20 million simulations): never below it, and how far
//    above it is reported and bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "base/error.h"
#include "plan/model/duplex.h"
#include "plan/test_util.h"

namespace dynacomm::plan {
namespace {

using testing::duplex_period;

TEST(DuplexExhaustive, FamilyHoldsTheOptimumOverEveryPullOrderUpTo7Units) {
  std::mt19937_64 rng(31), aggregation_rng(35);
  int trial = 0;
  for (int L : {6, 6, 6, 7, 7}) {
    const ModelProfile p = testing::random_profile(rng, L, L);
    LinkProfile l = testing::random_link(rng);
    if (trial++ % 2) testing::add_random_aggregation(aggregation_rng, l);
    const double family = duplex_period(p, l, plan_duplex_exhaustive(p, l));
    const double every_order = duplex_period(p, l, brute_force_duplex(p, l));
    EXPECT_NEAR(family, every_order, 1e-9 * every_order) << L << " units";
  }
}

// The same with compressed pushes (encoded bytes on the uplink, decoding in the aggregation)
// and pulls (encoded bytes on the downlink).
TEST(DuplexExhaustive, FamilyHoldsTheOptimumWithCompressedPushes) {
  std::mt19937_64 rng(41), aggregation_rng(42);
  for (int L : {5, 6}) {
    const ModelProfile p = testing::random_compressed_profile(rng, L, L);
    LinkProfile l = testing::random_link(rng);
    testing::add_random_aggregation(aggregation_rng, l);
    const double family = duplex_period(p, l, plan_duplex_exhaustive(p, l));
    const double every_order = duplex_period(p, l, brute_force_duplex(p, l));
    EXPECT_NEAR(family, every_order, 1e-9 * every_order) << L << " units";
  }
}

TEST(DuplexExhaustive, ExactSearchEqualsBruteForceOverTheFamilyAt8Units) {
  std::mt19937_64 rng(32), aggregation_rng(36);
  for (int trial = 0; trial < 2; ++trial) {
    const ModelProfile p = testing::random_profile(rng, 8, 8);
    LinkProfile l = testing::random_link(rng);
    if (trial % 2) testing::add_random_aggregation(aggregation_rng, l);
    DuplexPlannerOptions exact;
    exact.exact_up_to = 8;
    const double searched = duplex_period(p, l, plan_duplex(p, l, exact));
    const double brute = duplex_period(p, l, brute_force_duplex_family(p, l));
    EXPECT_NEAR(searched, brute, 1e-9 * brute) << "trial " << trial;
  }
}

TEST(DuplexExhaustive, LocalSearchAgainstBruteForceOverTheFamilyAt9And10Units) {
  std::mt19937_64 rng(33);
  DuplexPlannerOptions heuristic;
  heuristic.exact_up_to = 0;  // what plan_duplex runs above 8 units
  double worst = 1;
  for (int L : {9, 10}) {
    const ModelProfile p = testing::random_profile(rng, L, L);
    const LinkProfile l = testing::random_link(rng);
    const double h = duplex_period(p, l, plan_duplex(p, l, heuristic));
    const double brute = duplex_period(p, l, brute_force_duplex_family(p, l));
    EXPECT_GE(h, brute * (1 - 1e-9)) << L << " units: below the brute-force optimum";
    worst = std::max(worst, h / brute);
    std::printf("%d units: local search %.3f ms, brute force %.3f ms (x%.4f)\n", L, h, brute,
                h / brute);
  }
  EXPECT_LE(worst, 1.02) << "local search within 2% of the optimum of its family";
}

TEST(DuplexExhaustive, BruteForceRefusesMoreThan10Units) {
  std::mt19937_64 rng(34);
  const ModelProfile p = testing::random_profile(rng, 11, 11);
  EXPECT_THROW(brute_force_duplex_family(p, testing::random_link(rng)), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::plan
