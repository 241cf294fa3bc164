#include "cluster/status.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace dynacomm::cluster {
namespace {

nlohmann::json status(int rank, std::int64_t it, double loss, double rate) {
  return {{"rank", rank},
          {"phase", "training"},
          {"iteration", it},
          {"iterations", 469},
          {"epoch", 1},
          {"epochs", 2},
          {"loss", loss},
          {"images_per_s", rate},
          {"bytes_up", 1.5e6},
          {"bytes_down", 2.5e6},
          {"pull_segments", 3},
          {"push_segments", 2},
          {"strategy", "dynacomm-fd"},
          {"test_accuracy", nullptr}};
}

TEST(ClusterStatus, CombinesAllWorkers) {
  std::vector<nlohmann::json> s = {status(0, 120, 0.6123, 200), status(1, 118, 0.5981, 210)};
  EXPECT_EQ(render_status(s),
            "it 118/469  epoch 1/2  loss w0 0.612 w1 0.598  410 img/s  up/down 1.5/2.5 MB per "
            "worker (3.0/5.0 total)  dynacomm-fd: 3 pull + 2 push segments");
  // With the time since the job began: what is left at the pace so far.
  EXPECT_EQ(render_status(s, 59),
            "it 118/469  epoch 1/2  0:59, ~2:56 left  loss w0 0.612 w1 0.598  410 img/s  up/down "
            "1.5/2.5 MB per worker (3.0/5.0 total)  dynacomm-fd: 3 pull + 2 push segments");
  EXPECT_EQ(render_status(s, 4000).substr(0, 40), "it 118/469  epoch 1/2  1:06:40, ~3:18:18");
  s[0]["test_accuracy"] = 0.8512;
  s[0]["phase"] = "warm-up";
  EXPECT_EQ(render_status(s),
            "it 118/469  epoch 1/2  loss w0 0.612 w1 0.598  410 img/s  up/down 1.5/2.5 MB per "
            "worker (3.0/5.0 total)  warm-up: 3 pull + 2 push segments  test acc 85.12%");
}

TEST(ClusterStatus, ABenchCountsItsTurnsNotEpochs) {
  // warm-up 3, 2 strategies x 2 turns of 3 iterations, + 1: 16 iterations.
  auto at = [](std::int64_t it) {
    nlohmann::json s = status(0, it, 0.5, 100);
    s["iterations"] = 16;
    return std::vector<nlohmann::json>{s};
  };
  const StatusStyle bench{"bench 100mbit (2/5)", 3, 3};
  EXPECT_EQ(render_status(at(2), -1, bench).substr(0, 37), "bench 100mbit (2/5)  it 2/16  warm-up");
  EXPECT_EQ(render_status(at(4), -1, bench).substr(0, 38),
            "bench 100mbit (2/5)  it 4/16  turn 1/4");
  EXPECT_EQ(render_status(at(9), -1, bench).substr(0, 38),
            "bench 100mbit (2/5)  it 9/16  turn 2/4");
  EXPECT_EQ(render_status(at(16), -1, bench).substr(0, 39),
            "bench 100mbit (2/5)  it 16/16  turn 4/4");
  EXPECT_EQ(render_status({nullptr}, -1, bench),
            "bench 100mbit (2/5)  waiting for the workers to start");
}

TEST(ClusterStatus, MissingOrGarbledStatusesAreNotFatal) {
  EXPECT_EQ(render_status({nullptr, nullptr}), "waiting for the workers to start");
  std::vector<nlohmann::json> s = {nullptr, status(1, 5, 1.0, 10)};
  s[1]["loss"] = "not a number";
  EXPECT_EQ(render_status(s),
            "it 5/469  epoch 1/2  loss w1 0.000  10 img/s  up/down 1.5/2.5 MB per worker "
            "(1.5/2.5 total)  (1 worker(s) not reporting yet)");

  char dir[] = "/tmp/dynacomm-status-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::ofstream(std::string(dir) + "/status-worker0.json") << status(0, 7, 0.5, 1).dump();
  std::ofstream(std::string(dir) + "/status-worker1.json") << "{\"trunc";
  std::vector<nlohmann::json> read = read_statuses(dir, 3);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0]["iteration"], 7);
  EXPECT_TRUE(read[1].is_null());
  EXPECT_TRUE(read[2].is_null());
  std::remove((std::string(dir) + "/status-worker0.json").c_str());
  std::remove((std::string(dir) + "/status-worker1.json").c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace dynacomm::cluster
