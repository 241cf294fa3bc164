// Each subcommand registers its flags and its action on the top-level app.
#pragma once

#include <CLI/CLI.hpp>

namespace dynacomm::cli {

void add_plan_command(CLI::App& app);
void add_profile_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_ps_command(CLI::App& app);
void add_worker_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_trace_command(CLI::App& app);
void add_keygen_command(CLI::App& app);
void add_export_command(CLI::App& app);

}  // namespace dynacomm::cli
