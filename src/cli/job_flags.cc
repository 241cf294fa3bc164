#include "cli/job_flags.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "base/error.h"
#include "cli/flag_checks.h"
#include "compress/compressor.h"
#include "compress/pull_codec.h"
#include "compress/push_codec.h"
#include "model/model_names.h"
#include "plan/model/quantity.h"
#include "plan/planners/planner.h"
#include "ps/sync_policy.h"

namespace dynacomm::cli {

namespace {
std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}
}  // namespace

namespace {
std::string compression_methods() {
  std::string out;
  for (const compress::MethodInfo& m : compress::methods())
    out += (out.empty() ? "" : ", ") + m.name + (m.parameter.empty() ? "" : ":" + m.parameter);
  return out;
}

// --sync: one mode, or (the bench's) a comma-separated list of them, one job each.
void add_sync_flag(CLI::App* cmd, std::string& sync, bool list) {
  const std::string modes =
      "bsp (every worker's gradients each iteration), ssp:S (up to S iterations ahead of the "
      "slowest), backup:B (each update from the first N-B workers' pushes), backup:auto (B "
      "chosen by the PS from the pushes' arrival times), asp (every push applied on arrival, "
      "the learning rate divided by its staleness; asp:dc=2: each gradient also corrected for "
      "the weights' moves since its read), local:H[,warmup=K] (H local steps between "
      "averagings, after K steps of BSP); docs/sync.md";
  cmd->add_option("--sync", sync,
                  list ? "Synchronisation modes to compare, comma-separated, one job each: " + modes
                       : "Synchronisation: " + modes)
      ->check([list](const std::string& spec) {
        try {
          for (const std::string& one : list ? split_sync_list(spec) : std::vector{spec})
            ps::parse_sync_policy(one);
        } catch (const InvalidInput& e) {
          return std::string(e.what());
        }
        return std::string();
      })
      ->capture_default_str();
}
}  // namespace

std::vector<std::string> split_arch_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string one; std::getline(in, one, ',');) {
    if (one.empty()) throw InvalidInput("--arch '" + list + "': an empty architecture in the list");
    out.push_back(one);
  }
  if (out.empty()) throw InvalidInput("--arch: none given");
  return out;
}

void JobFlags::set_arch(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  if (name != "ps" && name != "allreduce" && name != "gossip" && name != "auto")
    throw InvalidInput("--arch '" + spec +
                       "': known: ps, allreduce, allreduce:RULE, gossip, gossip:TOPOLOGY, auto");
  if (colon != std::string::npos) {
    const std::string rule = spec.substr(colon + 1);
    if (name == "gossip" && (rule == "ring" || rule == "torus")) {
      topology = rule;
    } else if (name == "allreduce" &&
               (rule == "planned" || rule == "ddp" || rule == "one" || rule == "layerwise")) {
      buckets = rule;
    } else {
      throw InvalidInput("--arch '" + spec +
                         "': allreduce:RULE (planned, ddp, one, layerwise) or gossip:TOPOLOGY "
                         "(ring, torus)");
    }
  }
  arch = name;
}

std::vector<std::string> split_sync_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string one; std::getline(in, one, ',');) {
    if (one.empty()) throw InvalidInput("--sync '" + list + "': an empty mode in the list");
    if (one.rfind("warmup=", 0) == 0 && !out.empty() && out.back().rfind("local:", 0) == 0 &&
        out.back().find(',') == std::string::npos) {
      out.back() += "," + one;  // local:H,warmup=K is one mode
      continue;
    }
    out.push_back(one);
  }
  if (out.empty()) throw InvalidInput("--sync: no mode given");
  return out;
}

void JobFlags::add_arch_flags(CLI::App* cmd, bool bench_lists) {
  const std::string arch_help =
      "ps (a parameter server, every scheduler and mode above), or allreduce (no PS: the "
      "workers sum their gradients over a ring on Gloo, in buckets overlapping backward), or "
      "gossip (D-PSGD: each worker averages its model with its neighbours' on --topology "
      "while it computes), or auto (the one predicted fastest from a profile on this machine "
      "and the links; train and bench; docs/architectures.md)";
  cmd->add_option("--arch", arch,
                  bench_lists
                      ? "Architectures to compare, comma-separated, one job each: " + arch_help +
                            "; allreduce:RULE takes --buckets RULE, gossip:TOPOLOGY --topology"
                      : "Architecture: " + arch_help)
      ->check([bench_lists](const std::string& spec) {
        try {
          for (const std::string& one : bench_lists ? split_arch_list(spec) : std::vector{spec}) {
            JobFlags probe;
            probe.set_arch(one);
            if (!bench_lists && probe.arch != one)
              throw InvalidInput(
                  "--arch " + one +
                  ": ps, allreduce, gossip or auto (--buckets, --topology set the rest)");
          }
        } catch (const InvalidInput& e) {
          return std::string(e.what());
        }
        return std::string();
      })
      ->capture_default_str();
  cmd->add_option("--buckets", buckets,
                  "allreduce: planned (the DynaComm push DP under the ring's measured cost), "
                  "ddp (PyTorch DDP's 25 MB buckets), one, or layerwise")
      ->check(CLI::IsMember({"planned", "ddp", "one", "layerwise"}))
      ->capture_default_str();
  cmd->add_option("--topology", topology,
                  "gossip: ring (two neighbours each) or torus (four, on a rows x cols grid)")
      ->check(CLI::IsMember({"ring", "torus"}))
      ->capture_default_str();
}

void JobFlags::add_job_flags(CLI::App* cmd, bool bench_lists) {
  cmd->add_option("--model", model, model_help())->transform(model_check())->capture_default_str();
  cmd->add_option("--workers", workers, "Number of edge workers")
      ->check(CLI::Range(1, kMaxWorkers))
      ->capture_default_str();
  cmd->add_option("--lr", lr, "Learning rate (applied on the PS)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--lr-schedule", lr_schedule, "constant or cosine")
      ->check(CLI::IsMember({"constant", "cosine"}))
      ->capture_default_str();
  cmd->add_option("--momentum", momentum, "SGD momentum, 0 to below 1")
      ->check(CLI::Range(0.0, 0.999999))
      ->capture_default_str();
  cmd->add_option("--weight-decay", weight_decay, "L2 weight decay (>= 0)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--batch", batch, "Mini-batch size per worker")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--epochs", epochs, "Passes over each worker's share of the data")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--iterations", iterations, "Stop after this many iterations (0: run the epochs)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--seed", seed, "Seed for weights, partitioning, shuffling, dropout")
      ->check(unsigned_check())
      ->capture_default_str();
  cmd->add_option("--partition", partition, "iid or noniid")
      ->check(CLI::IsMember({"iid", "noniid"}))
      ->capture_default_str();
  cmd->add_option("--shards", shards, "noniid: label shards per worker")
      ->check(CLI::Range(1, 10))
      ->capture_default_str();
  cmd->add_option("--train-samples", train_samples, "Use only the first N training images (0: all)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  cmd->add_option("--test-samples", test_samples, "Evaluate on the first N test images (0: all)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  cmd->add_option("--eval-every", eval_every,
                  "Evaluate on the test set every N iterations too, besides each epoch's end "
                  "(0: only there; rank 0, its time left out of time to accuracy)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--target-accuracy", target_accuracy,
                  "Stop the job once an evaluation reaches this test accuracy (0 to 1; 0: run "
                  "to the end); summary.json gives the time, iterations and bytes to it")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  std::vector<std::string> schedulers = plan::planner_names();
  schedulers.insert(schedulers.begin(), plan::kAutoScheduler);
  cmd->add_option("--scheduler", scheduler,
                  "Strategy:\n  auto          every strategy below planned from the warm-up's "
                  "measurements; the job runs the one predicted fastest\n" +
                      plan::planner_help())
      ->check(CLI::IsMember(schedulers))
      ->capture_default_str();
  const std::string compress_help =
      "METHOD[:PARAMETER][,ef|,noef], one of " + compression_methods() +
      " (docs/compression.md); ,ef adds error feedback, ,noef drops it; auto[:M1+M2...]: per "
      "unit, dense, fp16 or a listed method (topk:0.01 when none is listed), whichever the "
      "plan predicts fastest";
  cmd->add_option("--compress", compress,
                  bench_lists ? "Codecs to compare, comma-separated, one job each: " + compress_help
                              : "Compression of the pushes: " + compress_help)
      ->check([bench_lists](const std::string& spec) {
        try {
          if (bench_lists)
            compress::split_codec_list(spec);
          else
            compress::check_codec_spec(spec);
        } catch (const InvalidInput& e) {
          return std::string(e.what());
        }
        return std::string();
      })
      ->capture_default_str();
  cmd->add_option("--compress-pulls", compress_pulls,
                  "Compression of the pulls: none (float32), or one METHOD[:PARAMETER] of "
                  "--compress's without ,ef: the PS sends every worker the same encoded update "
                  "of each unit and keeps what it leaves out for the next (docs/compression.md)")
      ->check([](const std::string& spec) {
        try {
          compress::PullCodec check(spec);
        } catch (const InvalidInput& e) {
          return std::string(e.what());
        }
        return std::string();
      })
      ->capture_default_str();
  add_sync_flag(cmd, sync, bench_lists);
  add_arch_flags(cmd, bench_lists);
  cmd->add_option("--warmup", warmup,
                  "Warm-up iterations (sequential and layerwise plans in turn) measuring compute "
                  "and transfers; the scheduler plans after them (>= 1)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--replan", replan,
                  "Re-planning while training runs: dynamic (from online estimates, when the "
                  "gain is above --replan-threshold), static (once, after warm-up), epoch (at "
                  "every epoch's start, the paper's policy), oracle (at every change of "
                  "--link-trace, given its true figures)")
      ->check(CLI::IsMember({"dynamic", "static", "epoch", "oracle"}))
      ->capture_default_str();
  cmd->add_option("--replan-threshold", replan_threshold,
                  "dynamic: change plan when the new one is predicted faster by more than this "
                  "fraction")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  cmd->add_option("--replan-interval", replan_interval,
                  "dynamic: at most one plan change every this many iterations")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--rotation", rotation,
                  "Benchmarking: schedulers taking turns after warm-up, comma-separated")
      ->group("Benchmarking");
  cmd->add_option("--rotation-block", rotation_block, "Iterations per turn of --rotation")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str()
      ->group("Benchmarking");
}

void JobFlags::add_timeout(CLI::App* cmd) {
  cmd->add_option("--timeout", timeout, "How long any wait on a peer may take, e.g. 60s, 500ms")
      ->check(positive_duration_check())
      ->capture_default_str();
}

double JobFlags::timeout_ms() const { return plan::parse_duration_ms(timeout); }

void JobFlags::add_worker_flags(CLI::App* cmd) {
  cmd->add_option(
      "--data-dir", data_dir,
      "Fashion-MNIST IDX folder (default: Debian's package), or a folder of .npy "
      "arrays: train_images, train_labels, test_images, test_labels (docs/own-data.md)");
  cmd->add_option("--down", down, "Emulated downlink per worker, e.g. 100mbit")
      ->check(bandwidth_check())
      ->capture_default_str();
  cmd->add_option("--up", up, "Emulated uplink per worker (default: --down)")
      ->check(bandwidth_check());
  cmd->add_option("--latency", latency, "Emulated one-way latency, e.g. 10ms")
      ->check(duration_check())
      ->capture_default_str();
  cmd->add_option("--extra-overhead", extra_overhead, "Injected cost per message (what-if studies)")
      ->check(duration_check())
      ->capture_default_str();
  cmd->add_option("--net", net,
                  "user: links emulated in user space (token bucket + latency); netns: shaped "
                  "by the kernel (tbf) in network namespaces, latency still added in the "
                  "transport (needs root); none: the real network as it is, nothing added "
                  "(--down/--up are then only the planner's first guess; the warm-up "
                  "measures the link)")
      ->check(CLI::IsMember({"user", "netns", "none"}))
      ->capture_default_str();
  cmd->add_option("--device-slowdown", device_slowdown,
                  "Emulation: stretch every unit's compute by this factor (>= 1) to mimic a "
                  "slower edge device")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  cmd->add_option("--link-trace", link_trace,
                  "Replay this link trace while training runs (CSV time_s,down,up,latency"
                  "[,worker], or iteration,down,up,latency[,worker]; see traces/)");
  cmd->add_option("--device-slowdown-trace", device_slowdown_trace,
                  "Replay this device slowdown trace (CSV time_s,factor[,worker])");
  cmd->add_option("--trace-origin-ms", trace_origin_ms,
                  "Internal: the job's start on the steady clock, for replaying traces")
      ->group("");
  cmd->add_option("--cloud-link-file", cloud_link_file,
                  "Internal: the PS's cloud link shared by the workers (--ps-link, --net user)")
      ->group("");
}

void JobFlags::add_arch_trials_flag(CLI::App* cmd) {
  cmd->add_option("--arch-trials", arch_trials,
                  "--arch auto: each architecture predicted within 2x of the fastest runs a "
                  "trial job of this many iterations after its warm-up, and the fastest "
                  "measured runs the job (0: the fastest predicted, no trials)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
}

void JobFlags::add_ps_link_flag(CLI::App* cmd) {
  cmd->add_option("--ps-link", ps_link,
                  "The PS's own link, shared by every worker (--net netns: tbf; --net user: "
                  "one token bucket each way that the workers share): IN[,OUT], e.g. "
                  "1gbit: what all workers send the PS shares IN, what it sends them OUT "
                  "(default: IN); unlimited when not given. Traffic between workers "
                  "(--arch allreduce) does not cross it")
      ->check([](const std::string& spec) {
        try {
          const auto comma = spec.find(',');
          plan::parse_bandwidth_bps(spec.substr(0, comma));
          if (comma != std::string::npos) plan::parse_bandwidth_bps(spec.substr(comma + 1));
        } catch (const InvalidInput& e) {
          return std::string(e.what());
        }
        return std::string();
      });
}

std::vector<std::pair<std::string, std::string>> JobFlags::job_settings() const {
  return {{"--model", model},
          {"--workers", std::to_string(workers)},
          {"--lr", num(lr)},
          {"--lr-schedule", lr_schedule},
          {"--momentum", num(momentum)},
          {"--weight-decay", num(weight_decay)},
          {"--batch", std::to_string(batch)},
          {"--epochs", std::to_string(epochs)},
          {"--iterations", std::to_string(iterations)},
          {"--seed", std::to_string(seed)},
          {"--partition", partition},
          {"--shards", std::to_string(shards)},
          {"--train-samples", std::to_string(train_samples)},
          {"--test-samples", std::to_string(test_samples)},
          {"--eval-every", std::to_string(eval_every)},
          {"--target-accuracy", num(target_accuracy)},
          {"--scheduler", scheduler},
          {"--compress", compress},
          {"--compress-pulls", compress_pulls},
          {"--sync", sync},
          {"--arch", arch},
          {"--buckets", buckets},
          {"--topology", topology},
          {"--warmup", std::to_string(warmup)},
          {"--replan", replan},
          {"--replan-threshold", num(replan_threshold)},
          {"--replan-interval", std::to_string(replan_interval)},
          {"--rotation", rotation},
          {"--rotation-block", std::to_string(rotation_block)}};
}

std::vector<std::string> JobFlags::job_args() const {
  std::vector<std::string> a;
  for (const auto& [flag, value] : job_settings())
    if (!value.empty()) a.insert(a.end(), {flag, value});
  return a;
}

std::vector<std::string> JobFlags::worker_args() const {
  std::vector<std::string> a = {"--down",
                                down,
                                "--latency",
                                latency,
                                "--extra-overhead",
                                extra_overhead,
                                "--net",
                                net,
                                "--device-slowdown",
                                num(device_slowdown),
                                "--trace-origin-ms",
                                num(trace_origin_ms),
                                "--timeout",
                                timeout};
  if (!up.empty()) a.insert(a.end(), {"--up", up});
  if (!data_dir.empty()) a.insert(a.end(), {"--data-dir", data_dir});
  if (!link_trace.empty()) a.insert(a.end(), {"--link-trace", link_trace});
  if (!device_slowdown_trace.empty())
    a.insert(a.end(), {"--device-slowdown-trace", device_slowdown_trace});
  if (!cloud_link_file.empty()) a.insert(a.end(), {"--cloud-link-file", cloud_link_file});
  return a;
}

void JobFlags::adopt(const net::JobConfig& job, const CLI::App& given, const std::string& ps) {
  // What this command line said against the job's: the same text, or a refusal.
  for (const auto& [flag, value] : job_settings()) {
    const std::string* theirs = job.find(flag);
    if (theirs && given.count(flag) > 0 && *theirs != value)
      throw InvalidInput(flag + " " + value + " conflicts with the job's " + flag + " " + *theirs +
                         " (set by the PS at " + ps + "; leave the flag out to take it)");
  }
  // The job's settings through the same flags and checks as a command line's.
  CLI::App parse("the job's configuration");
  add_job_flags(&parse);
  std::vector<std::string> args;
  for (const auto& [flag, value] : job.settings)
    if (!value.empty() && parse.get_option_no_throw(flag)) args.insert(args.end(), {flag, value});
  std::reverse(args.begin(), args.end());  // CLI11 parses a vector from its back
  try {
    parse.parse(args);
  } catch (const CLI::ParseError& e) {
    throw InvalidInput("the job's configuration from the PS at " + ps + ": " + e.what());
  }
}

optim::SgdOptions JobFlags::sgd() const {
  optim::SgdOptions s;
  s.lr = lr;
  s.momentum = momentum;
  s.weight_decay = weight_decay;
  s.schedule = optim::parse_lr_schedule(lr_schedule);
  return s;
}

ps::ServerOptions JobFlags::server_options() const {
  ps::ServerOptions o;
  o.workers = workers;
  o.model = model;
  o.job.settings = job_settings();
  o.sgd = sgd();
  o.compression = compress;
  o.pull_compression = compress_pulls;
  o.sync = sync;
  o.seed = seed;
  o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(timeout_ms())));
  return o;
}

worker::WorkerOptions JobFlags::worker_options() const {
  worker::WorkerOptions o;
  o.workers = workers;
  o.model = model;
  o.batch = batch;
  o.epochs = epochs;
  o.iterations = iterations;
  o.seed = seed;
  o.data_dir = data_dir;
  o.partition.kind = data::parse_partition_kind(partition);
  o.partition.shards_per_device = shards;
  o.partition.seed = seed;
  o.train_samples = train_samples;
  o.test_samples = test_samples;
  o.eval_every = eval_every;
  o.target_accuracy = target_accuracy;
  o.scheduler = scheduler;
  o.compression = compress;
  o.pull_compression = compress_pulls;
  o.sync = sync;
  o.arch = arch;
  o.buckets = buckets;
  o.topology = topology;
  o.sgd = sgd();
  o.link.down_bps = plan::parse_bandwidth_bps(down);
  o.link.up_bps = up.empty() ? o.link.down_bps : plan::parse_bandwidth_bps(up);
  o.link.latency_ms = plan::parse_duration_ms(latency);
  o.extra_overhead_ms = plan::parse_duration_ms(extra_overhead);
  o.warmup = warmup;
  if (net != "user" && net != "netns" && net != "none")
    throw InvalidInput("--net '" + net + "': expected user, netns or none");
  o.kernel_shaped = net != "user";  // the transport paces nothing
  o.cloud_link = cloud_link_file;
  if (net == "none") {
    if (!link_trace.empty())
      throw InvalidInput(
          "--link-trace replays changes of an emulated or kernel-shaped link; "
          "with --net none the link is the real one");
    o.link.latency_ms = 0;  // nothing added: the real link's own latency is measured
  }
  o.device_slowdown = device_slowdown;
  o.rotation_block = rotation_block;
  std::stringstream names(rotation);
  for (std::string n; std::getline(names, n, ',');)
    if (!n.empty()) o.rotation.push_back(n);
  o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(timeout_ms())));
  o.replan = plan::parse_replan_mode(replan);
  o.replan_options.threshold = replan_threshold;
  o.replan_options.min_interval = replan_interval;
  try {
    if (!link_trace.empty()) o.link_trace = plan::load_link_trace(link_trace);
    if (o.link_trace.by_iteration && net == "netns")
      throw InvalidInput(link_trace +
                         ": keyed by iteration, which the emulated link follows (--net user); "
                         "the kernel's links (--net netns) change at times: give time_s");
  } catch (const InvalidInput& e) {
    throw InvalidInput(std::string("--link-trace: ") + e.what());
  }
  try {
    if (!device_slowdown_trace.empty())
      o.slowdown_trace = plan::load_slowdown_trace(device_slowdown_trace);
  } catch (const InvalidInput& e) {
    throw InvalidInput(std::string("--device-slowdown-trace: ") + e.what());
  }
  if (trace_origin_ms > 0)
    o.trace_origin = std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double, std::milli>(trace_origin_ms)));
  return o;
}

void Checkpointing::add_flags(CLI::App* cmd, bool dir_flag) {
  if (dir_flag) {
    cmd->add_option("--checkpoint-dir", dir, "Folder of the PS's checkpoints");
    cmd->add_flag("--resume", resume,
                  "Resume the job from the newest usable checkpoint in --checkpoint-dir");
  } else {
    cmd->add_option("--resume", dir,
                    "Resume a job from the newest usable checkpoint in this folder (a run "
                    "folder's checkpoints/); the job's flags must be those it ran with")
        ->each([this](const std::string&) { resume = true; });
  }
  cmd->add_option("--checkpoint-every", every,
                  "Checkpoint every N iterations (e.g. 50) or every duration (e.g. 2min)" +
                      std::string(dir_flag ? "" : ", into the run folder's checkpoints/"));
  cmd->add_option("--keep-checkpoints", keep, "How many of the newest checkpoints to keep")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
}

void Checkpointing::apply(ps::ServerOptions& o) const {
  o.checkpoint_dir = dir;
  o.checkpoint_keep = keep;
  o.resume = resume;
  if (every.empty()) return;
  if (every.find_first_not_of("0123456789") == std::string::npos) {
    o.checkpoint_every = std::stoll(every.substr(0, 12));
    if (o.checkpoint_every < 1) throw InvalidInput("--checkpoint-every: at least 1 iteration");
  } else {
    double ms;
    try {
      ms = plan::parse_duration_ms(every);
    } catch (const InvalidInput& e) {
      throw InvalidInput(std::string("--checkpoint-every: ") + e.what() +
                         " (or a count of iterations)");
    }
    if (!(ms >= 1)) throw InvalidInput("--checkpoint-every: a duration of at least 1 ms");
    o.checkpoint_period = std::chrono::milliseconds(static_cast<std::int64_t>(ms));
  }
}

std::vector<std::string> Checkpointing::ps_args() const {
  std::vector<std::string> a;
  if (!dir.empty()) a.insert(a.end(), {"--checkpoint-dir", dir});
  if (!every.empty()) a.insert(a.end(), {"--checkpoint-every", every});
  a.insert(a.end(), {"--keep-checkpoints", std::to_string(keep)});
  if (resume) a.push_back("--resume");
  return a;
}

}  // namespace dynacomm::cli
