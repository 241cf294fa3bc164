// The notes under a setting's table: the ideals, the link and compute the warm-up saw,
// the PS's aggregation, the workers' spread and the peers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/job_flags.h"
#include "cli/run_summary.h"

namespace dynacomm::cli::bench {

std::string setting_note(const JobFlags& j, const RunSummary& summary, double run_ideal,
                         double run_ideal_online, const std::vector<double>& online_down,
                         const std::vector<double>& online_up, const std::string& spread_note,
                         const std::string& peer_note);

}  // namespace dynacomm::cli::bench
