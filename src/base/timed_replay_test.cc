#include "base/timed_replay.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

namespace dynacomm {
namespace {

using namespace std::chrono_literals;

template <typename F>
bool eventually(F f) {  // polls for up to 5 s
  for (int i = 0; i < 500 && !f(); ++i) std::this_thread::sleep_for(10ms);
  return f();
}

TEST(TimedReplay, RunsStepsInTimeOrderAndLateOnesAtOnce) {
  std::vector<int> seen;
  std::mutex mu;
  auto add = [&](int k) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(k);
  };
  // The origin is in the past: two steps are late and run at once, in time order, whatever
  // order they were given in.
  TimedReplay r(TimedReplay::Clock::now() - 10s,
                {{10.02, [&] { add(3); }}, {0.0, [&] { add(1); }}, {5.0, [&] { add(2); }}});
  ASSERT_TRUE(eventually([&] { return r.steps_done() == 3; }));
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
  EXPECT_NO_THROW(r.rethrow());
}

TEST(TimedReplay, StopsWithoutRunningTheRestWhenDestroyed) {
  std::atomic<int> runs{0};
  const auto t0 = TimedReplay::Clock::now();
  {
    TimedReplay r(t0, {{0.0, [&] { ++runs; }}, {3600.0, [&] { ++runs; }}});
    ASSERT_TRUE(eventually([&] { return r.steps_done() == 1; }));
  }
  EXPECT_EQ(runs.load(), 1);
  EXPECT_LT(TimedReplay::Clock::now() - t0, 60s) << "the destructor must not wait for the hour";
}

TEST(TimedReplay, AnActionsErrorIsReportedAndStopsTheReplay) {
  std::atomic<int> runs{0};
  TimedReplay r(TimedReplay::Clock::now(),
                {{0.0, [] { throw std::runtime_error("tc failed"); }}, {0.0, [&] { ++runs; }}});
  ASSERT_TRUE(eventually([&] {
    try {
      r.rethrow();
      return false;
    } catch (const std::runtime_error&) {
      return true;
    }
  }));
  EXPECT_THROW(r.rethrow(), std::runtime_error);
  EXPECT_EQ(runs.load(), 0);
}

}  // namespace
}  // namespace dynacomm
