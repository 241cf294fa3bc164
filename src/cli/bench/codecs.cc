#include "cli/bench/codecs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <thread>

#include "base/error.h"
#include "base/stats.h"
#include "cli/bench/common.h"
#include "cli/bench/ddp_peer.h"
#include "cli/cluster_job.h"
#include "cluster/local_cluster.h"
#include "compress/push_codec.h"
#include "report/run_folder.h"
#include "report/svg_chart.h"
#include "worker/metrics.h"

namespace dynacomm::cli::bench {

namespace {

// One job: a codec in one round.
struct CodecRun {
  std::string codec;
  RunSummary summary;
  std::vector<double> iteration_ms, bytes_up, bytes_down;  // its measured iterations
  report::Series accuracy;  // test accuracy (%) against training time (s, evaluations out)
};

// "topk:0.01,ef" -> "topk-0.01-ef": a folder name.
std::string folder_name(const std::string& codec) {
  std::string out;
  for (char c : codec) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '-';
  return out;
}

// The run's measured iterations (after the warm-up, the job's last left out: it ends with
// the final fetch) without their evaluations, and its evaluations against training time.
void read_run(const std::string& dir, CodecRun& run) {
  using namespace worker::metrics;
  const worker::MetricsTable m = worker::read_metrics_csv(dir + "/metrics.csv");
  const std::vector<double>& plan = m.at(kPlanId);
  const std::vector<double>& ms = m.at(kIterationMs);
  const std::vector<double>& eval = m.at(kEvalMs);
  const std::vector<double>& start = m.at(kStartS);
  const std::vector<double>& acc = m.at(kTestAccuracy);
  double evals_ms = 0;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const double e = std::isnan(eval[i]) ? 0 : eval[i];
    evals_ms += e;
    if (acc[i] >= 0) {
      run.accuracy.x.push_back(start[i] + (ms[i] - evals_ms) / 1e3);
      run.accuracy.y.push_back(100 * acc[i]);
    }
    if (plan[i] < 1 || i + 1 == ms.size() || !(ms[i] > 0)) continue;
    run.iteration_ms.push_back(ms[i] - e);
    run.bytes_up.push_back(m.at(kBytesUp)[i]);
    run.bytes_down.push_back(m.at(kBytesDown)[i]);
  }
}

// The DDP peer's evaluations as a run's: its accuracy against training time, the target's
// crossing (its bytes are not counted: left at 0, shown as "-") and its last accuracy.
void with_evaluations(const DdpRun& peer, double target, CodecRun& run) {
  for (const DdpRun::Evaluation& e : peer.evaluations) {
    run.accuracy.x.push_back(e.train_s);
    run.accuracy.y.push_back(100 * e.accuracy);
    run.summary.test_accuracy = e.accuracy;
  }
  run.summary.time_to_accuracy.target = target;
  if (!peer.reached) return;
  worker::TimeToAccuracy& t = run.summary.time_to_accuracy;
  t.iteration = peer.reached->iteration;
  t.accuracy = peer.reached->accuracy;
  t.wall_s = peer.reached->train_s;
  t.iterations = peer.reached->iteration + 1;
}

// Every round's runs of one codec, summed up.
struct CodecRow {
  std::string codec;
  Stats ms;
  double bytes_up = 0, bytes_down = 0, predicted_ms = 0, accuracy = 0;
  std::vector<std::string> choices;  // what the pushes were, per round (compressed)
  std::vector<worker::TimeToAccuracy> targets;  // per round
};

CodecRow row_of(const std::string& codec, const std::vector<CodecRun>& runs) {
  CodecRow r{codec, {}, 0, 0, 0, 0, {}, {}};
  std::vector<double> ms, up, down, predicted, accuracy;
  for (const CodecRun& run : runs) {
    if (run.codec != codec) continue;
    ms.insert(ms.end(), run.iteration_ms.begin(), run.iteration_ms.end());
    up.insert(up.end(), run.bytes_up.begin(), run.bytes_up.end());
    down.insert(down.end(), run.bytes_down.begin(), run.bytes_down.end());
    predicted.push_back(run.summary.predicted_slowest_ms);
    accuracy.push_back(run.summary.test_accuracy);
    if (!run.summary.codecs.empty()) r.choices.push_back(run.summary.codecs);
    if (run.summary.arch_choice.is_object()) r.choices.push_back("ran " + run.summary.arch);
    r.targets.push_back(run.summary.time_to_accuracy);
  }
  r.ms = stats_of(ms);
  // The mean: under local SGD most steps move nothing.
  r.bytes_up = up.empty() ? 0 : std::accumulate(up.begin(), up.end(), 0.0) / up.size();
  r.bytes_down = down.empty() ? 0 : std::accumulate(down.begin(), down.end(), 0.0) / down.size();
  r.predicted_ms = median(predicted);
  r.accuracy = median(accuracy);
  return r;
}

std::string range_cell(const std::vector<double>& v, const char* f) {
  if (v.empty()) return "-";
  const Stats s = stats_of(v);
  std::string out = fmt(f, s.median);
  if (v.size() > 1) out += " (" + fmt(f, s.min) + "-" + fmt(f, s.max) + ")";
  return out;
}

// The per-iteration table, or the time-to-accuracy one, with the rows as JSON.
std::string table_of(const std::vector<CodecRow>& rows, bool to_accuracy, double target,
                     const std::string& flag, nlohmann::json& json) {
  std::string md;
  if (!to_accuracy)
    md = "| " + flag +
         " | mean bytes up / iteration | mean bytes down / iteration | median ms (min-max) | "
         "predicted ms | measured / predicted | test accuracy | pushes (auto: ran) |\n"
         "|---|---|---|---|---|---|---|---|\n";
  else
    md = "| " + flag + " | reached " + fmt("%.2f", 100 * target) +
         "% | training s to it | iterations | MB up | MB down | median ms | final accuracy | "
         "pushes |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const CodecRow& r : rows) {
    std::string choice;
    for (const std::string& c : r.choices) choice += (choice.empty() ? "" : "; ") + c;
    nlohmann::json j = {{flag.substr(2), r.codec},
                        {"median_ms", r.ms.median},
                        {"min_ms", r.ms.min},
                        {"max_ms", r.ms.max},
                        {"iterations_measured", r.ms.values.size()},
                        {"bytes_up_per_iteration", r.bytes_up},
                        {"bytes_down_per_iteration", r.bytes_down},
                        {"predicted_ms", r.predicted_ms},
                        {"test_accuracy", r.accuracy},
                        {"pushes", choice}};
    if (r.predicted_ms > 0) j["measured_over_predicted"] = r.ms.median / r.predicted_ms;
    const std::string ms = fmt("%.1f", r.ms.median) + " (" + fmt("%.1f", r.ms.min) + "-" +
                           fmt("%.1f", r.ms.max) + ")";
    if (!to_accuracy) {
      md += "| `" + r.codec + "` | " + fmt("%.0f", r.bytes_up) + " | " + fmt("%.0f", r.bytes_down) +
            " | " + ms + " | " + fmt("%.1f", r.predicted_ms) + " | " +
            (r.predicted_ms > 0 ? fmt("%.2f", r.ms.median / r.predicted_ms) : "-") + " | " +
            fmt("%.2f%%", 100 * r.accuracy) + " | " + choice + " |\n";
      json.push_back(j);
      continue;
    }
    std::vector<double> wall, its, up, down;
    for (const worker::TimeToAccuracy& t : r.targets)
      if (t.reached()) {
        wall.push_back(t.wall_s);
        its.push_back(static_cast<double>(t.iterations));
        if (t.bytes_up > 0 || t.bytes_down > 0) {  // counted (not the DDP peer's)
          up.push_back(static_cast<double>(t.bytes_up) / 1e6);
          down.push_back(static_cast<double>(t.bytes_down) / 1e6);
        }
        j["time_to_accuracy"].push_back(to_json(t));
      }
    md += "| `" + r.codec + "` | " + std::to_string(wall.size()) + " of " +
          std::to_string(r.targets.size()) + " | " + range_cell(wall, "%.1f") + " | " +
          range_cell(its, "%.0f") + " | " + range_cell(up, "%.1f") + " | " +
          range_cell(down, "%.1f") + " | " + fmt("%.1f", r.ms.median) + " | " +
          fmt("%.2f%%", 100 * r.accuracy) + " | " + choice + " |\n";
    json.push_back(j);
  }
  return md;
}

// What the jobs differ in: the --compress list, the --sync one or the --arch one.
struct Axis {
  std::string flag, noun, stem;  // "--sync", "synchronisation mode", "sync"
  void (*set)(JobFlags&, const std::string&);
  std::vector<std::string> values;
};

Axis axis_of(const JobFlags& job) {
  const std::vector<std::string> codecs = compress::split_codec_list(job.compress);
  const std::vector<std::string> modes = split_sync_list(job.sync);
  const std::vector<std::string> archs = split_arch_list(job.arch);
  if ((codecs.size() > 1) + (modes.size() > 1) + (archs.size() > 1) > 1)
    throw InvalidInput("bench: one list of --compress, --sync or --arch, not two (one bench each)");
  // One architecture other than the PS runs as a list of one (its own jobs, --peers ddp).
  if (archs.size() > 1 ||
      (archs.size() == 1 && archs[0] != "ps" && codecs.size() <= 1 && modes.size() <= 1))
    return {"--arch", "architecture", "arch",
            [](JobFlags& j, const std::string& v) { j.set_arch(v); }, archs};
  if (modes.size() > 1)
    return {"--sync", "synchronisation mode", "sync",
            [](JobFlags& j, const std::string& v) { j.sync = v; }, modes};
  return {"--compress", "codec", "codecs",
          [](JobFlags& j, const std::string& v) { j.compress = v; }, codecs};
}

// The per-worker overrides as the flags say them ("" when none).
std::string overrides(const BenchFlags& f) {
  std::string out;
  for (const std::string& l : f.links) out += ", --link " + l;
  for (const std::string& s : f.slowdowns) out += ", --worker-slowdown " + s;
  return out;
}

// The flags of the codec bench's jobs, checked before anything starts.
JobFlags codec_job(const BenchFlags& f, bool to_accuracy, const Axis& axis) {
  JobFlags base = f.job;
  if (axis.stem != "arch") base.set_arch(base.arch);  // one, as allreduce:RULE or gossip:TOPOLOGY
  base.rotation.clear();
  if (!f.sweep.empty())
    throw InvalidInput(
        "bench: --sweep-bandwidth is for the schedulers' bench; the codecs' bench runs the "
        "link of --down/--up (one bench per link)");
  // The peer runs on the namespaces' links (per iteration, or with --target-accuracy on
  // Fashion-MNIST to the target, bench/peers/ddp.py --data).
  if (!f.peers.empty() && base.net != "netns")
    throw InvalidInput("bench: --peers needs --net netns (the peer runs on the kernel's links)");
  for (const std::string& p : f.peers)
    if (p != "ddp") throw InvalidInput("bench: unknown peer '" + p + "' (known: ddp)");
  if (!to_accuracy) {
    if (f.iterations < 1) throw InvalidInput("bench: --iterations must be at least 1");
    base.iterations = base.warmup + f.iterations + 1;  // the last is not measured
    base.epochs = 1000;
    base.eval_every = 0;
    if (base.test_samples == 0) base.test_samples = 1000;
  } else if (base.eval_every == 0) {
    base.eval_every = 50;
  }
  return base;
}

}  // namespace

bool codec_bench_requested(const BenchFlags& f) {
  return f.job.target_accuracy > 0 || compress::split_codec_list(f.job.compress).size() > 1 ||
         split_sync_list(f.job.sync).size() > 1 ||
         split_arch_list(f.job.arch) != std::vector<std::string>{"ps"};
}

void run_codec_bench(const BenchFlags& f) {
  const Axis axis = axis_of(f.job);
  const std::vector<std::string>& codecs = axis.values;
  const bool to_accuracy = f.job.target_accuracy > 0;
  if (f.repeat < 1) throw InvalidInput("bench: --repeat must be at least 1");
  const JobFlags base = codec_job(f, to_accuracy, axis);
  for (const std::string& c : codecs) {
    JobFlags j = base;
    axis.set(j, c);
    validate_job(j, per_worker_flags(j, f.links, f.slowdowns));
  }
  const std::string out = f.out.empty() ? "runs/bench-" + axis.stem + "-" + base.model : f.out;
  report::RunFolder folder(out);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = f.threads > 0 ? f.threads : std::max(1, cores / base.workers);
  cluster::install_interrupt_handler();
  std::unique_ptr<cluster::NetnsTopology> topology;
  if (base.net == "netns")
    topology = std::make_unique<cluster::NetnsTopology>(
        base.workers, link_rates(per_worker_flags(base, f.links, f.slowdowns)), cloud_rates(base));

  std::vector<CodecRun> runs;
  const std::size_t jobs = codecs.size() * static_cast<std::size_t>(f.repeat);
  for (int round = 1; round <= f.repeat; ++round)
    for (const std::string& codec : codecs) {
      JobFlags j = base;
      axis.set(j, codec);
      const std::string dir =
          out + "/" + folder_name(codec) + (f.repeat > 1 ? "-" + std::to_string(round) : "");
      const cluster::StatusStyle style{
          "bench " + codec + " (" + std::to_string(runs.size() + 1) + "/" + std::to_string(jobs) +
              ")",
          0, 0};
      CodecRun run{codec, {}, {}, {}, {}, {codec, {}, {}}};
      if (f.repeat > 1) run.accuracy.name += " (round " + std::to_string(round) + ")";
      JobControl control;
      control.stop_at_target = !f.past_target;
      run.summary = run_cluster_job(j, per_worker_flags(j, f.links, f.slowdowns), dir, threads,
                                    topology.get(), style, control);
      read_run(dir, run);
      runs.push_back(std::move(run));
      if (codec == codecs.back() && !f.peers.empty()) {  // PyTorch DDP on the same links
        CodecRun ddp{"pytorch-ddp", {}, {}, {}, {}, {"pytorch-ddp", {}, {}}};
        const std::string ddp_dir =
            out + "/pytorch-ddp" + (f.repeat > 1 ? "-" + std::to_string(round) : "");
        report::RunFolder made(ddp_dir);  // the peer writes into it
        JobFlags dj = base;
        dj.iterations = f.iterations;
        const DdpRun peer = run_ddp(f, dj, *topology, ddp_dir, threads);
        ddp.iteration_ms = peer.iterations.values;
        with_evaluations(peer, base.target_accuracy, ddp);
        runs.push_back(std::move(ddp));
      }
    }
  std::vector<std::string> row_names = codecs;
  if (!f.peers.empty()) row_names.push_back("pytorch-ddp");

  std::vector<CodecRow> rows;
  for (const std::string& codec : row_names) rows.push_back(row_of(codec, runs));
  nlohmann::json json = nlohmann::json::array();
  const worker::WorkerOptions wo = base.worker_options();
  std::string md =
      std::string("# dynacomm bench: ") +
      (axis.stem == "sync"   ? "synchronisation"
       : axis.stem == "arch" ? "architectures"
                             : "compression") +
      ", " + base.model + ", " + std::to_string(base.workers) + " workers, batch " +
      std::to_string(base.batch) + ", " + fmt("%.0f", wo.link.down_bps / 1e6) + " Mbit/s down / " +
      fmt("%.0f", wo.link.up_bps / 1e6) + " Mbit/s up, latency " + base.latency + ", links " +
      links_description(base.net) + ", scheduler " + base.scheduler +
      (base.compress_pulls == "none" ? std::string()
                                     : ", pulls --compress-pulls " + base.compress_pulls) +
      (axis.stem == "sync" ? ", --compress " + base.compress : ", --sync " + base.sync) +
      overrides(f) + "\n\n" + "One job per " + axis.noun + ", " + std::to_string(f.repeat) +
      " round(s) taking turns; bytes are worker 0's; predicted: the median of the mode's "
      "pace the PS reported from every worker's own prediction (BSP: the slowest's; "
      "docs/sync.md).\n\n";
  md += table_of(rows, to_accuracy, base.target_accuracy, axis.flag, json);
  report::BarChart bars{base.model + ": iteration time by " + axis.noun, "iteration time (ms)", {}};
  for (const CodecRow& r : rows) bars.bars.push_back({r.codec, r.ms.median, r.ms.min, r.ms.max, ""});
  folder.write_text(axis.stem + ".svg", report::render(bars));
  md += "\n![iteration time](" + axis.stem + ".svg)\n";
  if (to_accuracy) {
    report::LineChart chart{base.model + ": test accuracy against training time",
                            "training time (s, evaluations left out)", "test accuracy (%)", {}};
    chart.continuous_x = true;
    for (const CodecRun& run : runs) chart.series.push_back(run.accuracy);
    folder.write_text("accuracy.svg", report::render(chart));
    md += "![accuracy against time](accuracy.svg)\n";
  }
  std::string csv = axis.flag.substr(2) +
                    ",median_ms,min_ms,max_ms,bytes_up_per_iteration,bytes_down_per_iteration,"
                    "predicted_ms,test_accuracy\n";
  for (const CodecRow& r : rows)
    csv += "\"" + r.codec + "\"," + fmt("%.6g", r.ms.median) + "," + fmt("%.6g", r.ms.min) + "," +
           fmt("%.6g", r.ms.max) + "," + fmt("%.0f", r.bytes_up) + "," + fmt("%.0f", r.bytes_down) +
           "," + fmt("%.6g", r.predicted_ms) + "," + fmt("%.6g", r.accuracy) + "\n";
  folder.write_text(axis.stem + ".csv", csv);
  folder.write_json(axis.stem + ".json", json);
  folder.write_text(axis.stem + ".md", md);
  std::printf("%s", md.c_str());
  std::printf("results in %s (%s.md, .json, .csv, *.svg)\n", out.c_str(), axis.stem.c_str());
}

}  // namespace dynacomm::cli::bench
