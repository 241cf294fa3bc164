// `dynacomm bench`: every chosen strategy on the same cluster, data and link, taking turns
// (A A A B B B C C C A A A ...) so machine drift hits all alike; optionally the PyTorch
// DDP peer on the same links; per strategy the median iteration time with min-max, the
// planner's prediction, the ideal, and the speed-up over sequential; bench.json,
// bench.csv, bench.md and SVG charts in --out.
#include <memory>

#include "cli/bench/strategies.h"
#include "cli/cluster_job.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "plan/planners/planner.h"

namespace dynacomm::cli {

void add_bench_command(CLI::App& app) {
  auto f = std::make_shared<bench::BenchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Every strategy side by side on one cluster and link, taking turns; vs the "
      "ideal and PyTorch DDP");
  f->job.add_job_flags(cmd, /*bench_lists=*/true);
  f->job.add_timeout(cmd);
  f->job.add_worker_flags(cmd);
  f->job.add_ps_link_flag(cmd);
  f->job.add_arch_trials_flag(cmd);
  std::vector<std::string> known = plan::planner_names();
  known.push_back("all");
  cmd->add_option("--schedulers", f->schedulers,
                  "Comma-separated, or all:\n" + plan::planner_help())
      ->check(list_of_check(known))
      ->capture_default_str();
  cmd->add_option("--block", f->block, "Iterations per turn")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--settle", f->settle,
                  "Iterations at the start of each turn not measured (the first carries the "
                  "previous strategy's last push; a full-duplex turn after a phase-separated "
                  "one takes longer to reach its steady state)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--sweep-bandwidth", f->sweep,
                  "Bandwidths to run, both directions, e.g. 20mbit,100mbit,1gbit")
      ->check(bandwidth_list_check());
  cmd->add_option("--peers", f->peers, "Peers on the same links: ddp (needs --net netns)")
      ->check(CLI::IsMember({"ddp"}));
  cmd->add_option("--peer-script", f->peer_script, "The DDP peer script")->capture_default_str();
  cmd->add_option("--policies", f->policies,
                  "With --link-trace / --device-slowdown-trace: the re-planning policies to "
                  "compare, one job each on the same trace")
      ->check(list_of_check({"dynacomm", "dynacomm-static", "dynacomm-epoch", "oracle"}))
      ->capture_default_str();
  cmd->add_option("--out", f->out, "Results folder (default runs/bench-MODEL)");
  cmd->add_option("--repeat", f->repeat,
                  "With a --compress list: rounds of the codecs taking turns (A B C A B C), "
                  "one job each")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--past-target", f->past_target,
                "With --target-accuracy: each job trains on to the end of its --epochs (the "
                "final accuracy after the same epochs), the time to the target still said");
  add_worker_overrides(cmd, f->links, f->slowdowns, "With a --compress or --sync list: ");
  cmd->add_option("--threads", f->threads, "Compute threads per process (0: cores / workers)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->callback([f]() {
    // --iterations (a job flag) counts the measured iterations per strategy here.
    if (f->job.iterations > 0) f->iterations = static_cast<int>(f->job.iterations);
    bench::run_bench(*f);
  });
}

}  // namespace dynacomm::cli
