// dynacomm: communication-scheduled CNN training for edge devices and a parameter server.
#include <CLI/CLI.hpp>
#include <iostream>

#include "base/error.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "dynacomm: DynaComm-scheduled CNN training across edge devices and a parameter server"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dynacomm 0.1.0");
  dynacomm::cli::add_train_command(app);
  dynacomm::cli::add_plan_command(app);
  dynacomm::cli::add_profile_command(app);
  dynacomm::cli::add_ps_command(app);
  dynacomm::cli::add_worker_command(app);
  dynacomm::cli::add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const dynacomm::InvalidInput& e) {
    std::cerr << "dynacomm: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dynacomm: failed: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
