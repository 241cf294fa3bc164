#include "worker/test_cluster.h"

#include <exception>
#include <sstream>
#include <thread>

#include "net/free_port.h"
#include "ps/server.h"
#include "worker/gossip_worker.h"
#include "worker/ring_worker.h"

namespace dynacomm::worker::testing {

WorkerResult run_ps_job(const WorkerOptions& job, int workers,
                        const std::function<void(ps::ServerOptions&)>& ps_options) {
  static int jobs = 0;
  ps::ServerOptions so;
#if defined(__SANITIZE_THREAD__)
  // libzmq hands an inproc frame's bytes from thread to thread through its own lock-free
  // pipe, uninstrumented, so ThreadSanitizer cannot see that hand-over and reports every
  // read of a received frame; over TCP the kernel copies them.
  so.listen = "tcp://127.0.0.1:0";
  (void)jobs;
#else
  so.listen = "inproc://threaded-cluster-" + std::to_string(++jobs);
#endif
  so.workers = workers;
  so.model = job.model;
  so.sgd = job.sgd;
  so.sync = job.sync;
  so.compression = job.compression;
  so.pull_compression = job.pull_compression;
  so.seed = job.seed;
  so.timeout = job.timeout;
  so.log = [](const std::string&) {};
  if (ps_options) ps_options(so);
  ps::PsServer server(so);
  server.start();
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(workers));
  std::vector<WorkerResult> results(static_cast<std::size_t>(workers));
  std::vector<std::thread> threads;
  for (int r = 0; r < workers; ++r)
    threads.emplace_back([&, r] {
      try {
        WorkerOptions o = job;
        o.ps = server.endpoint();
        o.rank = r;
        o.workers = workers;
        std::ostringstream progress;
        results[static_cast<std::size_t>(r)] = run_worker(o, progress);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) {
      server.stop();
      std::rethrow_exception(e);
    }
  (void)server.wait();
  return std::move(results[0]);
}

std::vector<WorkerResult> run_ring_job(WorkerOptions job, int workers) {
  job.workers = workers;
  job.ring_store = "127.0.0.1:" + std::to_string(net::free_tcp_port());
  std::vector<std::exception_ptr> errors(workers);
  std::vector<WorkerResult> results(workers);
  std::vector<std::thread> threads;
  for (int r = 0; r < workers; ++r)
    threads.emplace_back([&, r] {
      try {
        WorkerOptions o = job;
        o.rank = r;
        std::ostringstream progress;
        results[r] =
            o.arch == "gossip" ? run_gossip_worker(o, progress) : run_ring_worker(o, progress);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

}  // namespace dynacomm::worker::testing
