#include "report/chrome_trace.h"

#include <gtest/gtest.h>

namespace dynacomm::report {
namespace {

TEST(ChromeTrace, TimelineBecomesCompleteEventsOnThreeTracks) {
  plan::Timeline t;
  t.events = {{plan::EventKind::kPull, 0, 1, 3},
              {plan::EventKind::kForward, 0, 3, 5},
              {plan::EventKind::kBackward, 0, 5, 9},
              {plan::EventKind::kPush, 0, 9, 12}};
  ChromeTrace trace;
  trace.add_timeline(t, "worker 0", 7);
  int complete = 0;
  for (const auto& e : trace.json()["traceEvents"]) {
    EXPECT_EQ(e["pid"], 7);
    if (e["ph"] != "X") continue;
    ++complete;
    if (e["name"] == "pull 0") {
      EXPECT_EQ(e["tid"], ChromeTrace::kDownlink);
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1000);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2000);
    } else if (e["name"] == "push 0") {
      EXPECT_EQ(e["tid"], ChromeTrace::kUplink);
    } else {
      EXPECT_EQ(e["tid"], ChromeTrace::kCompute);
    }
  }
  EXPECT_EQ(complete, 4);
}

TEST(ChromeTrace, InstantEventsCarryTheirArguments) {
  ChromeTrace trace;
  trace.add_instant(1, ChromeTrace::kCompute, "plan change", "replan", 2.5, {{"plan_id", 3}});
  const auto& e = trace.json()["traceEvents"].back();
  EXPECT_EQ(e["ph"], "i");
  EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2500);
  EXPECT_EQ(e["args"]["plan_id"], 3);
  EXPECT_EQ(e["pid"], 1);
}

}  // namespace
}  // namespace dynacomm::report
