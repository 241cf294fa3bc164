#include "plan/model/plan.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace dynacomm::plan {
namespace {

using nlohmann::json;

std::string error_of(const Plan& p, int n) {
  try {
    p.validate(n);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(Plan, ValidPlansPass) {
  EXPECT_EQ(error_of(Plan{"s", {{0, 9}}, {{0, 9}}}, 10), "");
  EXPECT_EQ(error_of(Plan{"d", {{0, 3}, {4, 10}}, {{9, 10}, {0, 8}}}, 11), "");
}

TEST(Plan, RejectsGapsOverlapsAndWrongOrder) {
  EXPECT_NE(error_of(Plan{"x", {{0, 3}, {5, 9}}, {{0, 9}}}, 10)
                .find("pull[1] [5,9]: starts at unit 5, expected unit 4"),
            std::string::npos);
  EXPECT_NE(error_of(Plan{"x", {{0, 5}, {4, 9}}, {{0, 9}}}, 10).find("pull[1]"), std::string::npos);
  EXPECT_NE(error_of(Plan{"x", {{0, 8}}, {{0, 9}}}, 10).find("units 9..9 are not covered"),
            std::string::npos);
  // Push must be in send order: top unit first.
  EXPECT_NE(
      error_of(Plan{"x", {{0, 9}}, {{0, 4}, {5, 9}}}, 10).find("push[0] [0,4]: ends at unit 4"),
      std::string::npos);
  EXPECT_NE(error_of(Plan{"x", {{0, 9}}, {{5, 9}}}, 10).find("push: units 0..4"),
            std::string::npos);
  EXPECT_NE(error_of(Plan{"x", {{0, 10}}, {{0, 9}}}, 10).find("out of range"), std::string::npos);
  EXPECT_NE(error_of(Plan{"x", {{3, 2}}, {{0, 9}}}, 10).find("first unit is after last"),
            std::string::npos);
  EXPECT_NE(error_of(Plan{"x", {}, {{0, 9}}}, 10).find("pull: no segments"), std::string::npos);
  EXPECT_NE(error_of(Plan{"x", {{0, 0}}, {{0, 0}}}, 0).find("no units"), std::string::npos);
}

TEST(Plan, JsonRoundTrip) {
  Plan p{"dynacomm", {{0, 3}, {4, 10}}, {{9, 10}, {0, 8}}};
  json j = to_json(p);
  EXPECT_EQ(j.dump(), R"({"pull":[[0,3],[4,10]],"push":[[9,10],[0,8]],"scheduler":"dynacomm"})");
  Plan q = plan_from_json(j, 11, "test");
  EXPECT_EQ(q, p);
  EXPECT_EQ(q.scheduler, "dynacomm");
}

TEST(Plan, PriorityPlansRoundTripWithoutAPullOrder) {
  // The PS answers a priority plan's pulls as they become ready: it has no pull order,
  // and its JSON (summary.json, `dynacomm plan --json`) reads back as the same plan.
  Plan p{"p3", {{0, 0}, {1, 1}, {2, 2}}, {{2, 2}, {1, 1}, {0, 0}}};
  p.full_duplex = true;
  p.atom_params = 40000;
  p.credit_bytes = 640000;
  const json j = to_json(p);
  EXPECT_FALSE(j.contains("pull_order"));
  EXPECT_EQ(plan_from_json(j, 3, "test"), p);
}

TEST(Plan, FullDuplexPlansCarryTheirPullOrder) {
  Plan p{"dynacomm-fd", {{0, 3}, {4, 10}}, {{9, 10}, {0, 8}}};
  p.full_duplex = true;
  p.pull_order = {1, 0};
  EXPECT_NO_THROW(p.validate(11));
  json j = to_json(p);
  EXPECT_EQ(j["full_duplex"], true);
  EXPECT_EQ(j["pull_order"], json::parse("[1,0]"));
  EXPECT_EQ(plan_from_json(j, 11, "test"), p);
  EXPECT_EQ(plan_from_json(j, 11, "test").pull_sequence(), (std::vector<int>{1, 0}));
  Plan ascending = p;
  ascending.pull_order.clear();  // empty: ascending, the same as {0, 1}
  EXPECT_EQ(ascending.pull_sequence(), (std::vector<int>{0, 1}));
  EXPECT_FALSE(ascending == p);
  p.pull_order = {1, 1};
  EXPECT_NE(error_of(p, 11).find("not a permutation"), std::string::npos);
  p.pull_order = {0};
  EXPECT_NE(error_of(p, 11).find("1 entries for 2 pull segments"), std::string::npos);
  p.pull_order = {1, 0};
  p.full_duplex = false;
  EXPECT_NE(error_of(p, 11).find("phase-separated"), std::string::npos);
  j["pull_order"] = json::parse(R"([1, "0"])");
  try {
    plan_from_json(j, 11, "p.json");
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("p.json.pull_order[1]"), std::string::npos);
  }
}

TEST(Plan, JsonRejectsMalformedSegments) {
  auto err = [](const char* text) {
    try {
      plan_from_json(json::parse(text), 4, "p.json");
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err(R"({"push": [[0,3]]})").find("p.json.pull: missing field"), std::string::npos);
  EXPECT_NE(err(R"({"pull": [[0,3]], "push": [[0,"3"]]})").find("p.json.push[0]"),
            std::string::npos);
  EXPECT_NE(err(R"({"pull": [[0,1,2]], "push": [[0,3]]})").find("p.json.pull[0]"),
            std::string::npos);
  EXPECT_NE(err(R"({"pull": {"a":1}, "push": [[0,3]]})").find("expected an array"),
            std::string::npos);
  EXPECT_NE(err(R"({"pull": [[0,2]], "push": [[0,3]]})").find("p.json: plan: pull: units 3..3"),
            std::string::npos);
  EXPECT_NE(err(R"([1,2])").find("expected a JSON object"), std::string::npos);
}

TEST(Plan, FormatAndReverse) {
  std::vector<Segment> segs{{0, 0}, {1, 4}, {5, 5}};
  EXPECT_EQ(format_segments(segs), "0 1-4 5");
  EXPECT_EQ(format_segments(reverse_to_send_order(segs)), "5 1-4 0");
  // Cut flags and back, in either order of the segments.
  const std::vector<bool> cut = cuts_of_segments(segs, 6);
  EXPECT_EQ(cut, (std::vector<bool>{true, false, false, false, true}));
  EXPECT_EQ(cuts_of_segments(reverse_to_send_order(segs), 6), cut);
  EXPECT_EQ(segments_of_cuts(cut), segs);
  EXPECT_EQ(segments_of_cuts(std::vector<bool>(3, false)), (std::vector<Segment>{{0, 3}}));
}

}  // namespace
}  // namespace dynacomm::plan
