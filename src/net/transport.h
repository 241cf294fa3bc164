// The transport seam: one framed, message-oriented connection to a peer. A frame is what
// net/wire.h encodes (header + payload); a transport hands frames over and hands back
// validated messages, and knows nothing of what they mean.
//
//   std::unique_ptr<Transport> t = std::make_unique<Connection>("inproc://ps", limits);
//   t->send(encode(Header{MessageType::kPullRequest, 1, 7, 0, 3}, nullptr, 0));
//   Message m;
//   if (t->poll(Clock::now() + 100ms, &m)) ...      // false: deadline, or woken
//   t->wake();                                       // any thread: poll returns now
//
// Implementations: Connection (ZeroMQ DEALER over tcp:// or inproc://, net/connection.h),
// ShapedTransport (the user-space link emulation as a decorator over any transport,
// net/shaped_transport.h), and fakes in tests. One thread owns a transport; only wake()
// may be called from others.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "net/wire.h"

namespace dynacomm::net {

using Clock = std::chrono::steady_clock;

// A received, validated message that owns its bytes.
struct Message {
  Header header;
  std::string bytes;              // the whole frame; payload() points into it
  Clock::time_point received{};   // when it was taken off the real socket
  Clock::time_point delivered{};  // when the link delivered it: `received`, or later when
                                  // an emulated link (ShapedTransport) held it back
  const std::uint8_t* payload() const {
    return reinterpret_cast<const std::uint8_t*>(bytes.data()) + kHeaderBytes;
  }
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Hands a frame made by encode() or make_frame/seal_frame over.
  virtual void send(std::string&& frame) = 0;
  // The next valid message, waiting until `deadline` at most; false at the deadline or
  // once wake() was called. Invalid frames are dropped (counted; reason in last_drop()). A
  // kError message from the peer is thrown as Error with its text.
  virtual bool poll(Clock::time_point deadline, Message* out) = 0;
  // Any thread: the poll in progress (or the next) returns false at once.
  virtual void wake() = 0;
  // What a well-formed message may contain (the job's units, known after the hello).
  virtual void set_limits(WireLimits limits) = 0;

  virtual const std::string& endpoint() const = 0;  // the peer's address, for messages
  virtual std::uint64_t bytes_sent() const = 0;
  virtual std::uint64_t bytes_received() const = 0;
  virtual std::uint64_t dropped() const = 0;
  virtual const std::string& last_drop() const = 0;

  // Helpers over the above.
  void send(const Header& header, const void* payload, std::size_t size) {
    send(encode(header, payload, size));
  }
  // The next message (waking does not end the wait); Timeout naming the endpoint and what
  // was awaited.
  Message receive(std::chrono::milliseconds timeout, const std::string& waiting_for);
};

}  // namespace dynacomm::net
