#include "ps/agreement.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"

namespace dynacomm::ps {
namespace {

net::PlanOffer::Entry entry(int index, double ms, const std::string& tag) {
  return {index, ms, "{\"tag\":\"" + tag + "\"}"};
}

net::ReplanReport report(double current_ms, double proposed_ms = 0, const std::string& tag = "") {
  net::ReplanReport r{current_ms, std::nullopt};
  if (proposed_ms > 0) r.proposal = net::ReplanReport::Proposal{proposed_ms, tag, tag};
  return r;
}

TEST(PlanAgreement, EachStrategyRunsTheSlowestWorkersPlanOnceAllHaveOffered) {
  std::vector<std::string> log;
  PlanAgreement a(3, [&](const std::string& l) { log.push_back(l); });
  EXPECT_FALSE(a.offer(2, {{entry(0, 500, "two's first")}}));
  EXPECT_FALSE(a.offer(0, {{entry(0, 100, "zero's first"), entry(2, 900, "zero's third")}}));
  EXPECT_THROW(a.offer(0, {}), InvalidInput) << "a second offer";
  auto agreed = a.offer(1, {{entry(0, 700, "one's first"), entry(2, 900, "one's third")}});
  ASSERT_TRUE(agreed);
  ASSERT_EQ(agreed->plans.size(), 2u);
  EXPECT_EQ(agreed->plans[0].index, 0);
  EXPECT_EQ(agreed->plans[0].rank, 1);  // 700 ms against 500 and 100
  EXPECT_EQ(agreed->plans[0].plan, "{\"tag\":\"one's first\"}");
  EXPECT_EQ(agreed->plans[1].rank, 0);  // a tie: the lower rank
  EXPECT_EQ(log.size(), 2u);
  EXPECT_TRUE(a.agreed());
  // A worker that rejoined offers again: it gets the job's plans.
  auto again = a.offer(2, {{entry(0, 5000, "two's new")}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->plans[0].plan, "{\"tag\":\"one's first\"}");
}

TEST(PlanAgreement, ALeavingRankNoLongerHoldsUpTheAgreementOrAReplan) {
  PlanAgreement a(3, nullptr);
  EXPECT_FALSE(a.offer(0, {{entry(0, 100, "zero")}}));
  EXPECT_FALSE(a.offer(2, {{entry(0, 900, "two")}}));
  PlanAgreement::Completed c = a.leave(2, 0);  // its offer goes with it
  EXPECT_FALSE(c.plans);
  a.join(2);  // back, and offers afresh
  EXPECT_FALSE(a.offer(2, {{entry(0, 300, "two again")}}));
  c = a.leave(1, 0);  // the last one missing leaves: the others agree
  ASSERT_TRUE(c.plans);
  EXPECT_EQ(c.plans->plans[0].plan, "{\"tag\":\"two again\"}");
  EXPECT_FALSE(a.report(0, 40, report(100, 80, "faster"), 41));
  c = a.leave(2, 41);  // rank 0 is the job now, and its report decides
  ASSERT_TRUE(c.change);
  EXPECT_EQ(c.change->from_iteration, 44);
  EXPECT_EQ(a.last_change()->from_iteration, 44);
}

TEST(PlanAgreement, TheSlowestReportDecidesFromThreeIterationsPastTheNewest) {
  PlanAgreement a(2, nullptr);
  EXPECT_THROW(a.report(0, 3, report(900, 800, "early"), 3), InvalidInput);
  a.offer(0, {});
  a.offer(1, {});
  // Rank 1 is the slower and keeps the plan: so does the job.
  EXPECT_FALSE(a.report(0, 5, report(900, 800, "zero's"), 5));
  EXPECT_FALSE(a.report(1, 5, report(1000), 5));
  // A later report replaces the earlier one: now the slowest proposes.
  auto change = a.report(1, 5, report(1000, 700, "one's"), 5);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->plan, "one's");
  EXPECT_EQ(change->rank, 1);
  EXPECT_EQ(change->from_iteration, 8);
  EXPECT_EQ(change->predicted_ms, 700);
  EXPECT_EQ(change->current_ms, 1000);
  EXPECT_EQ(change->why, "one's");
  EXPECT_EQ(a.plan_from(), 8);
  // Reports made before iteration 8 judged the plan before: not counted.
  EXPECT_FALSE(a.report(0, 7, report(2000, 600, "stale"), 7));
  EXPECT_FALSE(a.report(1, 8, report(1000), 8));
  change = a.report(0, 8, report(1200, 1100, "zero's again"), 9);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->rank, 0);
  EXPECT_EQ(change->from_iteration, 12);
}

TEST(PlanAgreement, TheNewestIterationNeverOverflows) {
  PlanAgreement a(1, nullptr);
  a.offer(0, {});
  const std::int64_t top = std::numeric_limits<std::int64_t>::max();
  auto change = a.report(0, top, report(10, 5, "x"), top);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->from_iteration, top);
}

}  // namespace
}  // namespace dynacomm::ps
