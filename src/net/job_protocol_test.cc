#include "net/job_protocol.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace dynacomm::net {
namespace {

template <typename F>
std::string refusal(F decode, const std::string& text) {
  try {
    decode(text.data(), text.size());
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "accepted";
}

TEST(JobProtocol, EveryMessageRoundTrips) {
  const std::string plan = R"({"pull":[[0,3]],"scheduler":"dynacomm-fd"})";
  PlanOffer o = decode_plan_offer(encode(PlanOffer{{{2, 812.5, plan}}}).data(),
                                  encode(PlanOffer{{{2, 812.5, plan}}}).size());
  ASSERT_EQ(o.plans.size(), 1u);
  EXPECT_EQ(o.plans[0].index, 2);
  EXPECT_EQ(o.plans[0].predicted_ms, 812.5);
  EXPECT_EQ(o.plans[0].plan, plan);
  const std::string a = encode(AgreedPlans{{{2, 1, 900, plan}}});
  AgreedPlans ag = decode_agreed_plans(a.data(), a.size());
  ASSERT_EQ(ag.plans.size(), 1u);
  EXPECT_EQ(ag.plans[0].rank, 1);
  const std::string r = encode(ReplanReport{700, ReplanReport::Proposal{650, plan, "downlink"}});
  ReplanReport rr = decode_replan_report(r.data(), r.size());
  EXPECT_EQ(rr.current_ms, 700);
  ASSERT_TRUE(rr.proposal);
  EXPECT_EQ(rr.proposal->why, "downlink");
  const std::string keep = encode(ReplanReport{700, std::nullopt});
  EXPECT_FALSE(decode_replan_report(keep.data(), keep.size()).proposal);
  const std::string c = encode(JobPlanChange{plan, 650, 700, 1, 42, "downlink"});
  JobPlanChange jc = decode_job_plan_change(c.data(), c.size());
  EXPECT_EQ(jc.from_iteration, 42);
  EXPECT_EQ(jc.plan, plan);
  const std::string cfg = encode(JobConfig{{{"--batch", "32"}, {"--model", "resnet18"}}});
  const JobConfig jcfg = decode_job_config(cfg.data(), cfg.size());
  ASSERT_NE(jcfg.find("--model"), nullptr);
  EXPECT_EQ(*jcfg.find("--model"), "resnet18");
  EXPECT_EQ(*jcfg.find("--batch"), "32");
  EXPECT_EQ(jcfg.find("--epochs"), nullptr);
  Hello h{"resnet18", 4, {8, 4096}, 1000, 10, 3, {{"--batch", "32"}}};
  const std::string ht = encode(h);
  const Hello hh = decode_hello(ht.data(), ht.size());
  EXPECT_EQ(hh.model, "resnet18");
  EXPECT_EQ(hh.workers, 4);
  EXPECT_EQ(hh.unit_bytes, (std::vector<std::int64_t>{8, 4096}));
  EXPECT_EQ(hh.total_iterations, 1000);
  EXPECT_EQ(hh.trace_from, 10);
  EXPECT_EQ(hh.trace_count, 3);
  EXPECT_EQ(hh.config, h.config);
}

TEST(JobProtocol, BadInputIsRefusedNamingWhatIsWrong) {
  EXPECT_NE(refusal(decode_plan_offer, "[1]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(refusal(decode_plan_offer, "{\"plans\": 3}").find("\"plans\" is not an array"),
            std::string::npos);
  EXPECT_NE(refusal(decode_plan_offer, R"({"plans":[{"index":-1,"predicted_ms":1,"plan":{}}]})")
                .find("\"index\" is not an integer"),
            std::string::npos);
  EXPECT_NE(refusal(decode_plan_offer, R"({"plans":[{"index":0,"predicted_ms":1,"plan":[]}]})")
                .find("\"plan\" is not an object"),
            std::string::npos);
  EXPECT_NE(refusal(decode_replan_report, R"({"current_ms":-1})").find("\"current_ms\""),
            std::string::npos);
  EXPECT_NE(refusal(decode_replan_report, R"({"current_ms":1,"proposal":{"predicted_ms":0}})")
                .find("\"predicted_ms\""),
            std::string::npos);
  EXPECT_NE(
      refusal(decode_job_plan_change, R"({"plan":{},"predicted_ms":1,"current_ms":1,"rank":"x"})")
          .find("\"rank\""),
      std::string::npos);
  EXPECT_NE(
      refusal(decode_job_config, R"({"settings":{"batch":"32"}})").find("'batch' is not a flag"),
      std::string::npos);
  EXPECT_NE(
      refusal(decode_job_config, R"({"settings":{"--batch":32}})").find("--batch is not a text"),
      std::string::npos);
  EXPECT_NE(refusal(decode_job_config, R"({"settings":[]})").find("\"settings\" is not an object"),
            std::string::npos);
  EXPECT_NE(refusal(decode_agreed_plans, "not json").find("not a JSON object"), std::string::npos);
}

TEST(JobProtocol, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep =
      "{\"plans\":" + std::string(4'000'000, '[') + std::string(4'000'000, ']') + "}";
  EXPECT_NE(refusal(decode_plan_offer, deep).find("nested deeper than 64"), std::string::npos);
  // Brackets inside strings do not count.
  const std::string quoted = R"({"current_ms":1,"proposal":{"predicted_ms":1,"plan":{},"why":")" +
                             std::string(100, '[') + R"("}})";
  EXPECT_EQ(decode_replan_report(quoted.data(), quoted.size()).proposal->why,
            std::string(100, '['));
}

}  // namespace
}  // namespace dynacomm::net
