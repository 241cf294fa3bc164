// The strategies' turns in one job (A A A B B B ...): which of the job's iterations count
// for which plan, and the figures the run's metrics give for them.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/bench/repredict.h"
#include "cli/run_summary.h"
#include "worker/metrics.h"

namespace dynacomm::cli::bench {

// A setting's measured iterations by plan id: measured times and their online figures.
struct Measured {
  std::map<int, std::vector<double>> by_plan, online_by_plan, ideal_by_plan, slowest_by_plan,
      spread_by_plan;
  std::vector<double> online_down, online_up;  // the stretches over the measured iterations
};
// From metrics.csv and the re-prediction: warm-up, each turn's first `settle` iterations,
// iterations near an epoch's evaluation and the job's last are left out.
Measured measured_iterations(const worker::MetricsTable& metrics,
                             const std::vector<Prediction>& predictions, int warmup, int block,
                             int settle);

// The run's rotation re-predicted (rank 0's rotation.json in `dir`, the summary's plans),
// into dir/predictions.csv too.
std::vector<Prediction> repredict_run(const std::string& dir, const RunSummary& summary,
                                      const worker::WorkerOptions& o);

// The phase-separated ideal from the online estimates (for the peers): over the
// iterations of phase-separated plans.
double phase_separated_ideal(const RunSummary& summary,
                             std::map<int, std::vector<double>>& ideal_by_plan);

}  // namespace dynacomm::cli::bench
