#include "net/zmq_router.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <zmq.hpp>

#include "base/error.h"
#include "net/zap.h"
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

ZmqRouter::ZmqRouter(const std::string& listen, const RouterOptions& options)
    : options_(options),
      socket_(std::make_unique<zmq::socket_t>(zmq_context(), zmq::socket_type::router)) {
  // Queued replies get up to 2 s to leave when the socket closes.
  socket_->set(zmq::sockopt::linger, 2000);
  socket_->set(zmq::sockopt::router_mandatory, 1);  // an unroutable peer is an error
  if (options.max_message_bytes > 0)
    socket_->set(zmq::sockopt::maxmsgsize, options.max_message_bytes);
  if (options.curve) {
    zap_ = std::make_unique<ZapHandler>(options.curve->allowed, options.on_refused);
    socket_->set(zmq::sockopt::curve_server, 1);
    socket_->set(zmq::sockopt::curve_secretkey, options.curve->keys.secret_key);
    socket_->set(zmq::sockopt::zap_domain, "dynacomm");
  }
  // Failed handshakes, to say who was refused; closed connections, to say who has gone.
  static std::atomic<int> monitors{0};
  const std::string monitor = "inproc://dynacomm-router-monitor-" + std::to_string(++monitors);
  if (zmq_socket_monitor(socket_->handle(), monitor.c_str(),
                         ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_DISCONNECTED) == 0) {
    monitor_ = std::make_unique<zmq::socket_t>(zmq_context(), zmq::socket_type::pair);
    monitor_->set(zmq::sockopt::linger, 0);
    monitor_->connect(monitor);
  }
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

ZmqRouter::~ZmqRouter() { stop_monitor(); }

void ZmqRouter::stop_monitor() {
  if (!monitor_) return;
  // ZeroMQ sends each event with a blocking send from its I/O thread: the events waiting
  // are read first, or a full queue would stop that thread (and every socket of the
  // process) for good.
  while (read_monitor()) {
  }
  zmq_socket_monitor(socket_->handle(), nullptr, 0);
  monitor_.reset();
}

bool ZmqRouter::read_monitor() {
  zmq::message_t event, address;
  if (!monitor_->recv(event, zmq::recv_flags::dontwait)) return false;
  if (event.more()) (void)monitor_->recv(address, zmq::recv_flags::dontwait);
  if (event.size() < 6) return true;
  std::uint16_t id;
  std::uint32_t value;
  std::memcpy(&id, event.data(), 2);
  std::memcpy(&value, static_cast<const char*>(event.data()) + 2, 4);
  if (id == ZMQ_EVENT_DISCONNECTED) {  // value: the connection's descriptor
    if (auto it = peer_of_fd_.find(static_cast<int>(value)); it != peer_of_fd_.end()) {
      closing_.push_back(std::move(it->second));
      peer_of_fd_.erase(it);
    }
    return true;
  }
  if (!options_.on_refused) return true;
  std::string why = "handshake failed";
  if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
    why = options_.curve ? "a plaintext client (this PS requires CURVE keys)"
                         : "a client with CURVE keys (this PS runs without)";
  else if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC ||
           value == ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE)
    why = "a client whose keys do not fit (the wrong server key?)";
  options_.on_refused("refused a connection on " + address.to_string() + ": " + why);
  return true;
}

bool ZmqRouter::poll(Clock::time_point deadline, Inbound* out) {
  zmq::pollitem_t items[2] = {{socket_->handle(), 0, ZMQ_POLLIN, 0},
                              {monitor_ ? monitor_->handle() : nullptr, 0, ZMQ_POLLIN, 0}};
  poll_until(items, monitor_ ? 2 : 1, deadline);
  // Every event first: a connection's close is reported before its descriptor can be
  // reused, so a new connection's message is never taken for the closed one's.
  if (monitor_ && (items[1].revents & ZMQ_POLLIN))
    while (read_monitor()) {
    }
  // The socket's own readiness, asked after the events were read: zmq_poll looked at it
  // before the monitor, so a last message queued just before its connection's close event
  // would be missed, and the close said before the message was read.
  const bool readable =
      (items[0].revents & ZMQ_POLLIN) || (socket_->get(zmq::sockopt::events) & ZMQ_POLLIN);
  if (!readable) {
    // Nothing left to read: whatever a closed connection sent before it closed (a last
    // push, a goodbye) has been handed over, so its close can be said now.
    disconnected_.insert(disconnected_.end(), closing_.begin(), closing_.end());
    closing_.clear();
    return false;
  }
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
    if (const int fd = zmq_msg_get(part->handle(), ZMQ_SRCFD); fd >= 0) peer_of_fd_[fd] = out->peer;
    out->frame_ = std::move(part);
  }
  if (options_.curve && out->frame_) {
    try {
      out->user_id = out->frame_->gets("User-Id");
    } catch (const zmq::error_t&) {  // none: not admitted through the handler
    }
  }
  out->received = Clock::now();
  return true;
}

std::vector<std::string> ZmqRouter::take_disconnected() {
  std::vector<std::string> out;
  out.swap(disconnected_);
  return out;
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
