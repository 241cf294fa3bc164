// dynacomm-compute: every dynacomm command, libtorch included; `dynacomm` hands it the
// commands that compute (cli/app.h).
#include "cli/app.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace dynacomm::cli;
  return run_app(argc, argv, [](CLI::App& app) {
    add_train_command(app);
    add_plan_command(app);
    add_profile_command(app);
    add_export_command(app);
    add_ps_command(app);
    add_worker_command(app);
    add_bench_command(app);
  });
}
