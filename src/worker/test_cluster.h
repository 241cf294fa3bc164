// Jobs of real workers as threads of a test process (gloo's BaseTest::spawn): a PS over
// ZeroMQ inproc:// with its workers, or --arch allreduce's and gossip's group over TCP loopback.
// Each thread's exception is rethrown in the test.
#pragma once

#include <functional>
#include <vector>

#include "worker/worker.h"

namespace dynacomm::ps {
struct ServerOptions;
}

namespace dynacomm::worker::testing {

// A PS and `workers` workers; worker 0's result. `ps_options` may change the PS's options
// made from the job's (checkpoints, say).
WorkerResult run_ps_job(const WorkerOptions& job, int workers,
                        const std::function<void(ps::ServerOptions&)>& ps_options = {});
// `workers` peer-to-peer workers (job.arch "allreduce" or "gossip"); every rank's result.
std::vector<WorkerResult> run_ring_job(WorkerOptions job, int workers);

}  // namespace dynacomm::worker::testing
