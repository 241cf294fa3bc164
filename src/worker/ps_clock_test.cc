#include "worker/ps_clock.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "worker/ms_time.h"

namespace dynacomm::worker {
namespace {

constexpr auto at = time_at_ms;
constexpr auto ms_of = ms_since_epoch;
std::uint64_t stamp(double ps_ms) { return static_cast<std::uint64_t>(std::llround(ps_ms * 1000)); }

TEST(PsClock, NoStampOrNoOffsetTellsNothing) {
  EXPECT_FALSE(PsClock(std::nullopt).arrival(stamp(5000), at(0), at(10)));
  EXPECT_FALSE(PsClock(100.0).arrival(0, at(0), at(10)));
}

TEST(PsClock, AnOffsetThatCausalityAllowsStays) {
  PsClock c(1000.0);  // the PS's clock 1 s ahead
  const auto a = c.arrival(stamp(1004), at(0), at(10));
  ASSERT_TRUE(a);
  EXPECT_NEAR(ms_of(*a), 4, 1e-3);
  EXPECT_DOUBLE_EQ(*c.offset_ms(), 1000);
  EXPECT_EQ(c.corrections(), 0);
}

// The hello said 1000 ms; the clocks have since drifted 30 ms apart. A stamp of 1035 on a
// message that left at 0 and was answered at 10 cannot be 35 ms after it left: the offset is
// at least 1025, and the next transfer is timed with it.
TEST(PsClock, AStampOutsideTheRoundTripMovesTheOffsetToItsNearerEnd) {
  PsClock c(1000.0);
  EXPECT_NEAR(ms_of(*c.arrival(stamp(1035), at(0), at(10))), 10, 1e-3);
  EXPECT_NEAR(*c.offset_ms(), 1025, 1e-3);
  EXPECT_NEAR(ms_of(*c.arrival(stamp(1130), at(100), at(200))), 105, 1e-3);
  EXPECT_EQ(c.corrections(), 1);
  // Too early: left at 300, stamped 1320 (295 with the offset): the offset is at most 1020.
  EXPECT_NEAR(ms_of(*c.arrival(stamp(1320), at(300), at(400))), 300, 1e-3);
  EXPECT_NEAR(*c.offset_ms(), 1020, 1e-3);
}

// A pull reply waited `held` at the PS after the request arrived: the request arrived at
// least `held` before the reply came back.
TEST(PsClock, TheTimeThePsHeldTheAnswerTightensTheBound) {
  PsClock c(1000.0);
  c.arrival(stamp(1008), at(0), at(10), 5);  // arrived by 5 on this clock: offset >= 1003
  EXPECT_NEAR(*c.offset_ms(), 1003, 1e-3);
}

TEST(PsClock, AStampCausalityCannotExplainMovesNothing) {
  PsClock c(1000.0);
  // Answered 10 ms after it left, yet held 50 ms: an empty interval (a stepped clock).
  const auto a = c.arrival(stamp(1004), at(0), at(10), 50);
  EXPECT_DOUBLE_EQ(*c.offset_ms(), 1000);
  EXPECT_GE(ms_of(*a), 0);
  EXPECT_LE(ms_of(*a), 10);
}

// Every interval holds the true offset, so a move never takes the estimate further from it;
// over an hour of 10 ppm drift (36 ms) the estimate stays within the round trip of the
// truth, where the hello's figure ends 36 ms off. Random round trips and stamps inside them.
TEST(PsClock, FollowsDriftAndNeverMovesAwayFromTheTruth) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const double start_offset = 5e6, drift = 1e-5;
  for (int run = 0; run < 20; ++run) {
    PsClock c(start_offset + (u(rng) - 0.5) * 4);  // the hello: within 2 ms
    double worst = 0;
    for (double t = 0; t < 3.6e6; t += 1000 + 2000 * u(rng)) {
      const double truth = start_offset + drift * t;
      const double rtt = 2 + 40 * u(rng), held = rtt * u(rng) * 0.5;
      const double left = t, answered = t + rtt, arrived = left + (rtt - held) * u(rng);
      const double before = std::abs(*c.offset_ms() - truth);
      c.arrival(stamp(arrived + truth), at(left), at(answered), held);
      const double after = std::abs(*c.offset_ms() - truth);
      ASSERT_LE(after, before + 1e-3) << "run " << run << " at " << t << " ms";
      if (t > 6e5) worst = std::max(worst, after);
    }
    EXPECT_LT(worst, 20) << "run " << run;  // the hello's figure: 36 ms off by the end
  }
}

}  // namespace
}  // namespace dynacomm::worker
