#include "net/connection.h"

#include <zmq.hpp>

#include "base/error.h"
#include "net/zmq_message.h"

namespace dynacomm::net {

zmq::message_t owned_message(std::string&& bytes) {
  auto* owner = new std::string(std::move(bytes));
  return zmq::message_t(
      owner->data(), owner->size(),
      [](void*, void* hint) { delete static_cast<std::string*>(hint); }, owner);
}

struct Connection::Zmq {
  zmq::context_t context{1};
  zmq::socket_t socket{context, zmq::socket_type::dealer};
};

Connection::Connection(const std::string& endpoint, WireLimits limits)
    : zmq_(std::make_unique<Zmq>()), endpoint_(endpoint), limits_(std::move(limits)) {
  // On close, wait up to 5 s for queued messages (the goodbye above all) to leave:
  // with no linger ZeroMQ would drop them.
  zmq_->socket.set(zmq::sockopt::linger, 5000);
  try {
    zmq_->socket.connect(endpoint);
  } catch (const zmq::error_t& e) {
    throw InvalidInput("cannot connect to the PS at '" + endpoint + "': " + e.what());
  }
}

Connection::~Connection() = default;

void Connection::set_limits(WireLimits limits) { limits_ = std::move(limits); }

void Connection::send(const Header& header, const void* payload, std::size_t size) {
  send_frame(encode(header, payload, size));
}

void Connection::send_frame(std::string&& msg) {
  sent_ += msg.size();
  zmq_->socket.send(owned_message(std::move(msg)), zmq::send_flags::none);
}

Message Connection::receive(std::chrono::milliseconds timeout, const std::string& waiting_for) {
  Message m;
  if (!poll(timeout, &m))
    throw Timeout("no answer from the PS at " + endpoint_ + " within " +
                  std::to_string(timeout.count()) + " ms while waiting for " + waiting_for);
  return m;
}

bool Connection::poll(std::chrono::milliseconds timeout, Message* out) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = timeout;  // the whole timeout first: rounding it down to 0 ms would spin
  while (true) {
    zmq::pollitem_t item{zmq_->socket.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, left);
    if (!(item.revents & ZMQ_POLLIN)) return false;
    zmq::message_t frame;
    if (!zmq_->socket.recv(frame, zmq::recv_flags::dontwait)) continue;
    received_ += frame.size();
    DecodeResult r = decode(frame.data(), frame.size(), limits_);
    if (!r.ok()) {
      ++dropped_;
      last_drop_ = r.error;
      left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() < 0) left = std::chrono::milliseconds(0);
      continue;
    }
    if (r.header.type == MessageType::kError)
      throw Error("the PS at " + endpoint_ + " said: " +
                  std::string(reinterpret_cast<const char*>(r.payload), r.header.payload_bytes));
    *out = Message{r.header, frame.to_string()};
    return true;
  }
}

}  // namespace dynacomm::net
