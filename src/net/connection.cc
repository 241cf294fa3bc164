#include "net/connection.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <zmq.hpp>

#include "base/error.h"
#include "net/zmq_message.h"

namespace dynacomm::net {

struct Connection::Zmq {
  zmq::socket_t socket{zmq_context(), zmq::socket_type::dealer};
  int wake_fd = -1;
};

Connection::Connection(const std::string& endpoint, WireLimits limits, const CurveClient* curve)
    : zmq_(std::make_unique<Zmq>()), endpoint_(endpoint), limits_(std::move(limits)) {
  if (curve) {
    zmq_->socket.set(zmq::sockopt::curve_serverkey, curve->server_public_key);
    zmq_->socket.set(zmq::sockopt::curve_publickey, curve->keys.public_key);
    zmq_->socket.set(zmq::sockopt::curve_secretkey, curve->keys.secret_key);
  }
  // On close, queued messages (the goodbye above all) get up to 5 s to leave: with no
  // linger ZeroMQ would drop them.
  zmq_->socket.set(zmq::sockopt::linger, 5000);
  try {
    zmq_->socket.connect(endpoint);
  } catch (const zmq::error_t& e) {
    throw InvalidInput("cannot connect to the PS at '" + endpoint + "': " + e.what());
  }
  zmq_->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (zmq_->wake_fd < 0)
    throw Error(std::string("connection to ") + endpoint + ": eventfd: " + std::strerror(errno));
}

Connection::~Connection() {
  if (zmq_->wake_fd >= 0) ::close(zmq_->wake_fd);
}

void Connection::set_limits(WireLimits limits) { limits_ = std::move(limits); }

void Connection::set_linger(std::chrono::milliseconds linger) {
  zmq_->socket.set(zmq::sockopt::linger, static_cast<int>(linger.count()));
}

void Connection::send(std::string&& frame) {
  sent_ += frame.size();
  zmq_->socket.send(owned_message(std::move(frame)), zmq::send_flags::none);
}

void Connection::wake() {
  const std::uint64_t one = 1;
  // A full counter (2^64 - 2 wakes not yet seen) still wakes the poll: nothing to do.
  [[maybe_unused]] const ssize_t n = ::write(zmq_->wake_fd, &one, sizeof one);
}

bool Connection::poll(Clock::time_point deadline, Message* out) {
  while (true) {
    zmq::pollitem_t items[] = {{zmq_->socket.handle(), 0, ZMQ_POLLIN, 0},
                               {nullptr, zmq_->wake_fd, ZMQ_POLLIN, 0}};
    poll_until(items, 2, deadline);
    if (items[1].revents & ZMQ_POLLIN) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t n = ::read(zmq_->wake_fd, &count, sizeof count);
    }
    if (!(items[0].revents & ZMQ_POLLIN)) return false;  // the deadline, or woken
    zmq::message_t frame;
    if (!zmq_->socket.recv(frame, zmq::recv_flags::dontwait)) continue;
    const auto received = Clock::now();
    received_ += frame.size();
    DecodeResult r = decode(frame.data(), frame.size(), limits_);
    if (!r.ok()) {
      ++dropped_;
      last_drop_ = r.error;
      continue;
    }
    if (r.header.type == MessageType::kError)
      throw RemoteError(
          "the PS at " + endpoint_ + " said: " +
          std::string(reinterpret_cast<const char*>(r.payload), r.header.payload_bytes));
    *out = Message{r.header, frame.to_string(), received, received};
    return true;
  }
}

}  // namespace dynacomm::net
