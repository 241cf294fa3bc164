// The `dynacomm` command line: one CLI11 app, one error model and the exit codes.
//
// Two executables share it. `dynacomm` loads no libtorch: it runs `plan` and `ps` itself
// (a cloud PS starts in milliseconds and holds a few MB) and hands the commands that
// compute (train, worker, profile, bench) to `dynacomm-compute` beside it, which has them
// all.
//
// Exit codes: 0 done; 2 bad input (a flag, a file, a profile: one line naming it and what
// it accepts); 1 a failure while running (a peer, a timeout, the system, an interrupt).
// Never a signal.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace dynacomm::cli {

constexpr int kBadInput = 2, kFailed = 1;

// Builds the app, lets `add_commands` register its subcommands, parses and runs.
int run_app(int argc, char** argv, const std::function<void(CLI::App&)>& add_commands);

// The subcommands that need libtorch, with their one-line descriptions.
const std::vector<std::pair<std::string, std::string>>& compute_commands();

// The path of an executable beside this one's (/proc/self/exe).
std::string sibling_exe(const std::string& name);

}  // namespace dynacomm::cli
