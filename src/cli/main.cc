// dynacomm: communication-scheduled CNN training for edge devices and a parameter server.
//
// Exit codes (README, "Exit codes"): 0 done; 2 bad input (a flag, a file, a profile: one
// line naming it and what it accepts); 1 a failure while running (a peer, a timeout, the
// system, an interrupt). Never a signal.
#include <CLI/CLI.hpp>
#include <iostream>

#include "base/error.h"
#include "cli/commands.h"

namespace {
constexpr int kBadInput = 2, kFailed = 1;
}

int main(int argc, char** argv) {
  CLI::App app{
      "dynacomm: DynaComm-scheduled CNN training across edge devices and a parameter server"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dynacomm 0.1.0");
  app.footer("Exit codes: 0 done, 2 bad input (the flag or file is named), 1 failed while running.");
  dynacomm::cli::add_train_command(app);
  dynacomm::cli::add_plan_command(app);
  dynacomm::cli::add_profile_command(app);
  dynacomm::cli::add_ps_command(app);
  dynacomm::cli::add_worker_command(app);
  dynacomm::cli::add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {  // a command's own non-zero status
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    std::cerr << "dynacomm: error: " << e.what() << " (see dynacomm "
              << (app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name() + " ")
              << "--help)\n";
    return kBadInput;
  } catch (const dynacomm::InvalidInput& e) {
    std::cerr << "dynacomm: error: " << e.what() << "\n";
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "dynacomm: failed: " << e.what() << "\n";
    return kFailed;
  }
  return 0;
}
