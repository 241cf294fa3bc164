// Where time comes from, injected (leveldb's Env::NowMicros is the pattern): the product
// reads the steady clock, tests drive a fake one and check timing logic without sleeping.
//
//   const base::TimeSource& time = base::steady_time();
//   auto t = time.now();
//   base::FakeTime fake;  fake.advance(std::chrono::seconds(4));   // in a test
#pragma once

#include <atomic>
#include <chrono>

namespace dynacomm::base {

class TimeSource {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~TimeSource() = default;
  virtual Clock::time_point now() const = 0;
};

class SteadyTime : public TimeSource {
 public:
  Clock::time_point now() const override { return Clock::now(); }
};

inline const TimeSource& steady_time() {
  static const SteadyTime time;
  return time;
}

// A clock that moves only when told (any thread).
class FakeTime : public TimeSource {
 public:
  Clock::time_point now() const override { return Clock::time_point(Clock::duration(ticks_)); }
  void advance(Clock::duration d) { ticks_ += d.count(); }
  void set(Clock::time_point t) { ticks_ = t.time_since_epoch().count(); }

 private:
  std::atomic<Clock::rep> ticks_{Clock::duration(std::chrono::hours(1)).count()};
};

}  // namespace dynacomm::base
