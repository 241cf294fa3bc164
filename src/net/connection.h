// A worker's connection to the parameter server: one ZeroMQ DEALER socket. Not
// thread-safe: one thread (the worker's communication thread) owns it.
//
//   Connection c("tcp://127.0.0.1:7070", limits, /*rank=*/1);
//   c.send({MessageType::kPullRequest, 1, t, 0, 3}, nullptr, 0);
//   Message m = c.receive(std::chrono::seconds(30));   // Timeout naming the endpoint
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "net/wire.h"

namespace dynacomm::net {

// A received, validated message that owns its bytes.
struct Message {
  Header header;
  std::string bytes;  // the whole frame; payload() points into it
  const std::uint8_t* payload() const {
    return reinterpret_cast<const std::uint8_t*>(bytes.data()) + kHeaderBytes;
  }
};

class Connection {
 public:
  // Connects (ZeroMQ connects lazily; the first receive's timeout covers a missing PS).
  Connection(const std::string& endpoint, WireLimits limits);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void send(const Header& header, const void* payload, std::size_t size);
  // A frame made by encode() or make_frame/seal_frame; ZeroMQ takes it over without
  // copying it.
  void send_frame(std::string&& encoded);
  // The next valid message. Invalid ones are dropped (counted; reason in last_drop()).
  // A kError message from the PS is thrown as Error with its text. Throws Timeout.
  Message receive(std::chrono::milliseconds timeout, const std::string& waiting_for);
  // Like receive, but returns false instead of throwing when nothing came in time.
  bool poll(std::chrono::milliseconds timeout, Message* out);
  void set_limits(WireLimits limits);

  const std::string& endpoint() const { return endpoint_; }
  std::uint64_t bytes_sent() const { return sent_; }
  std::uint64_t bytes_received() const { return received_; }
  std::uint64_t dropped() const { return dropped_; }
  const std::string& last_drop() const { return last_drop_; }

 private:
  struct Zmq;
  std::unique_ptr<Zmq> zmq_;
  std::string endpoint_;
  WireLimits limits_;
  std::uint64_t sent_ = 0, received_ = 0, dropped_ = 0;
  std::string last_drop_;
};

}  // namespace dynacomm::net
