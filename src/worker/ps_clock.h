// The PS's clock as seen from a worker: the offset (PS minus worker, ms) taken at the hello
// (NTP's estimate, off by at most half the hello's round trip), then kept inside what
// causality allows for every stamped answer. The PS stamps when a message arrived; that was
// after the message left this worker and before the answer, sent `held` later, came back:
//
//   left <= stamp - offset <= answered - held,  so  offset in [stamp - (answered - held),
//                                                               stamp - left]
//
// An offset outside that interval is moved to its nearer end. The true offset lies in every
// such interval, so a move never takes the estimate further from it; across machines whose
// clocks drift apart (~10 ppm, 36 ms an hour) the hello's figure would go stale, this one
// follows the drift to within the tightest recent interval (about a round trip). An empty
// interval (a stamp that causality cannot explain: a clock stepped, a bad PS) moves nothing.
//
//   PsClock ps(joined.ps_clock_offset_ms);
//   if (auto at = ps.arrival(stamp_us, left, answered, held_ms)) ...  // in [left, answered]
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

#include "worker/ms_time.h"

namespace dynacomm::worker {

class PsClock {
 public:
  using Clock = std::chrono::steady_clock;

  explicit PsClock(std::optional<double> offset_ms) : offset_ms_(offset_ms) {}

  // When (on this worker's clock) the PS says a message arrived, refining the offset first;
  // none without a stamp or an offset. Always within [left, answered].
  std::optional<Clock::time_point> arrival(std::uint64_t stamp_us, Clock::time_point left,
                                           Clock::time_point answered, double held_ms = 0) {
    if (stamp_us == 0 || !offset_ms_) return std::nullopt;
    const double stamp = static_cast<double>(stamp_us) / 1000.0;
    const double lo = stamp - (ms_since_epoch(answered) - std::max(0.0, held_ms));
    const double hi = stamp - ms_since_epoch(left);
    if (lo <= hi) {
      if (*offset_ms_ < lo) *offset_ms_ = lo, ++corrections_;
      if (*offset_ms_ > hi) *offset_ms_ = hi, ++corrections_;
    }
    return std::max(left, std::min(time_at_ms(stamp - *offset_ms_), answered));
  }

  std::optional<double> offset_ms() const { return offset_ms_; }
  int corrections() const { return corrections_; }  // how many answers moved the offset

 private:
  std::optional<double> offset_ms_;
  int corrections_ = 0;
};

}  // namespace dynacomm::worker
