#include "report/trace_merge.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "report/chrome_trace.h"

namespace dynacomm::report {
namespace {

class TraceMerge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path().string() + "/dynacomm-trace-merge-" +
           std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

// A worker's events ts (ms on its clock) and the PS's, as the processes write them.
std::string worker_trace(int rank, double start_ms, std::optional<double> offset_ms) {
  ChromeTrace t;
  t.add_event(rank, ChromeTrace::kCompute, "fwd conv1", "forward", start_ms, start_ms + 2);
  t.set_clock_offset(rank, offset_ms);
  return t.json().dump();
}

double ts_of(const nlohmann::json& merged, int pid) {
  for (const auto& e : merged["traceEvents"])
    if (e.value("ph", "") == "X" && e.value("pid", -1) == pid) return e["ts"].get<double>() / 1e3;
  ADD_FAILURE() << "no event of pid " << pid;
  return -1;
}

TEST_F(TraceMerge, WorkersEventsMoveOntoThePsClock) {
  // Worker 0's clock runs 1000 ms behind the PS's, worker 1's 500 ms ahead; each started
  // its forward at PS time 1010 ms. The PS answered a pull at 1005 ms.
  ChromeTrace ps;
  ps.add_event(2, 0, "pull", "request", 1005, 1006);
  ps.set_ps_clock();
  const auto merged = merge_traces(
      {write("w0.json", worker_trace(0, 10, 1000)), write("w1.json", worker_trace(1, 1510, -500)),
       write("ps.json", ps.json().dump())},
      Clocks::kToPs);
  EXPECT_DOUBLE_EQ(ts_of(merged, 2), 0);  // the earliest event is at 0
  EXPECT_DOUBLE_EQ(ts_of(merged, 0), 5);
  EXPECT_DOUBLE_EQ(ts_of(merged, 1), 5);
}

TEST_F(TraceMerge, OneMachinesTracesShareTheirClock) {
  const auto merged = merge_traces(
      {write("w0.json", worker_trace(0, 10, 1000)), write("w1.json", worker_trace(1, 14, -500))},
      Clocks::kShared);
  EXPECT_DOUBLE_EQ(ts_of(merged, 0), 0);
  EXPECT_DOUBLE_EQ(ts_of(merged, 1), 4);
}

TEST_F(TraceMerge, RefusesWhatItCannotPlaceNamingTheFile) {
  const std::string no_offset = write("old.json", worker_trace(0, 10, std::nullopt));
  const std::string junk = write("junk.json", "{\"traceEvents\": 3}");
  const std::string text = write("text.json", "not json");
  const std::string bad_ts = write("ts.json", "{\"traceEvents\": [{\"ts\": \"soon\"}]}");
  auto message = [](const std::vector<std::string>& paths, Clocks c) {
    try {
      merge_traces(paths, c);
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({no_offset}, Clocks::kToPs).find("old.json: the trace records no offset"),
            std::string::npos);
  EXPECT_EQ(message({no_offset}, Clocks::kShared), "no error");
  EXPECT_NE(message({junk}, Clocks::kShared).find("junk.json: not a Chrome trace"),
            std::string::npos);
  EXPECT_NE(message({text}, Clocks::kShared).find("text.json: not JSON"), std::string::npos);
  EXPECT_NE(message({bad_ts}, Clocks::kShared).find("ts.json: a trace event"), std::string::npos);
  EXPECT_NE(message({dir_ + "/missing.json"}, Clocks::kShared).find("missing.json: cannot open"),
            std::string::npos);
}

}  // namespace
}  // namespace dynacomm::report
