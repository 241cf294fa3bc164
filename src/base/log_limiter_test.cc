#include "base/log_limiter.h"

#include <gtest/gtest.h>

namespace dynacomm {
namespace {

using std::chrono::seconds;

TEST(LogLimiter, AFloodCostsAFewLinesAWindowAndTheNextSaysHowManyWereLeftOut) {
  LogLimiter limit(3, seconds(10));
  const LogLimiter::Clock::time_point t0{};
  int written = 0;
  for (int i = 0; i < 10000; ++i)
    if (limit.admit(t0 + std::chrono::milliseconds(i), "junk")) ++written;
  EXPECT_EQ(written, 3);
  EXPECT_EQ(limit.left_out(), 9997);
  const auto next = limit.admit(t0 + seconds(11), "junk");
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, "(9997 more like it not shown) junk");
  const auto after = limit.admit(t0 + seconds(12), "more");
  ASSERT_TRUE(after);
  EXPECT_EQ(*after, "more") << "the note comes once";
}

}  // namespace
}  // namespace dynacomm
