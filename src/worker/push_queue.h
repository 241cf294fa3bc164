// A worker's pushes waiting for the uplink, and the rule that lets each go: plan order,
// or priority with a credit (P3, Jayarajan et al. SysML'19; ByteScheduler, Peng et al.
// SOSP'19). Pure: no sockets, no clock; the communication thread asks it what may leave
// and tells it what the PS acknowledged.
//
//   PushQueue q;
//   q.add({t, segment, first_atom, bytes, credit_bytes, std::move(frame)});
//   while (auto p = q.next()) uplink.send(std::move(p->frame));   // bytes now unacknowledged
//   q.acked(bytes);                                                // an ack came back
//
// Plan order (credit 0): the pushes leave as queued. Priority: the oldest iteration's
// lowest segment leaves first, once the bytes sent and not yet acknowledged plus its own
// stay within the credit, or at once when nothing is unacknowledged (a push larger than
// the credit still goes, alone).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

namespace dynacomm::worker {

class PushQueue {
 public:
  struct Push {
    std::int64_t iteration;
    int segment;               // of the plan's pushes
    std::uint32_t first_atom;  // its first atom: the priority (lower first)
    std::int64_t bytes;
    std::int64_t credit_bytes;  // 0: plan order
    std::string frame;          // the message to send
  };

  void add(Push p) { queued_.push_back(std::move(p)); }
  // The push that may leave now, taken out of the queue; its bytes count as
  // unacknowledged. nullopt: none (empty, or the credit is used up).
  std::optional<Push> next();
  // The PS acknowledged a push of `bytes`.
  void acked(std::int64_t bytes) { unacked_ -= bytes; }

  std::int64_t unacked_bytes() const { return unacked_; }
  // Whether a push of an iteration before `iteration` is still queued.
  bool has_before(std::int64_t iteration) const {
    for (const Push& p : queued_)
      if (p.iteration < iteration) return true;
    return false;
  }
  std::size_t size() const { return queued_.size(); }
  bool empty() const { return queued_.empty(); }

 private:
  std::deque<Push> queued_;
  std::int64_t unacked_ = 0;
};

}  // namespace dynacomm::worker
