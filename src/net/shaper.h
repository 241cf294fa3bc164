// The user-space link emulator's core: a token bucket that paces one direction of a link
// to a bandwidth, plus a fixed one-way latency. Pure logic with the clock passed in, so it
// is tested without sleeps; the transport asks it when each message may be delivered.
//
//   LinkShaper down(20e6 /*bit/s*/, 10.0 /*ms latency*/, 64 * 1024 /*burst bytes*/);
//   auto at = down.deliver_at(now, 10'000'000);   // 10 MB: now + 4 s + 10 ms
//
// This is emulation: it delays delivery as a shaped link would, on top of whatever the
// real (loopback) transport does. Kernel-shaped links (tbf in network namespaces) are the
// real thing and come with the bench issue.
#pragma once

#include <chrono>
#include <cstdint>

namespace dynacomm::net {

class LinkShaper {
 public:
  using Clock = std::chrono::steady_clock;

  // bandwidth_bps > 0; latency_ms >= 0; burst_bytes: what may pass at line rate at once.
  // Throws InvalidInput otherwise.
  LinkShaper(double bandwidth_bps, double latency_ms, std::int64_t burst_bytes = 0);

  // A message of `bytes` handed to the link at `now` (in FIFO order with earlier ones)
  // has fully arrived at the returned time: it starts once the link has finished the
  // previous message, takes bytes / bandwidth (less any burst credit saved while the
  // link was idle), and then latency.
  Clock::time_point deliver_at(Clock::time_point now, std::int64_t bytes);

  void set_rate(double bandwidth_bps);  // takes effect for later messages
  void set_latency(double latency_ms);  // the same
  double bandwidth_bps() const { return bps_; }

 private:
  double bps_;
  Clock::duration latency_;
  double burst_bytes_;
  Clock::time_point link_free_{};  // when the link has sent everything handed to it
  bool started_ = false;
};

}  // namespace dynacomm::net
