#include "cli/bench/strategies.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "base/error.h"
#include "cli/bench/codecs.h"
#include "cli/bench/common.h"
#include "cli/bench/setting.h"
#include "cli/bench/trace_bench.h"
#include "cli/cluster_job.h"
#include "cluster/local_cluster.h"
#include "plan/planners/planner.h"

namespace dynacomm::cli::bench {

void run_bench(const BenchFlags& f) {
  if (codec_bench_requested(f)) return run_codec_bench(f);
  if (!f.links.empty() || !f.slowdowns.empty())
    throw InvalidInput(
        "bench: --link and --worker-slowdown are for the --compress and --sync benches (a list, "
        "or --target-accuracy); the schedulers' bench runs one link for all");
  if (!f.job.link_trace.empty() || !f.job.device_slowdown_trace.empty()) return run_trace_bench(f);
  JobFlags base = f.job;
  std::vector<std::string> schedulers =
      f.schedulers == "all" ? plan::planner_names() : split(f.schedulers);
  schedulers.erase(std::remove(schedulers.begin(), schedulers.end(), "ideal"), schedulers.end());
  if (schedulers.empty()) throw InvalidInput("bench: --schedulers names no scheduler");
  if (f.iterations < 1 || f.block < 1)
    throw InvalidInput("bench: --iterations and --block must be at least 1");
  if (f.settle < 0 || (f.block > 1 && f.settle >= f.block))
    throw InvalidInput("bench: --settle must be from 0 to --block - 1 (got " +
                       std::to_string(f.settle) + " with --block " + std::to_string(f.block) +
                       "): a turn needs an iteration to measure");
  for (const auto& p : f.peers)
    if (p != "ddp") throw InvalidInput("bench: unknown peer '" + p + "' (known: ddp)");
  if (!f.peers.empty() && base.net != "netns")
    throw InvalidInput(
        "bench: --peers ddp needs --net netns (the peer's traffic is shaped by "
        "the kernel; the user-space shaper is dynacomm's own transport)");
  std::vector<std::string> bandwidths = split(f.sweep);
  if (bandwidths.empty()) bandwidths.push_back(base.down);

  // A turn of one iteration is measured whole (--settle has nothing to skip).
  const int settle = f.block > 1 ? f.settle : 0;
  const int measured_per_turn = f.block - settle;
  const int turns = (f.iterations + measured_per_turn - 1) / measured_per_turn;
  base.rotation.clear();
  for (const auto& s : schedulers) base.rotation += (base.rotation.empty() ? "" : ",") + s;
  base.rotation_block = f.block;
  // One iteration more than the turns: the job's last iteration is not measured (below), and
  // without it the last strategy of the rotation would get one sample fewer than the others.
  base.iterations =
      base.warmup +
      static_cast<std::int64_t>(turns) * static_cast<std::int64_t>(schedulers.size()) * f.block + 1;
  base.epochs = 1000;  // --iterations ends the run
  if (base.test_samples == 0) base.test_samples = 1000;
  for (const std::string& bw : bandwidths) {  // every setting's flags, before anything starts
    JobFlags j = base;
    j.down = bw;
    if (!f.sweep.empty()) j.up = bw;
    validate_job(j, per_worker_flags(j, {}));
  }

  const std::string out = f.out.empty() ? "runs/bench-" + base.model : f.out;
  report::RunFolder folder(out);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = f.threads > 0 ? f.threads : std::max(1, cores / base.workers);
  cluster::install_interrupt_handler();

  BenchOutput output;
  std::string& md = output.md;
  md = "# dynacomm bench: " + base.model + ", " + std::to_string(base.workers) +
       " workers, batch " + std::to_string(base.batch) + ", links " + links_description(base.net) +
       ", latency " + base.latency + "\n\nStrategies take turns of " + std::to_string(f.block) +
       " iterations; the first " + std::to_string(settle) + " of each turn not measured.\n\n";
  for (const std::string& bw : bandwidths)
    bench_setting(f, base, bw, settle, turns * measured_per_turn, out, folder, threads, output);
  const nlohmann::json& rows = output.rows;
  const std::vector<std::vector<double>>& csv = output.csv;
  const std::vector<report::Series>& speedups = output.speedups;
  if (bandwidths.size() > 1) {
    report::LineChart chart{base.model + ": speed-up over sequential vs bandwidth",
                            "link bandwidth, both directions (Mbit/s)",
                            "speed-up (x sequential)",
                            {},
                            true};
    chart.series = speedups;
    folder.write_text("speedup.svg", report::render(chart));
    md += "![speed-up vs bandwidth](speedup.svg)\n";
  }
  folder.write_json("bench.json", rows);
  // bench.csv: one row per strategy and setting (the strategy is the JSON's; same order).
  std::string text =
      "scheduler,down_bps,up_bps,median_ms,min_ms,max_ms,predicted_ms,ideal_ms,"
      "speedup_vs_sequential\n";
  for (std::size_t i = 0; i < csv.size(); ++i) {
    text += rows[i]["scheduler"].get<std::string>();
    for (double v : csv[i]) text += "," + (std::isnan(v) ? std::string() : fmt("%.6g", v));
    text += "\n";
  }
  folder.write_text("bench.csv", text);
  folder.write_text("bench.md", md);
  std::printf("%s", md.c_str());
  std::printf("results in %s (bench.json, bench.csv, bench.md, *.svg)\n", out.c_str());
}

}  // namespace dynacomm::cli::bench
