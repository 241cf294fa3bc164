// A worker of --arch allreduce: no parameter server; every worker holds the whole model,
// sums its gradients with the others' over a ring (collective/ring_group.h) in buckets that
// overlap backward (worker/bucket_ring.h), and applies the job's optimiser to the mean
// itself, so every worker's weights stay the same bit for bit.
//
// The buckets are planned: the warm-up alternates one bucket for the whole model and one
// per unit, which measures every unit's compute and all-reduces of very different sizes;
// rank 0 fits the ring's cost to them (a fixed part per all-reduce and a bandwidth:
// plan/model/ring.h), plans (options.buckets: "planned", the DynaComm push DP under that
// cost; "ddp", PyTorch DDP's 25 MB rule; "one"; "layerwise") and publishes the buckets
// through the group's store; every worker runs them, and rank 0 re-plans them while the job
// runs (worker/ring_replan.h).
//
// Rank 0 evaluates and writes the run's results as a PS worker's rank 0 does.
#pragma once

#include <ostream>

#include "worker/worker.h"

namespace dynacomm::worker {

// Throws Timeout / Error naming the peer's rank, the bucket and the iteration on failure.
WorkerResult run_ring_worker(const WorkerOptions& options, std::ostream& progress);

}  // namespace dynacomm::worker
