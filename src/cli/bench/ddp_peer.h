// The PyTorch DDP peer (bench/peers/ddp.py) on the same links as dynacomm's job: one
// process per worker in that worker's namespace.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/bench/common.h"
#include "cli/bench/options.h"
#include "cli/run_summary.h"
#include "cluster/netns.h"

namespace dynacomm::cli::bench {

struct DdpRun {
  Stats iterations;         // rank 0's per-iteration times (ms)
  std::int64_t params = 0;  // what it trained
  // With j.target_accuracy: rank 0's evaluations on the test set (ddp.py --data: it trains
  // on Fashion-MNIST for j.epochs and stops at the target), in order.
  struct Evaluation {
    std::int64_t iteration;
    double accuracy, train_s;  // training time to its end, the evaluations left out
  };
  std::vector<Evaluation> evaluations;
  std::optional<Evaluation> reached;  // the first at the target
};

// Runs it (random batches, or with j.target_accuracy Fashion-MNIST to that accuracy).
DdpRun run_ddp(const BenchFlags& f, const JobFlags& j, cluster::NetnsTopology& topology,
               const std::string& dir, int threads);

// What the DDP peer trained, beside dynacomm's model (a note under the table).
std::string ddp_note(std::int64_t params, const JobFlags& j, const RunSummary& summary);

}  // namespace dynacomm::cli::bench
