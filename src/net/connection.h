// The ZeroMQ transport of a worker: one DEALER socket connected to the PS's ROUTER
// (net/zmq_router.h), over tcp:// or inproc:// (every socket of a process shares one
// ZeroMQ context, net/zmq_message.h, so inproc reaches a PS in the same process).
//
//   Connection c("tcp://127.0.0.1:7070", limits);
//   c.send({MessageType::kPullRequest, 1, t, 0, 3}, nullptr, 0);
//   Message m = c.receive(std::chrono::seconds(30), "units 0..3");  // Timeout naming the PS
//
// Its poll also wakes on an eventfd, so the owner's thread sleeps until a message comes,
// a deadline passes, or another thread calls wake(): no polling loop.
#pragma once

#include <memory>
#include <string>

#include "net/curve.h"
#include "net/transport.h"

namespace dynacomm::net {

class Connection : public Transport {
 public:
  // Connects (ZeroMQ connects lazily; the first receive's timeout covers a missing PS).
  // With `curve`: over CURVE, pinning the PS's public key (a PS with another key, or one
  // that does not admit this key, never answers).
  Connection(const std::string& endpoint, WireLimits limits, const CurveClient* curve = nullptr);
  // How long messages still queued may take to leave on close (default 5 s).
  void set_linger(std::chrono::milliseconds linger);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  using Transport::send;
  // ZeroMQ takes the frame over without copying it.
  void send(std::string&& frame) override;
  bool poll(Clock::time_point deadline, Message* out) override;
  void wake() override;
  void set_limits(WireLimits limits) override;

  const std::string& endpoint() const override { return endpoint_; }
  std::uint64_t bytes_sent() const override { return sent_; }
  std::uint64_t bytes_received() const override { return received_; }
  std::uint64_t dropped() const override { return dropped_; }
  const std::string& last_drop() const override { return last_drop_; }

 private:
  struct Zmq;
  std::unique_ptr<Zmq> zmq_;
  std::string endpoint_;
  WireLimits limits_;
  std::uint64_t sent_ = 0, received_ = 0, dropped_ = 0;
  std::string last_drop_;
};

}  // namespace dynacomm::net
