#include "net/zap.h"

#include <chrono>
#include <vector>
#include <zmq.hpp>

#include "base/error.h"
#include "base/log_limiter.h"
#include "net/zmq_message.h"

namespace dynacomm::net {

struct ZapHandler::Socket {
  zmq::socket_t socket{zmq_context(), zmq::socket_type::rep};
};

ZapHandler::ZapHandler(AllowList allowed, std::function<void(const std::string&)> log)
    : allowed_(std::move(allowed)), log_(std::move(log)), socket_(std::make_unique<Socket>()) {
  socket_->socket.set(zmq::sockopt::linger, 0);
  try {
    socket_->socket.bind("inproc://zeromq.zap.01");
  } catch (const zmq::error_t& e) {
    throw Error(std::string("ps: cannot start CURVE authentication (one PS with keys per "
                            "process): ") +
                e.what());
  }
  thread_ = std::thread([this] { serve(); });
}

ZapHandler::~ZapHandler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ZapHandler::serve() {
  LogLimiter limiter(20, std::chrono::seconds(10));
  zmq::socket_t& s = socket_->socket;
  while (!stop_) {
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    poll_until(&item, 1, std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    // version, request id, domain, address, identity, mechanism, credentials...
    std::vector<zmq::message_t> request;
    do {
      request.emplace_back();
      if (!s.recv(request.back(), zmq::recv_flags::dontwait)) break;
    } while (request.back().more() && request.size() < 16);
    while (!request.empty() && request.back().more()) {  // drain an oversized request
      zmq::message_t rest;
      if (!s.recv(rest, zmq::recv_flags::dontwait)) break;
      if (!rest.more()) break;
    }
    const bool well_formed =
        request.size() >= 7 && request[5].to_string() == "CURVE" && request[6].size() == 32;
    std::string user, status = "400", text = "unknown key";
    std::string address = request.size() > 3 ? request[3].to_string().substr(0, 64) : "?";
    if (well_formed) {
      char z85[41];
      zmq_z85_encode(z85, static_cast<const std::uint8_t*>(request[6].data()), 32);
      if (const auto rank = allowed_.rank_of(z85)) {
        status = "200";
        text = "OK";
        user = "rank " + std::to_string(*rank);
      } else {
        ++refused_;
        if (auto line = limiter.admit(std::chrono::steady_clock::now(),
                                      std::string("refused a worker from ") + address +
                                          ": its key " + z85 + " is not on the allow-list"))
          if (log_) log_(*line);
      }
    } else {
      ++refused_;
      text = "not a CURVE request";
    }
    const std::string version = "1.0";
    const std::string id = request.size() > 1 ? request[1].to_string() : "";
    s.send(zmq::buffer(version), zmq::send_flags::sndmore);
    s.send(zmq::buffer(id), zmq::send_flags::sndmore);
    s.send(zmq::buffer(status), zmq::send_flags::sndmore);
    s.send(zmq::buffer(text), zmq::send_flags::sndmore);
    s.send(zmq::buffer(user), zmq::send_flags::sndmore);
    s.send(zmq::buffer(std::string()), zmq::send_flags::none);
  }
}

}  // namespace dynacomm::net
