// Runs actions at given times on a thread of its own: the replay of a link or device
// trace while training runs. Times are seconds after `origin` (steady clock, which is
// CLOCK_MONOTONIC and so shared by the processes of one machine); actions run in time
// order (steps at the same time in the order given), a late one at once. Destroying it stops the replay without running what is left. An
// action that throws stops the replay; failed() / rethrow() report it to the owner.
//
//   TimedReplay replay(start, {{0.0, [&] { set(100e6); }}, {30.0, [&] { set(10e6); }}});
//   ...                       // training runs; the rates change under it
//   replay.rethrow();         // an error of an action, on the caller's thread
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace dynacomm {

class TimedReplay {
 public:
  using Clock = std::chrono::steady_clock;
  struct Step {
    double at_s;
    std::function<void()> action;
  };

  TimedReplay(Clock::time_point origin, std::vector<Step> steps)
      : origin_(origin), steps_(std::move(steps)) {
    std::stable_sort(steps_.begin(), steps_.end(),
                     [](const Step& a, const Step& b) { return a.at_s < b.at_s; });
    if (!steps_.empty()) thread_ = std::thread([this] { run(); });
  }
  ~TimedReplay() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  TimedReplay(const TimedReplay&) = delete;
  TimedReplay& operator=(const TimedReplay&) = delete;

  std::size_t steps_done() const {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  void rethrow() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run() {
    for (const Step& s : steps_) {
      const auto at = origin_ + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(s.at_s));
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (cv_.wait_until(lock, at, [&] { return stop_; })) return;
      }
      try {
        s.action();
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        error_ = std::current_exception();
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      ++done_;
    }
  }

  Clock::time_point origin_;
  std::vector<Step> steps_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::size_t done_ = 0;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace dynacomm
