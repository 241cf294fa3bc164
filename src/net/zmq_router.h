// The PS's side of the transport: one ZeroMQ ROUTER socket that every worker's DEALER
// (net/connection.h) connects to, over tcp:// or inproc://. One thread owns it.
//
//   ZmqRouter router("tcp://127.0.0.1:0");          // binds now; port 0: a free one
//   router.endpoint();                               // "tcp://127.0.0.1:41234"
//   Inbound in;
//   if (router.poll(Clock::now() + 100ms, &in) && in.ok()) decode(in.data(), in.size(), ...);
//   router.send(in.peer, std::move(frame));         // false: that peer has gone
//
// A received frame is handed over without copying its bytes (a push's gradients go from
// ZeroMQ's buffer into the store).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/curve.h"
#include "net/transport.h"

namespace zmq {
class message_t;
class socket_t;
}  // namespace zmq

namespace dynacomm::net {

// One message from a peer: its routing id and its frame.
struct Inbound {
  Inbound();
  ~Inbound();
  Inbound(Inbound&&) noexcept;
  Inbound& operator=(Inbound&&) noexcept;

  std::string peer;       // the peer's routing id (opaque)
  std::string user_id;    // under CURVE: "rank R", the rank its key was admitted for
  std::size_t parts = 0;  // ZeroMQ frames after the id; a valid message has exactly 1
  Clock::time_point received{};
  bool ok() const { return parts == 1; }
  const std::uint8_t* data() const;  // the frame (when ok())
  std::size_t size() const;

 private:
  friend class ZmqRouter;
  std::unique_ptr<zmq::message_t> frame_;
};

class ZapHandler;

struct RouterOptions {
  // CURVE: the PS's key pair and allow-list (net/zap.h admits the keys); null: plaintext.
  const CurveServer* curve = nullptr;
  // A connection that sends a message larger than this is dropped by ZeroMQ before any of
  // it is kept (-1: no limit).
  std::int64_t max_message_bytes = -1;
  // Refused connections (handshakes that failed: a plaintext client or a wrong server key
  // under CURVE; unknown keys), one line each; called from poll() or the ZAP thread.
  std::function<void(const std::string&)> on_refused;
};

class ZmqRouter {
 public:
  // Binds `listen` (port 0 of tcp://: a free port); Error naming the address otherwise.
  explicit ZmqRouter(const std::string& listen, const RouterOptions& options = {});
  ~ZmqRouter();
  ZmqRouter(const ZmqRouter&) = delete;
  ZmqRouter& operator=(const ZmqRouter&) = delete;

  const std::string& endpoint() const { return endpoint_; }
  // The next message, waiting until `deadline` at most; false when none came.
  bool poll(Clock::time_point deadline, Inbound* out);
  // Hands a frame to the peer; ZeroMQ takes it over without copying. False when the peer
  // has disconnected (a worker that finished or died): nothing was sent.
  bool send(const std::string& peer, std::string&& frame);
  // The peers whose TCP connection has closed since the last call (a worker that exited or
  // was killed: its kernel closed the socket), each once. A peer that never sent a
  // message is not named. Not for inproc://, whose peers never disconnect.
  std::vector<std::string> take_disconnected();
  // No more refusals or disconnections are watched for (the job is over). The watch must
  // be read while it is on: a router whose owner stops polling stops it first.
  void stop_monitor();

 private:
  bool read_monitor();  // one event; false when none was waiting
  // The connection (its socket descriptor) each peer's last message came over, so that a
  // disconnection, which the monitor reports by descriptor, names the peer.
  std::map<int, std::string> peer_of_fd_;
  std::vector<std::string> closing_;       // closed, maybe with messages still to read
  std::vector<std::string> disconnected_;  // closed, all read
  RouterOptions options_;
  std::unique_ptr<ZapHandler> zap_;
  std::unique_ptr<zmq::socket_t> socket_, monitor_;
  std::string endpoint_;
};

}  // namespace dynacomm::net
