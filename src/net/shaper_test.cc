#include "net/shaper.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace dynacomm::net {
namespace {

using Clock = LinkShaper::Clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

TEST(LinkShaper, TenMegabytesAtTwentyMegabitTakeFourSeconds) {
  LinkShaper link(20e6, 0);
  const Clock::time_point t0{};
  EXPECT_NEAR(ms_between(t0, link.deliver_at(t0, 10'000'000)), 4000, 1e-6);
}

TEST(LinkShaper, FifoPacingAndLatency) {
  LinkShaper link(8e6, 10);  // 1 byte per microsecond, 10 ms away
  const Clock::time_point t0{};
  EXPECT_NEAR(ms_between(t0, link.deliver_at(t0, 1000)), 1 + 10, 1e-6);
  // Handed over at once: queued behind the first.
  EXPECT_NEAR(ms_between(t0, link.deliver_at(t0, 2000)), 3 + 10, 1e-6);
  // After an idle gap the link starts at once.
  const auto later = t0 + std::chrono::milliseconds(100);
  EXPECT_NEAR(ms_between(t0, link.deliver_at(later, 1000)), 101 + 10, 1e-6);
  link.set_rate(4e6);
  EXPECT_NEAR(ms_between(t0, link.deliver_at(later, 1000)), 103 + 10, 1e-6);
  link.set_latency(50);
  EXPECT_NEAR(ms_between(t0, link.deliver_at(later, 1000)), 105 + 50, 1e-6);
}

TEST(LinkShaper, BurstCreditIsBounded) {
  LinkShaper link(8e6, 0, 500);
  const Clock::time_point t0{};
  EXPECT_NEAR(ms_between(t0, link.deliver_at(t0, 1500)), 1, 1e-6);  // 500 free, 1000 paced
  EXPECT_NEAR(ms_between(t0, link.deliver_at(t0, 1000)), 2, 1e-6);  // no idle time, no credit
}

TEST(LinkShaper, RejectsBadSettings) {
  EXPECT_THROW(LinkShaper(0, 0), InvalidInput);
  EXPECT_THROW(LinkShaper(1e6, -1), InvalidInput);
  LinkShaper l(1e6, 0);
  EXPECT_THROW(l.set_rate(-5), InvalidInput);
  EXPECT_THROW(l.set_latency(-1), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::net
