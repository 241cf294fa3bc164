#include "plan/replan/trace_file.h"

#include <gtest/gtest.h>

#include <sstream>

#include "base/error.h"

namespace dynacomm::plan {
namespace {

LinkTrace link(const std::string& text) {
  std::istringstream in(text);
  return parse_link_trace(in, "t.csv");
}

std::string link_error(const std::string& text) {
  try {
    link(text);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(TraceFile, ParsesALinkTraceWithCommentsAndWorkers) {
  const LinkTrace t = link(
      "# a step down\n"
      "time_s,down,up,latency,worker\n"
      "0,100mbit,50mbit,10ms,\n"
      "\n"
      "30, 10mbit, 5mbit, 20ms, 1\n"
      "40,1gbit,1gbit,0ms,all\n");
  ASSERT_EQ(t.points.size(), 3u);
  EXPECT_DOUBLE_EQ(t.points[0].down_bps, 100e6);
  EXPECT_DOUBLE_EQ(t.points[0].up_bps, 50e6);
  EXPECT_EQ(t.points[0].worker, -1);
  EXPECT_DOUBLE_EQ(t.points[1].time_s, 30);
  EXPECT_DOUBLE_EQ(t.points[1].latency_ms, 20);
  EXPECT_EQ(t.points[1].worker, 1);
  EXPECT_EQ(t.for_worker(0).size(), 2u);
  EXPECT_EQ(t.for_worker(1).size(), 3u);
  EXPECT_NO_THROW(t.check_workers(2));
  EXPECT_THROW(t.check_workers(1), InvalidInput);
}

TEST(TraceFile, RejectsMalformedLinkTracesNamingTheLine) {
  EXPECT_NE(link_error("").find("t.csv: empty"), std::string::npos);
  EXPECT_NE(link_error("time_s,down,up\n0,1mbit,1mbit\n").find("t.csv:1: expected the header"),
            std::string::npos);
  EXPECT_NE(link_error("time_s,down,up,latency\n").find("no rows"), std::string::npos);
  EXPECT_NE(link_error("time_s,down,up,latency\n0,1mbit,1mbit\n").find("t.csv:2: expected 4"),
            std::string::npos);
  EXPECT_NE(link_error("time_s,down,up,latency\nx,1mbit,1mbit,1ms\n").find("t.csv:2: time_s 'x'"),
            std::string::npos);
  EXPECT_NE(link_error("time_s,down,up,latency\n-1,1mbit,1mbit,1ms\n").find("t.csv:2"),
            std::string::npos);
  EXPECT_NE(link_error("time_s,down,up,latency\n5,1mbit,1mbit,1ms\n2,1mbit,1mbit,1ms\n")
                .find("t.csv:3: time_s 2 goes back"),
            std::string::npos);
  EXPECT_NE(link_error("time_s,down,up,latency\n0,fast,1mbit,1ms\n").find("t.csv:2: "),
            std::string::npos);
  EXPECT_NE(link_error("time_s,down,up,latency\n0,0mbit,1mbit,1ms\n").find("t.csv:2: "),
            std::string::npos);
  EXPECT_NE(link_error("time_s,down,up,latency\n0,1mbit,1mbit,-1ms\n").find("t.csv:2: "),
            std::string::npos);
  EXPECT_NE(link_error("time_s,down,up,latency,worker\n0,1mbit,1mbit,1ms,x\n")
                .find("t.csv:2: worker 'x'"),
            std::string::npos);
  EXPECT_THROW(load_link_trace("/nonexistent/trace.csv"), InvalidInput);
}

TEST(TraceFile, ParsesALinkTraceKeyedByIteration) {
  const LinkTrace t = link(
      "# faster from iteration 8, for worker 1 only\n"
      "iteration,down,up,latency,worker\n"
      "0,2mbit,2mbit,1ms\n"
      "8,100mbit,50mbit,1ms,1\n");
  EXPECT_TRUE(t.by_iteration);
  ASSERT_EQ(t.points.size(), 2u);
  EXPECT_EQ(t.points[1].iteration, 8);
  EXPECT_DOUBLE_EQ(t.points[1].up_bps, 50e6);
  EXPECT_EQ(t.for_worker(0).size(), 1u);
  EXPECT_EQ(t.for_worker(1).size(), 2u);
  EXPECT_FALSE(link("time_s,down,up,latency\n0,1mbit,1mbit,0ms\n").by_iteration);
  EXPECT_NE(link_error("iteration,down,up,latency\n2.5,1mbit,1mbit,0ms\n")
                .find("t.csv:2: iteration '2.5' is not a whole number"),
            std::string::npos);
  EXPECT_NE(link_error("iteration,down,up,latency\n4,1mbit,1mbit,0ms\n3,1mbit,1mbit,0ms\n")
                .find("t.csv:3: iteration 3 goes back"),
            std::string::npos);
  EXPECT_NE(link_error("iteration,down,latency\n4,1mbit,0ms\n")
                .find("expected the header 'iteration,down,up,latency'"),
            std::string::npos);
}

TEST(TraceFile, ParsesAndRejectsSlowdownTraces) {
  std::istringstream ok("time_s,factor,worker\n0,1,\n20,3.5,0\n");
  const SlowdownTrace t = parse_slowdown_trace(ok, "d.csv");
  ASSERT_EQ(t.points.size(), 2u);
  EXPECT_DOUBLE_EQ(t.points[1].factor, 3.5);
  EXPECT_EQ(t.for_worker(1).size(), 1u);
  for (const char* bad : {"time_s,factor\n0,0.5\n", "time_s,factor\n0,abc\n",
                          "time_s,factor\n0,2000\n", "time_s,slowdown\n0,2\n"}) {
    std::istringstream in(bad);
    EXPECT_THROW(parse_slowdown_trace(in, "d.csv"), InvalidInput) << bad;
  }
}

// The traces shipped under traces/ parse, start at 0 and change the link (or device).
TEST(TraceFile, ShippedTracesParse) {
  for (const char* name : {"step-down", "step-down-fast", "step-up", "periodic", "drift", "flat"}) {
    const LinkTrace t = load_link_trace(std::string(DYNACOMM_TRACES_DIR) + "/" + name + ".csv");
    ASSERT_FALSE(t.points.empty()) << name;
    EXPECT_EQ(t.points.front().time_s, 0) << name;
    EXPECT_EQ(t.points.size() > 1, std::string(name) != "flat") << name;
  }
  const SlowdownTrace d =
      load_slowdown_trace(std::string(DYNACOMM_TRACES_DIR) + "/device-slowdown-step.csv");
  EXPECT_EQ(d.points.size(), 2u);
}

}  // namespace
}  // namespace dynacomm::plan
