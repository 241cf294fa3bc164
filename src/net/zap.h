// The PS's ZeroMQ authentication handler (ZAP, ZeroMQ RFC 27) for CURVE: every client's
// handshake asks it, with the client's public key, and it admits a key on the PS's
// allow-list as the rank it was admitted for (the messages' User-Id, "rank R"), and
// refuses any other (logged, rate-limited). One per process: ZeroMQ asks the handler
// bound at inproc://zeromq.zap.01 of the socket's context.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "net/curve.h"

namespace dynacomm::net {

class ZapHandler {
 public:
  // Binds the handler now (Error when another in this process has); serves on a thread
  // of its own until destroyed.
  ZapHandler(AllowList allowed, std::function<void(const std::string&)> log);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  std::uint64_t refused() const { return refused_; }

 private:
  struct Socket;
  void serve();
  AllowList allowed_;
  std::function<void(const std::string&)> log_;
  std::unique_ptr<Socket> socket_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> refused_{0};
  std::thread thread_;
};

}  // namespace dynacomm::net
