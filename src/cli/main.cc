// dynacomm: communication-scheduled CNN training for edge devices and a parameter server.
// This executable loads no libtorch (cli/app.h): `plan` and `ps` run here; the commands
// that compute run in dynacomm-compute, beside it, with the same arguments.
#include <unistd.h>

#include <cstring>
#include <iostream>

#include "cli/app.h"
#include "cli/commands.h"

namespace {

int exec_compute(char** argv) {
  const std::string exe = dynacomm::cli::sibling_exe("dynacomm-compute");
  ::execv(exe.c_str(), argv);
  std::cerr << "dynacomm: failed: cannot run " << exe << " (" << std::strerror(errno)
            << "): the commands that compute live there\n";
  return dynacomm::cli::kFailed;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dynacomm::cli;
  if (argc > 1)
    for (const auto& [name, summary] : compute_commands())
      if (name == argv[1]) return exec_compute(argv);
  return run_app(argc, argv, [](CLI::App& app) {
    add_plan_command(app);
    add_ps_command(app);
    add_trace_command(app);
    add_keygen_command(app);
    // Listed in the help; run by dynacomm-compute (above, before parsing).
    for (const auto& [name, summary] : compute_commands())
      app.add_subcommand(name, summary)->allow_extras()->prefix_command();
  });
}
