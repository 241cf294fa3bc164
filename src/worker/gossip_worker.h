// A worker of --arch gossip: D-PSGD (plan/model/gossip.h) with no parameter server. Every
// worker keeps its own model; each iteration a thread sends a snapshot of it to the
// worker's neighbours on the topology (options.topology: a ring, or a torus) and receives
// theirs, over the group's point-to-point send/recv (collective/ring_group.h), while
// forward and backward run on it; then the worker mixes (its row of the Metropolis-
// Hastings weights, own model and neighbours' in rank order, the same arithmetic on every
// run) and applies the job's optimiser to its own gradient. The exchange needs no gradient,
// so it hides behind the whole of the compute.
//
// Stopping: a worker asked to stop (worker::stop_requested()) sets a deadline P iterations
// ahead in the float slot it sends after its model; every worker takes the earliest
// deadline it has seen and passes it on, one hop per iteration, so all have it within P-1
// iterations and stop together after that iteration.
//
// At the end the workers all-reduce their models to the consensus (their average), which
// every rank keeps and rank 0 evaluates and writes; its evaluations during the run are of
// its own model.
#pragma once

#include <ostream>

#include "worker/worker.h"

namespace dynacomm::worker {

// Throws Timeout / Error naming the neighbour's rank and the iteration on failure.
WorkerResult run_gossip_worker(const WorkerOptions& options, std::ostream& progress);

}  // namespace dynacomm::worker
