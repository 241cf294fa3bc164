// One setting (bandwidth) of `dynacomm bench`: the job with every strategy taking turns,
// the peers on the same links; its rows, table, notes and charts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/bench/options.h"
#include "report/run_folder.h"
#include "report/svg_chart.h"

namespace dynacomm::cli::bench {

// What every setting of a bench adds to.
struct BenchOutput {
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::vector<double>> csv;
  std::vector<report::Series> speedups;  // one per strategy, in the rotation's order
  std::string md;
};

void bench_setting(const BenchFlags& f, const JobFlags& base, const std::string& bw, int settle,
                   int measured_each, const std::string& out, report::RunFolder& folder,
                   int threads, BenchOutput& output);

}  // namespace dynacomm::cli::bench
