// The parameter server process's core: a ZeroMQ ROUTER (net/zmq_router.h), owned by one
// I/O thread, in front of a ParameterStore.
//
//   ServerOptions o;  o.listen = "tcp://127.0.0.1:0";  o.workers = 2;  o.model = "cnn";
//   PsServer ps(o);                      // binds now: a port in use is a clear Error
//   std::string ep = ps.endpoint();      // "tcp://127.0.0.1:41234"
//   ps.start();
//   std::vector<float> final = ps.wait();  // until every worker said goodbye
//
// Protocol (net/wire.h messages):
//   worker -> job-config                           PS -> job-config (the job's settings)
//   worker -> hello {model, workers, unit_bytes,   PS -> hello (welcome) or error (refused)
//                    config}
//   worker 0 -> init (all initial parameters)      the store is created from it
//   worker -> pull-request (t, a..b)               PS -> pull-reply as soon as a..b are at t
//                                                  (flag in-order: and the worker's earlier
//                                                  in-order requests are answered; with
//                                                  compressed pulls, per atom the update
//                                                  or the public copy; flag exact: the
//                                                  parameters themselves)
//   worker -> push (t, a..b, gradients)            PS -> push-ack; applied when all N are in
//   worker -> plans {plans: [{index, predicted_ms, plan}]}   after its warm-up
//                                                  PS -> plans, to all, once all N have:
//                                                  for each index, the plan of the worker
//                                                  that predicted itself slowest with it
//   worker -> replan {current_ms, proposal?}       after each re-planning of the job's plan
//                                                  PS -> replan {plan, from_iteration}, to
//                                                  all, once all N have reported and the
//                                                  slowest of them proposed a plan
//   worker -> shutdown                             PS stops once all N have
//   worker -> heartbeat (every second)             keeps it in the job
// Membership (ps/membership.h, the store's semantics in ps/store.h): a worker silent past
// peer_timeout, or whose rank joins again from a new connection, leaves the job; updates
// stop waiting for it and the others go on. A worker that joins a running job is welcomed
// with the flag job-running and the iteration it starts at (the newest version), sends no
// init, and a plans offer from it is answered with the job's agreed plans and latest change.
// Every pull reply carries in held_us how long its request waited at the PS, and every
// push ack how long the push took to process, so a worker can time the transfers alone.
// A pull reply for iteration t also carries in compute_us the largest compute time any
// worker reported with its pushes of t - 1 (the compute that paced the barrier), and in
// predicted_us the mode's pace for that worker from each worker's newest prediction, that
// of its push of t - 1 or, not in yet (SSP), of its latest push (SyncPolicy::pace: under
// BSP the largest, the slowest link's or device's).
// A malformed or unexpected message is dropped with a logged reason naming the peer; it
// never stops the server. A worker whose model, worker count, settings or unit layout
// differ from the job's is refused at hello with an error message saying what differs,
// and the job stops: the PS tells every worker that has joined why, at once, and wait()
// throws it. So does a worker's error (it failed, or refused the job's settings).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/curve.h"
#include "net/job_protocol.h"
#include "optim/sgd.h"

namespace dynacomm::ps {

struct ServerOptions {
  std::string listen = "tcp://127.0.0.1:0";  // port 0: a free port is chosen
  int workers = 1;
  std::string model;  // the job's model; "" = take worker 0's
  // The job's settings, handed to each worker that asks before it joins (kJobConfig); a
  // worker whose hello says otherwise is refused, and the job stops.
  net::JobConfig job;
  optim::SgdOptions sgd;
  // The pushes' codec (compress/compressor.h), its random draws from `seed` (the workers'
  // --seed: random-k's indices are drawn on both sides).
  std::string compression = "none";
  // The pulls' codec (compress/pull_codec.h): "none", float32 replies; a method: the same
  // encoded update of each unit to every worker that holds the public copy before it.
  std::string pull_compression = "none";
  // The synchronisation mode (ps/sync_policy.h): bsp, ssp:S, backup:B or asp.
  std::string sync = "bsp";
  std::uint64_t seed = 1;
  std::chrono::milliseconds timeout{60000};     // no message at all for this long: give up
  // A worker not heard from for this long (workers send a heartbeat every second) leaves
  // the job, which goes on with the others; it may join again. Longer than any one
  // transfer over the slowest link (a frame is heard when it has arrived whole).
  std::chrono::milliseconds peer_timeout{30000};
  // Checkpoints (ps/checkpoint.h) into checkpoint_dir: every checkpoint_every iterations
  // and/or every checkpoint_period, and when the job ends; the newest checkpoint_keep kept.
  std::string checkpoint_dir;
  std::int64_t checkpoint_every = 0;
  std::chrono::milliseconds checkpoint_period{0};
  int checkpoint_keep = 3;
  // Start from the newest checkpoint in checkpoint_dir that reads and fits this job (one
  // that does not is refused, logged, and the one before it tried); the workers join the
  // running job at its iteration. The constructor throws InvalidInput when none is usable.
  bool resume = false;
  // Security (net/curve.h): with `curve`, only workers whose keys are on its allow-list
  // connect, each only as the rank its key was admitted for. Without it the PS must listen
  // on loopback, unless `insecure` says the network is trusted.
  std::optional<net::CurveServer> curve;
  bool insecure = false;
  // A message larger than this drops its connection before it is kept (ZeroMQ's
  // maxmsgsize); a model whose whole-model message would not fit is refused at hello.
  std::int64_t max_message_bytes = std::int64_t{1} << 30;
  std::function<void(const std::string&)> log;  // dropped messages etc.; default stderr

  void validate() const;  // throws InvalidInput naming the option
};

// What the PS did, for the run's timeline: times on this machine's steady clock, in ms.
struct PsEvent {
  int track;  // 0..workers-1: requests of that worker; `workers`: parameter updates
  std::string name, category;
  double start_ms, end_ms;
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
  // Units' pushes the synchronisation mode dropped (backup workers': late), after wait().
  std::int64_t late_pushes_dropped() const;
  // Events of the iterations the job asked to trace (hello: trace_from, trace_count);
  // read after wait().
  std::vector<PsEvent> trace_events() const;

  struct Impl;

 private:
  friend class PsHarness;
  PsServer(const ServerOptions& options, bool socket);  // socket false: a PsHarness's
  std::unique_ptr<Impl> impl_;
};

// For fuzzing (fuzz/) and tests: a PS without a socket, fed frames straight into its
// handling as if from peers (their routing ids); what it would send them is dropped. No
// CURVE (its options must have none): there is no handshake to admit a key.
class PsHarness {
 public:
  explicit PsHarness(const ServerOptions& options);
  ~PsHarness();
  // One frame from `peer`; false once the job has ended (finished, or stopped).
  bool feed(const std::string& peer, const void* data, std::size_t size);

 private:
  PsServer server_;
};

}  // namespace dynacomm::ps
