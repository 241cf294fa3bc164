// Checks on flag values that CLI11 runs while parsing, so a bad value is reported with its
// flag's name (and what it accepts) before a command does anything.
//
//   cmd->add_option("--down", down)->check(bandwidth_check());   // "100MB" -> error
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace dynacomm::cli {

std::string listed(const std::vector<std::string>& names);  // "a, b, c"

CLI::Validator bandwidth_check();          // plan::parse_bandwidth_bps accepts it
CLI::Validator duration_check();           // plan::parse_duration_ms accepts it
CLI::Validator positive_duration_check();  // ... and it is above 0
CLI::Validator endpoint_check();           // net::check_endpoint accepts it
// A comma-separated list whose every item is one of `known`.
CLI::Validator list_of_check(const std::vector<std::string>& known);
CLI::Validator bandwidth_list_check();  // a comma-separated list of bandwidths
CLI::Validator unsigned_check();        // digits only (CLI11 wraps "-1" into a uint64)
// A zoo model's name, or a readable TorchScript file ending in ".pt".
CLI::Validator model_check();
std::string model_help();

}  // namespace dynacomm::cli
