#include "worker/unit_times.h"

#include <gtest/gtest.h>

namespace dynacomm::worker {
namespace {

GateMarks::Time at(double ms) {
  return GateMarks::Time(std::chrono::duration_cast<GateMarks::Time::duration>(
      std::chrono::duration<double, std::milli>(ms)));
}

// Three units; unit 1's forward waits 5 ms at its gate; unit 0's gradients come before
// unit 1's (a hook out of order), so its backward starts when unit 1's is done.
TEST(UnitTimes, LeaveOutGateWaitsAndFollowTheTopDownOrder) {
  GateMarks m;
  m.called = {at(0), at(10), at(30)};
  m.passed = {at(0), at(15), at(30)};  // waited 10 -> 15
  m.forward_end = at(40);
  m.ready = {at(55), at(60), at(50)};
  m.cpu_called = {0, 9, 24};
  m.cpu_passed = {0, 9, 24};
  m.cpu_forward_end = 33;
  m.cpu_ready = {45, 49, 41};
  const UnitTimes t = unit_times(m);
  EXPECT_EQ(t.forward_ms, (std::vector<double>{10, 15, 10}));
  // Top unit 2: 40 -> 50; unit 1: 50 -> 60; unit 0: ready at 55, before unit 1: 60 -> 60.
  EXPECT_EQ(t.backward_ms, (std::vector<double>{0, 10, 10}));
  EXPECT_EQ(t.forward_cpu, (std::vector<double>{9, 15, 9}));
  EXPECT_EQ(t.backward_cpu, (std::vector<double>{0, 8, 8}));
  EXPECT_DOUBLE_EQ(t.compute_ms, 55);
  EXPECT_DOUBLE_EQ(t.compute_cpu_ms, 49);
  EXPECT_EQ(t.forward_span[1].first, at(15));
  EXPECT_EQ(t.backward_span[0].first, at(60));
}

}  // namespace
}  // namespace dynacomm::worker
