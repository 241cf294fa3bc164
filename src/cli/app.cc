#include "cli/app.h"

#include <unistd.h>

#include <iostream>

#include "base/error.h"

namespace dynacomm::cli {

const std::vector<std::pair<std::string, std::string>>& compute_commands() {
  static const std::vector<std::pair<std::string, std::string>> commands = {
      {"train", "Train a CNN on Fashion-MNIST: a PS and edge workers on this machine, or --local"},
      {"profile", "Measure per-unit forward/backward times and sizes; writes a plan profile"},
      {"export", "Write a model as model.pt and weights.bin: from a PS checkpoint, or initial"},
      {"worker", "Run one edge worker against a PS"},
      {"bench",
       "Every strategy side by side on one cluster and link, taking turns; vs the ideal and "
       "PyTorch DDP"},
  };
  return commands;
}

std::string sibling_exe(const std::string& name) {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error("cannot find the dynacomm executable (/proc/self/exe)");
  std::string self(buf, static_cast<std::size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + name;
}

int run_app(int argc, char** argv, const std::function<void(CLI::App&)>& add_commands) {
  CLI::App app{
      "dynacomm: DynaComm-scheduled CNN training across edge devices and a parameter server"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dynacomm 0.1.0");
  app.footer(
      "Exit codes: 0 done, 2 bad input (the flag or file is named), 1 failed while running.");
  try {
    add_commands(app);
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
              << (app.get_subcommands().empty() ? ""
                                                : app.get_subcommands().front()->get_name() + " ")
              << "--help)\n";
    return kBadInput;
  } catch (const InvalidInput& e) {
    std::cerr << "dynacomm: error: " << e.what() << "\n";
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "dynacomm: failed: " << e.what() << "\n";
    return kFailed;
  }
  return 0;
}

}  // namespace dynacomm::cli
