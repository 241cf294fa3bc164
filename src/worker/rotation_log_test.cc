#include "worker/rotation_log.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace dynacomm::worker {
namespace {

RotationLog two_units() {
  RotationLog log;
  log.warmup = 2;
  log.workers = 3;
  log.latency_ms = 0.25;
  log.given.down_bps = log.given.up_bps = 1e8;
  log.profile.model = "two";
  log.profile.batch = 8;
  log.profile.units = {{"conv", 100, 400, 1.5, 2.5}, {"fc", 50, 200, 0.5, 1.0}};
  log.compute_spread = {{{1.0, 1.1}, {0.9, 1.2}}};
  log.compute = {{2, {1.5, 0.5}, {2.5, 1.0}, 1.25}};
  log.wall = {{2, {1.6, 0.6}, {2.6, 1.1}, 0}};
  log.transfers = {{2, true, 400, 0.03}, {3, false, 600, 0.05}};
  log.updates = {{2, 600, 0.01}};
  log.iterations = {{2, 1, 1.1, 1.2}, {3, 2, 0, 0}};
  return log;
}

TEST(RotationLog, RoundTripsThroughJson) {
  const RotationLog a = two_units();
  const RotationLog b = rotation_log_from_json(to_json(a), "rotation.json");
  EXPECT_EQ(to_json(b), to_json(a));
  ASSERT_EQ(b.compute.size(), 1u);
  EXPECT_EQ(b.compute[0].pace, 1.25);
  EXPECT_EQ(b.compute[0].backward, (std::vector<double>{2.5, 1.0}));
  ASSERT_EQ(b.transfers.size(), 2u);
  EXPECT_TRUE(b.transfers[0].up);
  EXPECT_FALSE(b.transfers[1].up);
  EXPECT_EQ(b.iterations[1].plan_id, 2);
  EXPECT_EQ(b.workers, 3);
}

TEST(RotationLog, RejectsAFileThatDoesNotFitItsProfile) {
  nlohmann::json j = to_json(two_units());
  j["wall"][0][2] = {1.0};  // one unit's times for two units
  try {
    rotation_log_from_json(j, "x/rotation.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x/rotation.json: iteration 2 has 1 unit times"),
              std::string::npos)
        << e.what();
  }
  j = to_json(two_units());
  j.erase("transfers");
  EXPECT_THROW(rotation_log_from_json(j, "x/rotation.json"), Error);
  j = to_json(two_units());
  j["transfers"][0][2] = "many";
  EXPECT_THROW(rotation_log_from_json(j, "x/rotation.json"), Error);
}

}  // namespace
}  // namespace dynacomm::worker
