#include "plan/replan/replan.h"

#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "plan/model/simulate.h"

namespace dynacomm::plan {
namespace {

// Ten units whose sizes differ by orders of magnitude, compute comparable to the link time
// at 100 Mbit/s; every transmission costs 1 ms. The best plan at 10 Mbit/s (few segments)
// is a poor one at 100 Mbit/s, where overlap pays.
ModelProfile profile() {
  ModelProfile p;
  p.model = "synthetic";
  p.batch = 32;
  const double mb[] = {0.01, 0.3, 0.05, 1.2, 0.2, 2.0, 0.02, 0.8, 0.1, 1.5};
  for (int u = 0; u < 10; ++u) {
    const auto bytes = static_cast<std::int64_t>(mb[u] * 1e6);
    p.units.push_back({"u" + std::to_string(u), bytes / 4, bytes, 6.0 + u, 12.0 + 2 * u});
  }
  return p;
}

LinkProfile link(double mbit) { return {mbit * 1e6, mbit * 1e6, 1.0, 1.0, 10.0}; }

ReplanPolicy adopted_at(std::int64_t it, double mbit, ReplanOptions o = {}) {
  ReplanPolicy policy("dynacomm", {}, o);
  const Plan p = make_plan("dynacomm", profile(), link(mbit), {});
  policy.adopt(it, p, profile(), link(mbit));
  return policy;
}

// Per unit: dense, or a top-k-like 1% of the bytes costing 0.5 ms per MB to encode and
// 0.2 ms per MB to decode.
CodecOptions codec_options() {
  CodecOptions o;
  for (const UnitProfile& u : profile().units) {
    const double mb = static_cast<double>(u.bytes) * 1e-6;
    o.push_back({{"none", u.bytes, 0, 0}, {"topk", u.bytes / 100, 0.5 * mb, 0.2 * mb}});
  }
  return o;
}

// With --compress auto the choice is re-made with the plan: dense on a fast link, the
// big units compressed when the link slows, and a change of the choice alone is a change.
TEST(ReplanPolicy, ChoosesTheCodecsAfreshWithThePlan) {
  const std::vector<int> dense(10, 0);
  ReplanPolicy policy("dynacomm", {}, {});
  policy.adopt(2, make_plan("dynacomm", profile(), link(10000), {}), profile(), link(10000));
  ReplanDecision d = policy.evaluate_codecs(profile(), codec_options(), dense, link(10000));
  EXPECT_FALSE(d.change) << "nothing moved: dense stays, the plan stays";
  EXPECT_EQ(d.codec_choice, dense);
  d = policy.evaluate_codecs(profile(), codec_options(), dense, link(10));
  EXPECT_TRUE(d.change);
  EXPECT_EQ(d.codec_choice[5], 1) << "the 2 MB unit goes compressed at 10 Mbit/s";
  EXPECT_GT(d.current_ms, 1.5 * d.best_ms);  // the dense pulls stay
  EXPECT_NEAR(d.best_ms,
              predict_plan_ms(with_codecs(profile(), codec_options(), d.codec_choice), link(10),
                              d.plan, {}),
              1e-9 * d.best_ms);
  // The plan in use was made for the compressed profile: back on the fast link dense wins
  // again only when its gain beats the threshold; either way the decision is consistent.
  policy.adopt(10, d.plan, with_codecs(profile(), codec_options(), d.codec_choice), link(10));
  const ReplanDecision same =
      policy.evaluate_codecs(profile(), codec_options(), d.codec_choice, link(10));
  EXPECT_FALSE(same.change);
  EXPECT_EQ(same.codec_choice, d.codec_choice);
}

TEST(ReplanPolicy, KeepsThePlanWhenNothingChanged) {
  const ReplanPolicy policy = adopted_at(2, 10);
  const ReplanDecision d = policy.evaluate(profile(), link(10));
  EXPECT_FALSE(d.change);
  EXPECT_DOUBLE_EQ(d.gain_ms(), 0);
  EXPECT_EQ(d.why, "no figure moved by more than 5%");
}

TEST(ReplanPolicy, ChangesPlanWhenTheLinkGetsFasterAndSaysWhy) {
  const ReplanPolicy policy = adopted_at(2, 10);
  const ReplanDecision d = policy.evaluate(profile(), link(100));
  ASSERT_FALSE(d.plan == policy.current());
  EXPECT_TRUE(d.change);
  EXPECT_GT(d.current_ms, d.best_ms * 1.05);
  EXPECT_DOUBLE_EQ(d.current_ms, simulate(profile(), link(100), policy.current()));
  EXPECT_NE(d.why.find("downlink 10 Mbit/s -> 100 Mbit/s"), std::string::npos) << d.why;
  EXPECT_NE(d.why.find("uplink"), std::string::npos) << d.why;
}

TEST(ReplanPolicy, ThresholdDecides) {
  const ReplanPolicy policy = adopted_at(2, 10);
  const ReplanDecision d = policy.evaluate(profile(), link(100));
  const double gain = d.current_ms / d.best_ms - 1;
  EXPECT_TRUE(policy.evaluate(profile(), link(100), gain * 0.9).change);
  EXPECT_FALSE(policy.evaluate(profile(), link(100), gain * 1.1).change);
}

TEST(ReplanPolicy, AtMostEveryMinIntervalIterations) {
  ReplanOptions o;
  o.min_interval = 4;
  ReplanPolicy policy = adopted_at(10, 10, o);
  EXPECT_FALSE(policy.due(10));
  EXPECT_FALSE(policy.due(13));
  EXPECT_TRUE(policy.due(14));
  policy.adopt(14, policy.evaluate(profile(), link(100)).plan, profile(), link(100));
  EXPECT_FALSE(policy.due(17));
  EXPECT_TRUE(policy.due(18));
  EXPECT_FALSE(ReplanPolicy("dynacomm", {}, {}).due(100)) << "nothing adopted yet";
}

TEST(ReplanPolicy, NoOscillationUnderNoisyEstimatesOfAFixedLink) {
  // 200 iterations of estimates scattered +-10% (bandwidth) and +-20% (compute) around one
  // setting: the policy, run as the worker runs it, never changes plan.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> bw(0.9, 1.1), cpu(0.8, 1.2);
  for (double mbit : {10.0, 30.0, 100.0, 1000.0}) {
    ReplanPolicy policy = adopted_at(2, mbit);
    int changes = 0;
    for (std::int64_t it = 3; it < 200; ++it) {
      if (!policy.due(it)) continue;
      ModelProfile p = profile();
      for (auto& u : p.units) u.backward_ms *= cpu(rng);
      LinkProfile l = link(mbit);
      l.down_bps *= bw(rng);
      l.up_bps *= bw(rng);
      const ReplanDecision d = policy.evaluate(p, l);
      if (d.change) {
        ++changes;
        policy.adopt(it + 1, d.plan, p, l);
      }
    }
    EXPECT_EQ(changes, 0) << "at " << mbit << " Mbit/s";
  }
}

TEST(ReplanPolicy, FollowsAStepAndThenStays) {
  ReplanPolicy policy = adopted_at(2, 10);
  int changes = 0;
  for (std::int64_t it = 3; it < 60; ++it) {
    const double mbit = it < 20 ? 10 : 100;
    if (!policy.due(it)) continue;
    const ReplanDecision d = policy.evaluate(profile(), link(mbit));
    if (d.change) {
      ++changes;
      EXPECT_GE(it, 20);
      policy.adopt(it + 1, d.plan, profile(), link(mbit));
    }
  }
  EXPECT_EQ(changes, 1);
  EXPECT_TRUE(policy.current() == make_plan("dynacomm", profile(), link(100), {}));
}

TEST(ReplanPolicy, ModesAndOptions) {
  EXPECT_EQ(parse_replan_mode("dynamic"), ReplanMode::kDynamic);
  EXPECT_EQ(parse_replan_mode("oracle"), ReplanMode::kOracle);
  EXPECT_STREQ(to_string(parse_replan_mode("epoch")), "epoch");
  EXPECT_STREQ(to_string(parse_replan_mode("static")), "static");
  EXPECT_THROW(parse_replan_mode("sometimes"), InvalidInput);
  EXPECT_THROW(ReplanPolicy("dynacomm", {}, {-0.1, 3}), InvalidInput);
  EXPECT_THROW(ReplanPolicy("dynacomm", {}, {0.05, 0}), InvalidInput);
  EXPECT_THROW(ReplanPolicy("dynacomm", {}, {}).evaluate(profile(), link(10)), Error);
}

TEST(ReplanPolicy, ComparesFullDuplexPlansWithTheModelOfSeveralWorkers) {
  PlannerOptions o;
  ReplanPolicy policy("dynacomm-fd", o, {});
  const Plan p = make_plan("dynacomm-fd", profile(), link(100), o);
  policy.adopt(2, p, profile(), link(100));
  o.workers = 2;
  ComputeFactors slow, fast;
  for (int u = 0; u < 10; ++u) {
    slow.forward.push_back(u % 2 ? 1.8 : 0.7);
    slow.backward.push_back(u % 3 ? 0.8 : 1.9);
    fast.forward.push_back(1);
    fast.backward.push_back(1);
  }
  o.compute_spread = {slow, fast};
  policy.set_planner_options(o);
  const ReplanDecision d = policy.evaluate(profile(), link(100));
  EXPECT_DOUBLE_EQ(d.current_ms, predict_plan_ms(profile(), link(100), p, o));
  EXPECT_GT(d.current_ms, predict_ms(profile(), link(100), p) * 1.01);
  o.workers = 0;
  EXPECT_THROW(policy.set_planner_options(o), InvalidInput);
}

TEST(DescribeChange, NamesWhatMoved) {
  ModelProfile slow = profile();
  for (auto& u : slow.units) u.forward_ms *= 2, u.backward_ms *= 2;
  LinkProfile l = link(100);
  l.latency_ms = 50;
  const std::string s = describe_change(profile(), link(100), slow, l);
  EXPECT_NE(s.find("latency"), std::string::npos) << s;
  EXPECT_NE(s.find("compute x2.00"), std::string::npos) << s;
  EXPECT_EQ(s.find("downlink"), std::string::npos) << s;
}

TEST(SearchCadence, WaitsFourSearchesAfterOneUnlessTheEstimatesMovedFar) {
  SearchCadence cadence;  // back-off x4, x1.5 cuts it short
  int asked = 0;
  auto at = [&](double mbit) {
    return [&asked, mbit] {
      ++asked;
      return SearchCadence::Estimates{profile(), link(mbit)};
    };
  };
  EXPECT_TRUE(cadence.may_start(0, at(10)));  // before any search: at once
  EXPECT_EQ(asked, 0);
  cadence.searched(1000, 500, profile(), link(10));  // ran 500-1000 ms on 10 Mbit/s figures
  EXPECT_DOUBLE_EQ(cadence.last_took_ms(), 500);
  // Within four times its duration after it: only if they moved by x1.5 or more.
  EXPECT_FALSE(cadence.may_start(1100, at(14)));  // x1.4
  EXPECT_DOUBLE_EQ(cadence.last_move(), 1.4);
  EXPECT_FALSE(cadence.started_early());
  EXPECT_TRUE(cadence.may_start(1100, at(5)));    // a step down, x2
  EXPECT_TRUE(cadence.may_start(1100, at(100)));  // or up, x10
  EXPECT_TRUE(cadence.started_early());
  EXPECT_DOUBLE_EQ(cadence.last_move(), 10);
  EXPECT_EQ(asked, 3);
  // After four times its duration: at once, without asking.
  EXPECT_TRUE(cadence.may_start(3000, at(10)));
  EXPECT_FALSE(cadence.started_early());
  EXPECT_EQ(asked, 3);
  // A device that slowed moves the compute: the same rule.
  ModelProfile slow = profile();
  for (auto& u : slow.units) u.forward_ms *= 2, u.backward_ms *= 2;
  EXPECT_TRUE(cadence.may_start(1100, [&] { return SearchCadence::Estimates{slow, link(10)}; }));
  EXPECT_DOUBLE_EQ(cadence.last_move(), 2);
  // Measured from the last search's estimates, and never two early searches in a row:
  // that one (started early) ran on 100 Mbit/s figures; the link moving again waits.
  cadence.searched(5000, 500, profile(), link(100));
  EXPECT_FALSE(cadence.may_start(5100, at(10)));
  EXPECT_EQ(asked, 3);                               // not even asked
  EXPECT_TRUE(cadence.may_start(7000, at(10)));      // the back-off has passed
  cadence.searched(7500, 500, profile(), link(10));  // a search on time: an early one may follow
  EXPECT_FALSE(cadence.may_start(7600, at(10)));
  EXPECT_FALSE(cadence.may_start(7600, at(8)));
  EXPECT_TRUE(cadence.may_start(7600, at(100)));
  EXPECT_THROW(SearchCadence(0.5, 1.5), InvalidInput);
  EXPECT_THROW(SearchCadence(4, 1), InvalidInput);
}

TEST(LargestMove, EitherWayAndUnknownFiguresAreNoMove) {
  EXPECT_DOUBLE_EQ(largest_move(profile(), link(10), profile(), link(10)), 1);
  EXPECT_DOUBLE_EQ(largest_move(profile(), link(10), profile(), link(40)), 4);
  EXPECT_DOUBLE_EQ(largest_move(profile(), link(40), profile(), link(10)), 4);
  LinkProfile up_only = link(10);
  up_only.up_bps = 30e6;
  EXPECT_DOUBLE_EQ(largest_move(profile(), link(10), profile(), up_only), 3);
  LinkProfile unknown = link(10);
  unknown.down_bps = 0;
  EXPECT_DOUBLE_EQ(largest_move(profile(), unknown, profile(), link(10)), 1);
}

}  // namespace
}  // namespace dynacomm::plan
