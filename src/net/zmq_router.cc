#include "net/zmq_router.h"

#include <cerrno>
#include <zmq.hpp>

#include "base/error.h"
#include "net/zmq_message.h"

namespace dynacomm::net {

Inbound::Inbound() = default;
Inbound::~Inbound() = default;
Inbound::Inbound(Inbound&&) noexcept = default;
Inbound& Inbound::operator=(Inbound&&) noexcept = default;

const std::uint8_t* Inbound::data() const {
  return frame_ ? static_cast<const std::uint8_t*>(frame_->data()) : nullptr;
}
std::size_t Inbound::size() const { return frame_ ? frame_->size() : 0; }

ZmqRouter::ZmqRouter(const std::string& listen)
    : socket_(std::make_unique<zmq::socket_t>(zmq_context(), zmq::socket_type::router)) {
  // Queued replies get up to 2 s to leave when the socket closes.
  socket_->set(zmq::sockopt::linger, 2000);
  socket_->set(zmq::sockopt::router_mandatory, 1);  // an unroutable peer is an error
  std::string addr = listen;
  if (addr.rfind("tcp://", 0) == 0 && addr.size() > 2 &&
      addr.compare(addr.size() - 2, 2, ":0") == 0)
    addr.replace(addr.size() - 1, 1, "*");
  try {
    socket_->bind(addr);
  } catch (const zmq::error_t& e) {
    throw Error("ps: cannot listen on " + listen + ": " + e.what());
  }
  endpoint_ = socket_->get(zmq::sockopt::last_endpoint);
}

ZmqRouter::~ZmqRouter() = default;

bool ZmqRouter::poll(Clock::time_point deadline, Inbound* out) {
  zmq::pollitem_t item{socket_->handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, poll_timeout(deadline));
  if (!(item.revents & ZMQ_POLLIN)) return false;
  zmq::message_t id;
  if (!socket_->recv(id, zmq::recv_flags::dontwait)) return false;
  *out = Inbound{};
  out->peer = id.to_string();
  bool more = id.more();
  while (more) {
    auto part = std::make_unique<zmq::message_t>();
    if (!socket_->recv(*part, zmq::recv_flags::dontwait)) break;
    more = part->more();
    ++out->parts;
    out->frame_ = std::move(part);
  }
  out->received = Clock::now();
  return true;
}

bool ZmqRouter::send(const std::string& peer, std::string&& frame) {
  try {
    socket_->send(zmq::buffer(peer), zmq::send_flags::sndmore);
    socket_->send(owned_message(std::move(frame)), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    if (e.num() != EHOSTUNREACH) throw;
    return false;
  }
  return true;
}

}  // namespace dynacomm::net
