// Steady-clock time points as milliseconds since the clock's epoch, and back: how the
// worker's link timing reads the PS's stamps (ps_clock.h) and how its tests write times.
#pragma once

#include <chrono>

namespace dynacomm::worker {

inline std::chrono::steady_clock::time_point time_at_ms(double ms) {
  using Clock = std::chrono::steady_clock;
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms)));
}

inline double ms_since_epoch(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count();
}

}  // namespace dynacomm::worker
