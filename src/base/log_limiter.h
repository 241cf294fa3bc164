// Bounds how many lines a stream of like events (dropped messages, refused peers) may
// write: at most `lines` per `window`; the rest are counted, and the first line of the
// next window says how many were left out. A flood of junk then costs a few lines a
// window, not a write per message (a PS whose stderr nobody reads would block on it).
//
//   LogLimiter limit(20, std::chrono::seconds(10));
//   if (auto line = limit.admit(now, "dropped a malformed message from ...")) log(*line);
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace dynacomm {

class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  LogLimiter(int lines, Clock::duration window) : lines_(lines), window_(window) {}

  // The line to write for this event (with a note of the ones left out before it), or
  // nothing when this window's lines are spent.
  std::optional<std::string> admit(Clock::time_point now, const std::string& line) {
    std::string note;
    if (!started_ || now - window_start_ >= window_) {
      if (left_out_ > 0) note = "(" + std::to_string(left_out_) + " more like it not shown) ";
      started_ = true;
      window_start_ = now;
      written_ = 0;
      left_out_ = 0;
    }
    if (written_ >= lines_) {
      ++left_out_;
      return std::nullopt;
    }
    ++written_;
    return note + line;
  }
  std::int64_t left_out() const { return left_out_; }

 private:
  int lines_;
  Clock::duration window_;
  bool started_ = false;
  Clock::time_point window_start_{};
  int written_ = 0;
  std::int64_t left_out_ = 0;
};

}  // namespace dynacomm
