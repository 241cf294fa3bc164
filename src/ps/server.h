// The parameter server process's core: a ZeroMQ ROUTER socket, owned by one I/O thread,
// in front of a ParameterStore.
//
//   ServerOptions o;  o.listen = "tcp://127.0.0.1:0";  o.workers = 2;  o.model = "cnn";
//   PsServer ps(o);                      // binds now: a port in use is a clear Error
//   std::string ep = ps.endpoint();      // "tcp://127.0.0.1:41234"
//   ps.start();
//   std::vector<float> final = ps.wait();  // until every worker said goodbye
//
// Protocol (net/wire.h messages):
//   worker -> hello {model, workers, unit_bytes}   PS -> hello (welcome) or error (refused)
//   worker 0 -> init (all initial parameters)      the store is created from it
//   worker -> pull-request (t, a..b)               PS -> pull-reply as soon as a..b are at t
//   worker -> push (t, a..b, gradients)            applied when all N workers' are in
//   worker -> shutdown                             PS stops once all N have
// A malformed or unexpected message is dropped with a logged reason naming the peer; it
// never stops the server. A worker whose model, worker count or unit layout differs
// from the job's is refused at hello with an error message saying what differs.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "optim/sgd.h"

namespace dynacomm::ps {

struct ServerOptions {
  std::string listen = "tcp://127.0.0.1:0";  // port 0: a free port is chosen
  int workers = 1;
  std::string model;  // the job's model; "" = take worker 0's
  optim::SgdOptions sgd;
  std::chrono::milliseconds timeout{60000};     // no message at all for this long: give up
  std::function<void(const std::string&)> log;  // dropped messages etc.; default stderr

  void validate() const;  // throws InvalidInput naming the option
};

class PsServer {
 public:
  explicit PsServer(const ServerOptions& options);
  ~PsServer();  // stops the I/O thread
  PsServer(const PsServer&) = delete;
  PsServer& operator=(const PsServer&) = delete;

  const std::string& endpoint() const;
  void start();
  // Blocks until every worker has shut down (returns the final parameters, units in
  // order), or throws Timeout / Error with what went wrong.
  std::vector<float> wait();
  void stop();

  std::uint64_t bytes_received() const;
  std::uint64_t bytes_sent() const;
  std::uint64_t messages_dropped() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace dynacomm::ps
