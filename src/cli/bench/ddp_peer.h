// The PyTorch DDP peer (bench/peers/ddp.py) on the same links as dynacomm's job: one
// process per worker in that worker's namespace.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cli/bench/common.h"
#include "cli/bench/options.h"
#include "cli/run_summary.h"
#include "cluster/netns.h"

namespace dynacomm::cli::bench {

// Runs it; returns the per-iteration times of rank 0 and the parameter count it trained.
std::pair<Stats, std::int64_t> run_ddp(const BenchFlags& f, const JobFlags& j,
                                       cluster::NetnsTopology& topology, const std::string& dir,
                                       int threads);

// What the DDP peer trained, beside dynacomm's model (a note under the table).
std::string ddp_note(std::int64_t params, const JobFlags& j, const RunSummary& summary);

}  // namespace dynacomm::cli::bench
