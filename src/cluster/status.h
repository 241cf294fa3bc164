// The launcher's combined progress display: every worker rewrites
// status-worker<R>.json in the run folder (worker/worker.h); the launcher reads them all
// and shows one line for the whole cluster.
//
//   std::vector<nlohmann::json> s = read_statuses(run_dir, workers);   // missing: null
//   std::cerr << "\r" << render_status(s);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dynacomm::cluster {

// One entry per rank; null where a worker has not written its status yet, or where the
// file cannot be read or parsed (it is rewritten atomically, so that is only a race at
// start-up or a foreign file, never a reason to fail).
std::vector<nlohmann::json> read_statuses(const std::string& run_dir, int workers);

// "it 120/469  epoch 1/1  0:42, ~2:02 left  loss w0 0.612 w1 0.598  412 img/s  up 402.1 MB
//  down 402.1 MB  plan 3 pull + 3 push segments  test acc 85.12%" - iteration and epoch of
// the slowest worker, the time since the job started (elapsed_s; < 0: not shown) and what
// is left at the pace so far, each worker's loss, the sum of the rates and bytes, the plan
// of rank 0, and the latest test accuracy (rank 0). "waiting for the workers to start"
// before any status exists.
//
// A bench (StatusStyle with a rotation) leads with its label and counts the rotation's turns
// instead of epochs: "bench 100mbit (2/5)  it 40/130  turn 5/12  0:42, ~1:40 left  ...".
struct StatusStyle {
  std::string label;  // leads the line (empty: nothing)
  // A rotation: `warmup` iterations, then turns of `block` iterations (block 0: no rotation).
  std::int64_t warmup = 0, block = 0;
};
std::string render_status(const std::vector<nlohmann::json>& statuses, double elapsed_s = -1,
                          const StatusStyle& style = {});

}  // namespace dynacomm::cluster
