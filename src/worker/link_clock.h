// How long one direction of the link was busy with each transfer: no waiting, queueing or
// latency, from when the transfer could start and when it arrived (one latency after it
// left the link). It could start at `ready`, or once the previous transfer in the same
// direction had left the link, whichever is later, whatever iteration that one was of:
// under ASP and backup workers one iteration's pushes are still on the uplink while the
// next one's start, and a push timed from its own readiness would count the wait behind
// them as its transfer (a 5 Mbit/s uplink read as ~35 kbit/s).
//
//   LinkClock up;
//   double a = up.busy_ms(ready, arrived, latency_ms);  // remembers `arrived`
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>

namespace dynacomm::worker {

class LinkClock {
 public:
  using Clock = std::chrono::steady_clock;

  double busy_ms(Clock::time_point ready, Clock::time_point arrived, double latency_ms) {
    const auto latency = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double, std::milli>(latency_ms));
    Clock::time_point start = ready;
    if (previous_) start = std::max(start, *previous_ - latency);
    previous_ = std::max(previous_.value_or(arrived), arrived);
    return std::max(0.0,
                    std::chrono::duration<double, std::milli>(arrived - latency - start).count());
  }

 private:
  std::optional<Clock::time_point> previous_;
};

}  // namespace dynacomm::worker
