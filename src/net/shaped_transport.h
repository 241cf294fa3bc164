// The user-space link emulation as a decorator over any transport: frames to the peer
// cross an emulated uplink, frames from it an emulated downlink, each a LinkShaper (a
// token bucket at the link's rate, then its one-way latency). Time comes from an injected
// TimeSource, so tests check the emulation against a fake clock without sleeping.
//
//   ShapedTransport link(connection, LinkEmulation{20e6, 5e6, 10, 0});
//   auto leaves = link.send_timed(push_frame);   // when the PS has it: now + bytes/5 Mbit/s + 10
//   ms link.poll(deadline, &m);                     // a pull reply once the downlink delivered it
//
// What crosses which way, as a real edge link would carry it:
// - a push: paced by the uplink (its payload plus the per-message overhead's worth of
//   bytes), FIFO with the pushes before it;
// - a pull request (no payload): the latency only;
// - a pull reply: paced by the downlink like a push; a push ack: through the downlink
//   behind the replies before it, plus the latency (the push credit comes back as on a
//   real link);
// - everything else (hello, plans, re-planning, errors, goodbye): control, neither paced
//   nor delayed.
// A rate of 0 leaves that direction unpaced (a kernel-shaped link paces it); the latency
// still applies. With a shared cloud link (set_cloud: the PS's, net/shared_shaper.h) a push
// also queues in its into-PS bucket and a pull reply in its out-of-PS one, with every
// other worker's: the frame arrives when both links have carried it.
#pragma once

#include <deque>
#include <map>

#include "base/time_source.h"
#include "net/shaper.h"
#include "net/shared_shaper.h"
#include "net/transport.h"

namespace dynacomm::net {

struct LinkEmulation {
  double down_bps = 0, up_bps = 0;  // 0: unpaced
  double latency_ms = 0;            // one way
  double extra_overhead_ms = 0;     // per paced message, at the link's rate
};

class ShapedTransport : public Transport {
 public:
  ShapedTransport(Transport& inner, const LinkEmulation& link,
                  const base::TimeSource& time = base::steady_time());

  using Transport::send;
  void send(std::string&& frame) override { send_timed(std::move(frame)); }
  // The same; returns when the frame reaches the peer's side of the emulated link (is
  // handed to the inner transport).
  Clock::time_point send_timed(std::string&& frame);
  bool poll(Clock::time_point deadline, Message* out) override;
  void wake() override { inner_.wake(); }
  void set_limits(WireLimits limits) override { inner_.set_limits(std::move(limits)); }

  // A live change (a trace's step): later frames see it; frames already handed over keep
  // their times.
  void set_link(const LinkEmulation& link);
  const LinkEmulation& link() const { return link_; }
  // The PS's cloud link shared with the other workers (not owned; nullptr: none).
  void set_cloud(SharedCloudLink* cloud) { cloud_ = cloud; }
  // Nothing is held back for the peer.
  bool idle() const { return outgoing_.empty(); }

  const std::string& endpoint() const override { return inner_.endpoint(); }
  std::uint64_t bytes_sent() const override { return inner_.bytes_sent(); }
  std::uint64_t bytes_received() const override { return inner_.bytes_received(); }
  std::uint64_t dropped() const override { return inner_.dropped(); }
  const std::string& last_drop() const override { return inner_.last_drop(); }

 private:
  void send_due(Clock::time_point now);
  std::int64_t overhead_bytes(const LinkShaper& s) const;

  Transport& inner_;
  const base::TimeSource& time_;
  LinkEmulation link_;
  LinkShaper up_, down_;
  SharedCloudLink* cloud_ = nullptr;
  std::multimap<Clock::time_point, std::string> outgoing_;  // release time -> frame
  std::deque<Message> incoming_;                            // by delivery time
};

}  // namespace dynacomm::net
