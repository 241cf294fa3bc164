// What the workers of the peer-to-peer architectures (--arch allreduce: ring_worker.h;
// --arch gossip: gossip_worker.h) share: the data, the model with the job's initial
// weights (rank 0's, broadcast over the group), the optimiser, the group, the epochs'
// shuffled orders, rank 0's test set and the run's log; and the end of a run (its
// median iteration and last status).
//
//   PeerJob job(options, progress);          // validates, loads, joins, broadcasts
//   for (std::int64_t it = 0; it < job.share.total; ++it) {
//     const std::int64_t step = job.begin_iteration(it);
//     ... job.order[step * batch ...] ...
//   }
//   return job.finish();
#pragma once

#include <memory>
#include <ostream>
#include <vector>

#include "collective/ring_group.h"
#include "data/fashion_mnist.h"
#include "model/model.h"
#include "optim/sgd.h"
#include "worker/data_share.h"
#include "worker/run_log.h"
#include "worker/worker.h"

namespace dynacomm::worker {

// The group of o's ranks: rank 0's store at o.ring_store, o's link paced in user space
// unless the kernel shapes it.
collective::RingGroupOptions group_options(const WorkerOptions& o);

class PeerJob {
 public:
  // Throws InvalidInput for bad options, Timeout naming the ranks missing from the group.
  PeerJob(const WorkerOptions& options, std::ostream& progress);

  // The step of iteration `it` in its epoch; a new epoch reshuffles `order` and starts the
  // log's bar.
  std::int64_t begin_iteration(std::int64_t it);
  int epoch(std::int64_t it) const { return static_cast<int>(it / share.steps_per_epoch) + 1; }
  // Throws Error naming the rank and iteration when the loss is not finite.
  void check_loss(double loss, std::int64_t it) const;
  // Rank 0, between iterations: the test set's accuracy at epochs' ends and every
  // eval_every iterations.
  void maybe_evaluate(std::int64_t it);
  // Iteration `it`'s record as both workers fill it: from `start`, the bytes the group sent
  // since `sent_before` (each way), the warm-up's plan 0 and then plan 1.
  IterationRecord record(std::int64_t it, double loss, Clock::time_point start,
                         std::int64_t sent_before, std::size_t segments) const;
  // The median iteration after the warm-up, the final status; returns the result.
  WorkerResult finish();

  const WorkerOptions o;
  const Clock::time_point started;
  const data::Dataset train;
  const DataShare share;
  std::unique_ptr<model::Model> model;
  std::unique_ptr<collective::RingGroup> group;
  std::unique_ptr<optim::Sgd> sgd;
  std::unique_ptr<data::Dataset> test;  // rank 0's
  RunLog log;
  WorkerResult result;
  std::vector<std::int64_t> order;  // this epoch's batches
};

}  // namespace dynacomm::worker
