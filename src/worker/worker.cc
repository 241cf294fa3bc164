#include "worker/worker.h"

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <tuple>
#include <utility>

#include "base/error.h"
#include "base/stats.h"
#include "base/timed_replay.h"
#include "compress/powersgd.h"
#include "compress/pull_codec.h"
#include "compress/push_codec.h"
#include "data/fashion_mnist.h"
#include "data/npy_dataset.h"
#include "model/model_names.h"
#include "net/connection.h"
#include "net/endpoint.h"
#include "optim/local_sgd.h"
#include "plan/model/gossip.h"
#include "plan/model/simulate.h"
#include "ps/sync_policy.h"
#include "report/run_folder.h"
#include "train/local_training.h"
#include "worker/calibration.h"
#include "worker/codec_state.h"
#include "worker/comm.h"
#include "worker/data_share.h"
#include "worker/estimates.h"
#include "worker/evaluation.h"
#include "worker/external_step.h"
#include "worker/job_plans.h"
#include "worker/join.h"
#include "worker/local_steps.h"
#include "worker/replanner.h"
#include "worker/rotation_log.h"
#include "worker/run_log.h"
#include "worker/stretch_tracker.h"
#include "worker/unit_times.h"

namespace dynacomm::worker {

namespace {
std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
}  // namespace

void WorkerOptions::validate() const {
  if (arch == "allreduce" || arch == "gossip") {
    validate_ring();
  } else if (arch == "ps") {
    if (ps.empty()) throw InvalidInput("worker: --ps is required");
    net::check_endpoint(ps, "worker: --ps");
    compress::PushCodec pushes(compression);  // InvalidInput naming what is wrong
  } else if (arch == "auto") {
    throw InvalidInput(
        "worker: --arch auto is chosen by `dynacomm train` or `bench` before the workers start; "
        "a worker takes ps, allreduce or gossip");
  } else {
    throw InvalidInput("worker: unknown --arch '" + arch + "' (known: ps, allreduce, gossip)");
  }
  if (workers < 1) throw InvalidInput("worker: --workers must be at least 1");
  if (rank < 0 || rank >= workers)
    throw InvalidInput("worker: --rank " + std::to_string(rank) + " is not in 0.." +
                       std::to_string(workers - 1));
  if (batch < 1 || epochs < 1 || iterations < 0 || threads < 1)
    throw InvalidInput("worker: batch, epochs, threads must be positive; iterations >= 0");
  if (warmup < 1)
    throw InvalidInput("worker: --warmup must be at least 1: plans are made from what it measures");
  if (eval_every < 0) throw InvalidInput("worker: --eval-every must be >= 0 (0: epochs' ends)");
  if (!(target_accuracy >= 0 && target_accuracy <= 1))
    throw InvalidInput("worker: --target-accuracy must be from 0 (none) to 1");
  if (extra_overhead_ms < 0) throw InvalidInput("worker: --extra-overhead must be >= 0");
  if (!(device_slowdown >= 1) || device_slowdown > 1000)
    throw InvalidInput("worker: --device-slowdown must be in 1..1000");
  if (!rotation.empty() && rotation_block < 1)
    throw InvalidInput("worker: the rotation block must be at least 1 iteration");
  const std::vector<std::string> known = plan::planner_names();
  if (scheduler != plan::kAutoScheduler &&
      std::find(known.begin(), known.end(), scheduler) == known.end())
    throw InvalidInput("worker: unknown scheduler '" + scheduler + "' (known: auto, " +
                       join(known) + ")");
  for (const auto& s : rotation)
    if (std::find(known.begin(), known.end(), s) == known.end())
      throw InvalidInput("worker: unknown scheduler '" + s +
                         "' in --rotation (dynacomm plan --help lists them)");
  compress::PullCodec pulls(pull_compression);  // InvalidInput naming what is wrong
  link.validate();
  planner.validate();
  replan_options.validate();
  estimator.validate();
  link_trace.check_workers(workers);
  slowdown_trace.check_workers(workers);
  if (external) {  // the caller's module and batches (worker/external_step.h)
    if (arch != "ps") throw InvalidInput("worker: a model trained from Python takes --arch ps");
    if (external->steps_per_epoch() < 1)
      throw InvalidInput("worker: steps per epoch must be at least 1");
    return;
  }
  if (model.rfind("python:", 0) == 0)
    throw InvalidInput("worker: model '" + model +
                       "' is trained from Python (dynacomm.Worker); the binary's workers take "
                       "a built-in model or a TorchScript file");
  try {
    data::check_dataset_dir(data_dir);
  } catch (const InvalidInput& e) {
    throw InvalidInput(std::string("worker: --data-dir: ") + e.what());
  }
}

void WorkerOptions::check_model_fits_data() const {
  if (model::is_model_file(model))
    (void)model_for(*this, data::load_dataset(data_dir, data::Split::kTrain));
}

void WorkerOptions::validate_ring() const {
  const auto colon = ring_store.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == ring_store.size() ||
      ring_store.size() - colon - 1 > 5 ||
      ring_store.find_first_not_of("0123456789", colon + 1) != std::string::npos ||
      std::stol(ring_store.substr(colon + 1)) > 65535)
    throw InvalidInput("worker: --ring '" + ring_store + "': expected HOST:PORT (rank 0's store)");
  if (ring_host.empty()) throw InvalidInput("worker: --ring-host: this worker's address is empty");
  if (buckets != "planned" && buckets != "ddp" && buckets != "one" && buckets != "layerwise")
    throw InvalidInput("worker: unknown --buckets '" + buckets +
                       "' (known: planned, ddp, one, layerwise)");
  plan::parse_topology(topology);  // InvalidInput naming the known ones
  const std::string the = "worker: --arch " + arch;
  const bool summed = compression == "fp16" || compress::powersgd_rank(compression) ||
                      compress::sums_selected_values(compression);
  if (summed) compress::check_codec_spec(compression);  // InvalidInput naming what is wrong
  if (summed && arch != "allreduce")
    throw InvalidInput(the + " sends dense float32 models; --compress " + compression +
                       " is for --arch allreduce" +
                       (compress::powersgd_rank(compression) ? "" : " and --arch ps"));
  if (pull_compression != "none" || (compression != "none" && !summed))
    throw InvalidInput(the +
                       (arch == "allreduce"
                            ? " sums dense values, float32 or (--compress fp16) half, "
                              "PowerSGD's factors (--compress powersgd:R) or shared-seed "
                              "random-k's values (--compress randomk:R); "
                            : " sends dense float32 models; ") +
                       "--compress " + compression + " and --compress-pulls are for --arch ps");
  if (sync != "bsp")
    throw InvalidInput(the + " is synchronous: --sync " + sync + " is for --arch ps");
  if (!rotation.empty()) throw InvalidInput(the + " takes no scheduler rotation");
  if (device_slowdown != 1 || !slowdown_trace.points.empty())
    throw InvalidInput(the + " does not emulate a slower device (yet)");
  if (!link_trace.points.empty() && !kernel_shaped && !link_trace.by_iteration)
    throw InvalidInput(the +
                       " follows a --link-trace in seconds only as the kernel's links do (--net "
                       "netns); the user-space emulation follows one keyed by iteration");
}

namespace {

// The model's units as a profile without times (the warm-up measures them).
plan::ModelProfile unit_profile(const WorkerOptions& o, const model::Model& model) {
  plan::ModelProfile p;
  p.model = o.model;
  p.batch = o.batch;
  p.input = model.options().input.str();
  for (const auto& u : model.units()) p.units.push_back({u.name, u.params, u.bytes(), 0, 0});
  return p;
}

// With compressed pulls (compress/pull_codec.h): each unit's pull as its atoms' updates
// (the steady state: a copy goes only to a worker that holds none).
void with_pull_bytes(const WorkerOptions& o, const plan::Slicing& slicing,
                     plan::ModelProfile& profile) {
  const compress::PullCodec pulls(o.pull_compression, o.seed);
  if (pulls.dense()) return;
  for (std::size_t u = 0; u < profile.units.size(); ++u) {
    std::int64_t bytes = 0;
    for (int a = slicing.first_atom[u]; a < slicing.first_atom[u + 1]; ++a)
      bytes += static_cast<std::int64_t>(
          pulls.delta_bytes(slicing.atoms[static_cast<std::size_t>(a)].params, 0));
    profile.units[u].pull_bytes = bytes;
  }
}

// What the PS may send this worker: pull replies of the job's atoms, float32 or, with
// compressed pulls, each atom a copy or an update.
net::WireLimits worker_limits(const WorkerOptions& o, const plan::Slicing& slicing) {
  net::WireLimits limits{{}, o.workers - 1, 64 * 1024};
  std::vector<std::int64_t> floats;
  for (const plan::Atom& a : slicing.atoms) {
    limits.unit_bytes.push_back(a.bytes);
    floats.push_back(a.params);
  }
  limits.pull_bytes = compress::PullCodec(o.pull_compression, o.seed).reply_table(floats);
  return limits;
}

JobShape job_shape(const WorkerOptions& o, const plan::Slicing& slicing, std::int64_t total) {
  JobShape shape{{}, total, o.warmup, 0};
  for (const auto& a : slicing.atoms) shape.atom_bytes.push_back(a.bytes);
  // Traced iterations: a few after warm-up, or one whole turn of a rotation.
  shape.trace_count =
      std::max<std::int64_t>(o.trace_iterations, static_cast<std::int64_t>(o.rotation.size()) *
                                                     std::max(1, o.rotation_block));
  return shape;
}

std::vector<std::string> names_of(const model::Model& model) {
  std::vector<std::string> names;
  for (const auto& u : model.units()) names.push_back(u.name);
  return names;
}

CommOptions comm_options(const WorkerOptions& o, const Joined& joined,
                         const plan::Slicing& slicing) {
  CommOptions co;
  co.rank = o.rank;
  co.down_bps = o.kernel_shaped ? 0 : o.link.down_bps;  // 0: no pacing in the transport
  co.up_bps = o.kernel_shaped ? 0 : o.link.up_bps;
  co.latency_ms = o.link.latency_ms;
  co.extra_overhead_ms = o.extra_overhead_ms;
  co.cloud_link = o.cloud_link;
  co.transport_one_way_ms = joined.rtt_ms / 2;
  co.ps_clock_offset_ms = joined.ps_clock_offset_ms;
  co.device_slowdown = o.device_slowdown;
  co.timeout = o.timeout;
  co.slicing = slicing;
  co.compression = o.compression;
  co.pull_compression = o.pull_compression;
  co.momentum = o.sgd.momentum;
  co.catch_up = ps::is_backup(o.sync);  // a dropped worker goes on from the newest
  co.seed = o.seed;
  return co;
}

// A link trace keyed by iteration: its rows for `it`, as the iteration starts.
void follow_link_rows(const WorkerOptions& o, Comm& comm,
                      const std::vector<plan::LinkTracePoint>& link_rows, std::int64_t it,
                      std::atomic<int>& link_row) {
  if (!o.link_trace.by_iteration) return;
  for (std::size_t i = static_cast<std::size_t>(link_row.load() + 1);
       i < link_rows.size() && link_rows[i].iteration <= it; ++i) {
    const plan::LinkTracePoint& p = link_rows[i];
    comm.set_link(o.kernel_shaped ? 0 : p.down_bps, o.kernel_shaped ? 0 : p.up_bps, p.latency_ms);
    link_row = static_cast<int>(i);
  }
}

// The traces' steps against the emulation (a link trace in seconds); `link_row` follows
// the link trace's row in force.
std::vector<TimedReplay::Step> trace_steps(const WorkerOptions& o, Comm& comm,
                                           const std::vector<plan::LinkTracePoint>& link_rows,
                                           std::atomic<int>& link_row) {
  std::vector<TimedReplay::Step> steps;
  for (std::size_t i = 0; i < link_rows.size() && !o.link_trace.by_iteration; ++i) {
    const plan::LinkTracePoint p = link_rows[i];
    steps.push_back({p.time_s, [&comm, &link_row, p, i, kernel = o.kernel_shaped] {
                       comm.set_link(kernel ? 0 : p.down_bps, kernel ? 0 : p.up_bps, p.latency_ms);
                       link_row = static_cast<int>(i);
                     }});
  }
  for (const plan::SlowdownTracePoint& p : o.slowdown_trace.for_worker(o.rank))
    steps.push_back({p.time_s, [&comm, f = p.factor] { comm.set_device_slowdown(f); }});
  return steps;
}

GateMarks marks_of(const Comm& comm, Clock::time_point forward_end) {
  return {comm.gate_called, comm.gate_passed, comm.grads_ready, forward_end,
          comm.cpu_called,  comm.cpu_passed,  comm.cpu_ready,   comm.cpu_forward_end};
}

// One mini-batch (order[begin, begin + batch)) through the model: forward (each unit
// waiting at its gate), a full-duplex plan's pulls of the next round (`next`, or none) as
// backward starts, backward. The loss, and when the forward pass ended.
std::pair<double, Clock::time_point> forward_backward(const WorkerOptions& o, std::int64_t it,
                                                      model::Model& model,
                                                      const data::Dataset& train,
                                                      const std::vector<std::int64_t>& order,
                                                      std::int64_t begin, Comm& comm,
                                                      const plan::Plan* next) {
  torch::Tensor loss = o.external ? o.external->loss(model, it)
                                  : train::batch_loss(model, train, order, begin, o.batch);
  const auto forward_end = comm.forward_done();
  // (A re-plan adopted at the next boundary changes its pushes; its pulls follow from t+2.)
  if (next) comm.prefetch(comm.next_iteration(), *next);
  loss.backward();
  const double value = loss.item<double>();
  if (o.external) o.external->step_done(it, value);
  return {value, forward_end};
}

// Everything one iteration's measurements feed: the warm-up's calibration, the online
// estimators, the stretch tracker, a rotation's log and the trace.
struct Measurements {
  const WorkerOptions& o;
  Clock::time_point started;
  Estimators& estimators;
  Calibration& calibration;
  StretchTracker& tracker;
  RotationLog& rotation;
  RunLog& log;
  plan::LinkProfile& given;

  void transfers(std::int64_t it, Comm& comm) {
    const std::vector<plan::TransferSample> updates = comm.take_aggregations();
    if (it < o.warmup) calibration.add_updates(updates);
    for (const plan::TransferSample& u : updates) {
      estimators.aggregation.add(it, u.bytes, u.ms);
      if (!o.rotation.empty()) rotation.updates.push_back({it, static_cast<double>(u.bytes), u.ms});
    }
    // Compressed pushes: the codecs' times as training meets them, for the next planning.
    estimators.codec_times.add(comm.take_push_costs());
    estimators.codec_times.apply(estimators.codecs.options);
    for (const auto& e : comm.take_link_events()) {
      // Busy while it was served: the service time before its end.
      tracker.add_busy(
          {ms_between(started, e.end) - e.service_ms, ms_between(started, e.end), e.up});
      if (!o.rotation.empty())
        rotation.transfers.push_back(
            {e.iteration, e.up, static_cast<double>(e.bytes), e.service_ms});
      calibration.add_transfer(e.iteration, e.up, static_cast<double>(e.bytes), e.service_ms);
      (e.up ? estimators.up : estimators.down)
          .add(e.iteration, static_cast<double>(e.bytes), e.service_ms);
      log.transfer(e);
    }
  }

  // The iteration's record `r` completed: when it started, its unit times (logged), its
  // compute and the stretch the estimates held.
  IterationRecord record(std::int64_t it, IterationRecord r, const Comm& comm,
                         Clock::time_point forward_end, Clock::time_point iteration_start,
                         const std::vector<std::string>& unit_names) {
    const UnitTimes times = unit_times(marks_of(comm, forward_end));
    log.units(it, r.plan_id, unit_names, times);
    r.start_s =
        std::chrono::duration<double>(iteration_start - o.trace_origin.value_or(started)).count();
    std::tie(r.compute_ms, r.compute_cpu_ms) = units(it, times, comm.cpu_valid);
    if (const auto s = tracker.stretch_at(it)) std::tie(r.stretch_down, r.stretch_up) = *s;
    return r;
  }

  // Compute-only unit times; returns the iteration's compute (wall, CPU: 0 when unknown).
  std::pair<double, double> units(std::int64_t it, const UnitTimes& t, bool cpu_valid) {
    if (it < o.warmup) calibration.add_units(it, t, cpu_valid);
    tracker.open(it, cpu_valid, t, started);
    tracker.count(it, given);
    // Past the warm-up: at idle-link speed when the stretch was fitted (stretch_tracker.h).
    const bool idle_speed = it >= o.warmup && tracker.idle_wall_per_cpu() > 0 && cpu_valid;
    const std::vector<double> forward =
        idle_speed ? tracker.at_idle_speed(t.forward_cpu) : t.forward_ms;
    const std::vector<double> backward =
        idle_speed ? tracker.at_idle_speed(t.backward_cpu) : t.backward_ms;
    if (!o.rotation.empty()) {
      rotation.compute.push_back({it, forward, backward});
      if (it > 0) rotation.wall.push_back({it, t.forward_ms, t.backward_ms});  // not the cold one
    }
    estimators.compute.add(it, forward, backward);
    return {t.compute_ms, cpu_valid ? t.compute_cpu_ms : 0};
  }
};

IterationRecord record_of(std::int64_t it, int epoch, double loss, const Comm& comm,
                          const plan::Plan& plan, int plan_id, const Replanner::Change& change) {
  IterationRecord r;
  r.iteration = it;
  r.epoch = epoch;
  r.loss = loss;
  std::tie(r.bytes_up, r.bytes_down) = comm.bytes_moved();
  r.plan_id = plan_id;
  r.pull_segments = plan.pull.size();
  r.push_segments = plan.push.size();
  r.plan_change = change.why;
  r.predicted_gain_ms = change.gain_ms;
  return r;
}

// Rank 0 evaluates after iteration `it` (not the job's last: that one after its update):
// at an epoch's end, and every eval_every iterations.
bool evaluates_after(const WorkerOptions& o, std::int64_t it, bool epoch_end, std::int64_t total) {
  if (o.rank != 0 || it + 1 >= total || o.external) return false;  // external: the caller's
  return epoch_end || (o.eval_every > 0 && (it + 1) % o.eval_every == 0);
}

// Rank 0 after the step of iteration `it` (the PS's `round`), with the job's weights, not
// the device's: the test set's accuracy when due (the last epoch's comes after the final
// update, outside its time), and model.pt once the model holds the weights of the PS's
// newest checkpoint (the step of its iteration; one after it when the news came late), with
// this worker's batch-norm statistics, which no PS checkpoint has.
void rank0_after_step(const WorkerOptions& o, std::int64_t it, std::int64_t round, bool epoch_end,
                      std::int64_t total, const Comm& comm, LocalSteps& locals, model::Model& model,
                      const data::Dataset* test, RunLog& log, WorkerResult& result) {
  if (evaluates_after(o, it, epoch_end, total))
    locals.with_round_weights(
        [&] { evaluate_now(model, *test, o, log, result, false, epoch_end, false); });
  const std::int64_t checkpoint = comm.newest_checkpoint();
  if (o.rank != 0 || o.out_dir.empty() || o.external ||
      checkpoint <= result.checkpoint_model_iteration || checkpoint > round)
    return;
  result.checkpoint_model_iteration = round;
  const auto began = Clock::now();
  try {  // like the PS's checkpoint: a full disk does not stop the job
    locals.with_round_weights(
        [&] { report::RunFolder(o.out_dir).write_text("model.pt", model.export_pt()); });
  } catch (const Error& e) {
    log.bar_finish(std::string("model.pt of iteration ") + std::to_string(round) +
                   " not written: " + e.what());
  }
  // Booked like an evaluation: the iteration's time is training's alone.
  if (!result.iterations.empty())
    result.iterations.back().eval_ms += ms_between(began, Clock::now());
}

// Rank 0 ends the job: the final parameters, then the test set's accuracy of them. The last
// iteration's time ends when its update is in, with the fetch. Interrupted: the weights of
// the last iteration it pulled.
void finish_job(Comm& comm, model::Model& model, const data::Dataset* test, const WorkerOptions& o,
                std::int64_t iterations, Clock::time_point last_start, RunLog& log,
                WorkerResult& result) {
  if (result.interrupted_at < 0) {
    comm.fetch_all(iterations);
    if (!result.iterations.empty())  // none: it rejoined a job that had just ended
      result.iterations.back().ms = ms_between(last_start, Clock::now());
  }
  result.final_weights = model.flat_params();
  if (!test) return;  // a caller's module (external_step.h): it holds them, and evaluates
  result.state_dict = model.export_pt();
  evaluate_now(model, *test, o, log, result, /*final=*/true, false, false);
}

// Joins the job (rank 0 sends the initial parameters); a worker joining a running job
// warms up from where it starts, and says so.
// Under local SGD the PS counts rounds: the worker begins at the round's first step, and
// warms up over --warmup rounds (o.warmup becomes the step they end before): its steps
// between exchanges measure the compute and its exchanges the links, where a BSP start
// of as many steps would exchange at every one (local:8 moved 7.78x fewer bytes per
// sample than BSP with one, of its bound of 8).
Joined join_and_say(net::Connection& conn, WorkerOptions& o, const JobShape& shape,
                    const model::Model& model, std::int64_t steps_per_epoch,
                    const LocalSteps& locals, std::ostream& progress) {
  Joined joined =
      join_job(conn, o, shape, o.rank == 0 ? model.flat_params() : std::vector<float>{});
  const std::int64_t round = joined.start_iteration, first = locals.first_step(round);
  joined.start_iteration = first;
  o.warmup = static_cast<int>(locals.first_step((first > 0 ? round : 0) + o.warmup));
  if (joined.job_running && first > 0) {
    progress << "worker " << o.rank << ": joined the running job at iteration " << first
             << " (epoch " << first / steps_per_epoch + 1 << ")\n";
  }
  return joined;
}

// Where the worker keeps its compression state ("": dense pushes, or no run folder).
std::string codec_state_file(const WorkerOptions& o) {
  return o.compression == "none" || o.out_dir.empty() ? "" : codec_state_path(o.out_dir, o.rank);
}

// The codec's state the worker saved when it stopped before `first`, taken up; returns
// where it keeps it ("": dense pushes, or no run folder: nothing to keep).
std::string take_up_codec_state(const WorkerOptions& o, std::int64_t first, Comm& comm,
                                std::ostream& progress) {
  const std::string path = codec_state_file(o);
  if (auto s = codec_state_for(path, o.compression, first, o.rank, progress))
    comm.set_codec_state(*s);
  return path;
}

// Under BSP the PS may end the job a round before this worker's last iteration (the others
// stopped first: ps/server.cc): the codec's state before each iteration, into the memory
// of the one before.
void snapshot_codec_state(const Comm& comm, std::int64_t it, SavedCodecState::At& before_last) {
  comm.codec_state_into(before_last.state);
  before_last.next_iteration = it;
}

// Saves the codec's state to take up again where it stopped (path "": nothing to keep), and
// the one before its last iteration when there is one.
void keep_codec_state(const std::string& path, const WorkerOptions& o, std::int64_t next,
                      const Comm& comm, SavedCodecState::At& before_last) {
  if (path.empty()) return;
  SavedCodecState saved{o.compression, {{next, comm.codec_state()}}};
  if (before_last.next_iteration >= 0 && before_last.next_iteration != next)
    saved.states.push_back(std::move(before_last));
  save_codec_state(path, saved);
}

// A result to fill: what the job's share and the hello said.
WorkerResult joined_result(const DataShare& share, const Joined& joined) {
  WorkerResult result;
  result.steps_per_epoch = share.steps_per_epoch;
  result.transport_rtt_ms = joined.rtt_ms;
  result.ps_clock_offset_ms = joined.ps_clock_offset_ms;
  return result;
}

// With --compress: what each unit's pushes cost encoded, measured on the last warm-up
// iteration's gradients (still in the model: the next backward has not run); with
// --compress auto, each unit's method chosen from those costs (plan/planners/codec_choice.h,
// with the phase-separated optimum, which is fast to search) and set on `comm`. Said once.
PushCodecs push_codecs(const WorkerOptions& o, const model::Model& model, Comm& comm,
                       const plan::Slicing& slicing, const plan::ModelProfile& profile,
                       const plan::LinkProfile& link, const plan::PlannerOptions& planner,
                       std::int64_t it, std::ostream& progress) {
  if (o.compression == "none") return {};
  const bool mixed = comm.push_codec().mixed();
  std::vector<const float*> grads;
  for (int u = 0; u < model.num_units(); ++u) grads.push_back(model.grads(u));
  const std::vector<std::string> methods =
      mixed ? comm.push_codec().names() : std::vector<std::string>{"none", o.compression};
  PushCodecs c{measure_codecs(slicing, grads, methods, 3, it), {}};
  if (mixed) {
    // Judged with the scheduler the job runs (full duplex may hide what a phase-separated
    // plan would gain); dense stays unless compression beats it by more than the
    // re-planning threshold, the model's own noise margin.
    const std::vector<std::string> planned = planned_schedulers(o);
    const std::string judge =
        std::find(planned.begin(), planned.end(), "dynacomm-fd") != planned.end() ? "dynacomm-fd"
                                                                                  : planned.front();
    c.choice = plan::choose_job_codecs(
                   profile, c.options, plan::plan_and_predict("dynacomm", link, planner),
                   plan::plan_and_predict(judge, link, planner), {}, o.replan_options.threshold)
                   .choice;
    c.choose = true;
    comm.set_push_methods(c.choice);
  } else {
    c.choice.assign(c.options.size(), 1);
  }
  progress << "worker " << o.rank << ": pushes " << (mixed ? "chosen per unit: " : "with ")
           << describe_choice(c) << " (measured on this device)\n";
  return c;
}

// What the warm-up measured and the first plans made from it, into the result.
void record_first_plans(const WorkerOptions& o, const Calibrated& c,
                        const plan::ModelProfile& profile, WorkerResult& result) {
  result.measured_down = c.measured_down;
  result.measured_up = c.measured_up;
  result.compute_stretch = c.compute_stretch;
  result.aggregation = c.aggregation;
  result.planned_link = c.link;
  result.plan = result.plans[0].plan;
  result.profile = profile;
  result.predicted_ms = result.plans[0].predicted_ms;
  result.predicted_sequential_ms =
      plan::simulate(profile, c.link, plan::make_plan("sequential", profile, c.link, o.planner));
  result.ideal_ms = plan::ideal_ms(profile, c.link);
}

// The PS's word on the previous iteration, with this iteration's parameters (all in by
// now, after the forward pass): the mode's predicted pace from every worker's prediction
// (ps/sync_policy.h), and under BSP's barrier (`barrier`) the slowest worker's compute,
// whose pace this worker's went at.
void follow_the_barrier(std::int64_t it, std::int64_t previous, const Comm& comm, bool barrier,
                        Estimators& estimators, Calibration& calibration, RotationLog& rotation,
                        WorkerResult& result) {
  if (it == 0) return;
  if (const std::optional<double> f =
          barrier ? comm.slowest_compute_factor(previous) : std::nullopt) {
    estimators.compute.pace(it - 1, *f);
    calibration.pace(it - 1, *f);
    if (!rotation.compute.empty() && rotation.compute.back().iteration == it - 1)
      rotation.compute.back().pace = *f;
  }
  if (!result.iterations.empty() && result.iterations.back().iteration == it - 1)
    if (const std::optional<double> p = comm.slowest_predicted_ms(previous))
      result.iterations.back().predicted_slowest_ms = *p;
}

// An epoch's order of this rank's samples (the same as it was, on a rejoin), said.
std::vector<std::int64_t> begin_epoch(const WorkerOptions& o, const DataShare& share, int epoch,
                                      std::int64_t it, RunLog& log) {
  std::vector<std::int64_t> order = epoch_order(o, share, epoch);
  log.epoch_begins(epoch, std::min(share.steps_per_epoch, share.total - it), share.steps_per_epoch);
  return order;
}

void check_loss(const WorkerOptions& o, std::int64_t it, double loss) {
  if (!std::isfinite(loss))
    throw Error("worker " + std::to_string(o.rank) + ": training diverged at iteration " +
                std::to_string(it) + " (loss " + std::to_string(loss) + ")");
}

// The end of the run: the estimates then, and the iterations' medians.
void summarise(const WorkerOptions& o, const Estimators& est, const plan::ModelProfile& profile,
               const plan::LinkProfile& given, double latency_ms, WorkerResult& result) {
  if (!result.plans.empty() && !est.compute.empty()) {
    const Replanned last = estimate(est, profile, given, latency_ms);
    result.final_profile = last.profile;
    result.final_link = last.link;
    result.final_aggregation = est.aggregation.estimate();
    result.ideal_final_ms = plan::ideal_ms(last.profile, last.link);
    for (auto& p : result.plans) {
      p.predicted_final_ms = plan::predict_ms(last.profile, last.link, p.plan);
      p.ideal_final_ms = plan::ideal_ms(last.profile, last.link, p.plan);
    }
  }
  std::vector<double> times, slowest, sequential;
  const std::optional<optim::LocalSgd> local = optim::LocalSgd::parse(o.sync);
  const bool steps_are_rounds = !local || local->steps() == 1;  // else none pulls and pushes
  for (const auto& r : result.iterations) {
    // The warm-up alternates sequential (even) and layerwise (odd); 0 is cold.
    if (steps_are_rounds && r.iteration < o.warmup && r.iteration % 2 == 0 && r.iteration > 0 &&
        r.ms > 0)
      sequential.push_back(r.ms);
    if (r.iteration >= o.warmup && r.ms > 0) times.push_back(r.ms - r.eval_ms);
    if (r.iteration >= o.warmup && r.predicted_slowest_ms > 0)
      slowest.push_back(r.predicted_slowest_ms);
  }
  result.median_iteration_ms = median(times);
  result.measured_sequential_ms = sequential.empty() ? 0 : median(sequential);
  result.measured_sequential_iterations = static_cast<int>(sequential.size());
  result.predicted_slowest_ms = slowest.empty() ? result.predicted_ms : median(slowest);
  if (!est.codecs.empty()) result.codecs = describe_choice(est.codecs);
  result.codec_encode_ratio = est.codec_times.encode_ratio();
  result.codec_decode_ratio = est.codec_times.decode_ratio();
  result.codec_encode_samples = est.codec_times.encode_samples();
  result.codec_decode_samples = est.codec_times.decode_samples();
}

// A rotation's log, completed with what the re-prediction starts from.
RotationLog finish_rotation_log(RotationLog log, const WorkerOptions& o, const WorkerResult& result,
                                const plan::ModelProfile& profile, const plan::LinkProfile& given,
                                const StretchTracker& tracker, const plan::PlannerOptions& planner,
                                double latency_ms) {
  log.warmup = static_cast<int>(o.warmup);
  log.workers = o.workers;
  log.latency_ms = latency_ms;
  log.given = given;
  log.profile = profile;
  log.compute_spread = planner.compute_spread;
  for (const IterationRecord& r : result.iterations) {
    RotationLog::Iteration i{r.iteration, r.plan_id, 0, 0};
    if (const auto st = tracker.stretch_at(r.iteration))
      std::tie(i.stretch_down, i.stretch_up) = *st;
    log.iterations.push_back(i);
  }
  return log;
}

}  // namespace

namespace {
std::atomic<bool> g_stop{false};

// Stopping before iteration `it` (request_stop; never before the first).
bool stops_before(const WorkerOptions& o, std::int64_t it, std::int64_t first,
                  WorkerResult& result) {
  const bool closed = o.external && !o.external->next(it);  // the caller's loop ended
  if (!closed && (!g_stop || it <= first)) return false;
  result.interrupted_at = it;
  return true;
}

// Stale-synchronous (ssp:S): the PS's pulls bound how far a worker runs past its own pushes.
bool is_ssp(const std::string& sync) { return sync.rfind("ssp:", 0) == 0; }

// The PS's iteration of step `it`: local SGD's round, or the one after the last step's (a
// dropped backup worker's jumps to the version it read: Comm::next_iteration).
std::int64_t round_of_step(std::int64_t it, std::int64_t first, const LocalSteps& locals,
                           const Comm& comm) {
  if (locals.local()) return locals.round_of(it);
  return it > first ? comm.next_iteration() : it;
}

// The last iteration's pushes are acknowledged while the job ends: into the trace too.
void finish_trace(Comm& comm, RunLog& log, const WorkerResult& result) {
  for (const auto& e : comm.take_link_events()) log.transfer(e);
  log.write_trace(result.ps_clock_offset_ms);
}

void keep_plan(const plan::Plan& plan, const plan::ModelProfile& profile, WorkerResult& result) {
  result.plan = plan;
  result.profile = profile;
}

// Where in result.plans the plan of iteration `it` >= the warm-up is: the rotation's turn,
// or the plan in use (`plan_id`).
std::size_t plan_index(const WorkerOptions& o, int plan_id, std::int64_t it) {
  if (o.rotation.empty()) return static_cast<std::size_t>(plan_id - 1);
  return static_cast<std::size_t>((it - o.warmup) / std::max(1, o.rotation_block)) %
         o.rotation.size();
}

void say_interrupted(const WorkerOptions& o, const WorkerResult& result, std::ostream& progress) {
  progress << "worker " << o.rank << ": stopped before iteration " << result.interrupted_at
           << " (interrupted)\n";
}
}  // namespace

void request_stop() { g_stop = true; }
bool stop_requested() { return g_stop; }

std::vector<std::string> planned_schedulers(const WorkerOptions& o) {
  if (!o.rotation.empty()) return o.rotation;
  if (o.scheduler == plan::kAutoScheduler) return plan::planner_names();
  return {o.scheduler};
}

namespace {

// The training data (none for a caller's batches: external_step.h) and, on rank 0, the test
// set it evaluates on (none for a caller's model: the caller evaluates).
data::Dataset train_set(const WorkerOptions& o) {
  return o.external ? data::Dataset{} : data::load_dataset(o.data_dir, data::Split::kTrain);
}
std::unique_ptr<data::Dataset> test_set(const WorkerOptions& o) {
  if (o.rank != 0 || o.external) return nullptr;
  return std::make_unique<data::Dataset>(data::load_dataset(o.data_dir, data::Split::kTest));
}

}  // namespace

WorkerResult run_worker(const WorkerOptions& options, std::ostream& progress) {
  options.validate();
  WorkerOptions o = options;  // a worker joining a running job warms up from where it starts
  const Clock::time_point started = Clock::now();
  torch::set_num_threads(o.threads);
  const data::Dataset train = train_set(o);
  const DataShare share = share_of(o, train);
  auto model = model_for(o, train);
  const int n_units = model->num_units();
  // The job's atoms (plan/model/slicing.h): whole units, or pieces that every sliced scheduler
  // in use can be expressed in. Messages, the PS's store and plans at run time index them.
  plan::ModelProfile profile = unit_profile(o, *model);
  const plan::Slicing slicing = plan::Slicing::make(
      profile, plan::common_atom_params(o.planner.slice_params(planned_schedulers(o))));
  LocalSteps locals(o, *model, share.total);  // the PS counts its rounds
  const JobShape shape = job_shape(o, slicing, locals.rounds());
  with_pull_bytes(o, slicing, profile);

  net::Connection conn(o.ps, worker_limits(o, slicing), o.curve ? &*o.curve : nullptr);
  const Joined joined =
      join_and_say(conn, o, shape, *model, share.steps_per_epoch, locals, progress);
  const std::int64_t first = joined.start_iteration;
  Comm comm(conn, *model, comm_options(o, joined, slicing));
  const std::string codec_state = take_up_codec_state(o, first, comm, progress);
  model->set_observer(&comm);
  comm.start();
  std::atomic<int> link_row{-1};  // the link trace's row now in force
  const std::vector<plan::LinkTracePoint> link_rows = o.link_trace.for_worker(o.rank);
  TimedReplay replay(o.trace_origin.value_or(started), trace_steps(o, comm, link_rows, link_row));

  WorkerResult result = joined_result(share, joined);
  // Until the warm-up's transfers are fitted: the transport's own one-way time. The warm-up
  // runs sequential and layerwise in turn; then the scheduler's plan (or the rotation's).
  plan::LinkProfile link = o.link, given_link = o.link;  // given: with the fitted stretch
  link.overhead_down_ms = link.overhead_up_ms = o.extra_overhead_ms + joined.rtt_ms / 2;
  const plan::Plan warmup_plans[2] = {plan::make_plan("sequential", profile, link, o.planner),
                                      plan::make_plan("layerwise", profile, link, o.planner)};
  plan::Plan plan = warmup_plans[0];
  int plan_id = 0;
  plan::PlannerOptions planner = o.planner;  // with the warm-up's compute spread
  Estimators estimators(static_cast<std::size_t>(n_units), o.estimator);
  Calibration calibration(o, static_cast<std::size_t>(n_units));
  StretchTracker tracker(o.warmup, o.estimator.window);
  RotationLog rotation;
  RunLog log(o, share.total, o.warmup, locals.steps_for(o.warmup, shape.trace_count), progress);
  Measurements measure{o, started, estimators, calibration, tracker, rotation, log, given_link};
  Replanner replanner({o, comm, slicing, estimators, profile, given_link, link_rows, link_row,
                       started, result, log, progress});
  const std::vector<std::string> unit_names = names_of(*model);
  const std::unique_ptr<data::Dataset> test = test_set(o);
  // The plan of iteration i >= warm-up: the rotation's turn, or the plan in use.
  auto plan_of = [&](std::int64_t i) -> const WorkerResult::PlanInfo& {
    return result.plans[plan_index(o, replanner.plan_id(), i)];
  };
  std::vector<std::int64_t> order;
  model->train(true);
  Clock::time_point iteration_start{};
  std::int64_t last_round = -1;  // the PS's iteration of the last step begun
  SavedCodecState::At before_last;  // BSP: the codec's state before the last iteration
  for (std::int64_t it = first; it < share.total; ++it) {
    if (stops_before(o, it, first, result)) break;  // request_stop: goodbye, with what it has
    if (!codec_state.empty() && o.sync == "bsp") snapshot_codec_state(comm, it, before_last);
    const int epoch = static_cast<int>(it / share.steps_per_epoch) + 1;
    const std::int64_t step = it % share.steps_per_epoch;
    if (step == 0 || it == first) order = begin_epoch(o, share, epoch, it, log);
    // The last warm-up iteration ends here: planning, below, is no part of it.
    const auto warmup_end = Clock::now();
    if (it == o.warmup) {  // plan from what the warm-up measured
      const Calibrated c =
          calibration.finish(it, tracker, estimators, rotation.compute, profile, given_link, link);
      link = c.link;
      planner = c.planner;
      estimators.set_codecs(
          push_codecs(o, *model, comm, slicing, profile, link, planner, it, progress), slicing,
          comm.push_codec().mixed());
      const plan::ModelProfile planned = estimators.codecs.apply(profile);
      result.plans = first_plans(comm, o, planned, link, planner, slicing, progress,
                                 result.scheduler_choice, result.scheduler_ranking);
      record_first_plans(o, c, planned, result);
      replanner.start(it, planner, link);
    }
    replay.rethrow();  // a failed trace step (e.g. a bad rate) ends the run, named
    follow_link_rows(o, comm, link_rows, it, link_row);
    const Replanner::Change change = replanner.before_iteration(it, step, epoch);
    const WorkerResult::PlanInfo* info = it < o.warmup ? nullptr : &plan_of(it);
    const std::int64_t round = round_of_step(it, first, locals, comm);  // the PS's iteration
    if (round >= shape.total_iterations) break;  // the job's updates are all made
    replanner.round_begun(it, round);            // backup:B: is this worker left behind?
    plan = info ? info->plan : warmup_plans[round % 2];
    if (info) plan_id = info->id;
    const double predicted_ms = info ? info->predicted_ms : 0;  // the warm-up's: none
    const auto now = Clock::now();
    if (it > first)
      result.iterations.back().ms = ms_between(iteration_start, it == o.warmup ? warmup_end : now);
    iteration_start = now;
    // Under ASP and backup workers nothing else holds a worker to its uplink's pace: pushes
    // of one iteration at most are still on their way while it computes the next. SSP's
    // pulls hold it already (the PS answers a pull for t once the worker's own pushes of
    // t-S-1 are in), and gating on acks there cost a straggler half its pace: they come
    // back in the same stream as the pull replies, which SSP answers at once, so on a slow
    // downlink they arrive seconds late (docs/sync.md).
    if (o.sync != "bsp" && !is_ssp(o.sync) && !locals.local() && it > first)
      comm.wait_for_pushes_before(last_round);
    comm.begin_iteration(round, slicing.lift(plan), predicted_ms, locals.exchange(it));
    const std::int64_t previous_round = std::exchange(last_round, round);

    // A full-duplex plan for the next round: its pulls go out as backward starts.
    plan::Plan next;
    if (it >= o.warmup && locals.prefetches_after(it) && plan_of(it + 1).plan.full_duplex)
      next = slicing.lift(plan_of(it + 1).plan);
    model::seed_dropout(o.seed, o.rank, it);  // what a worker started again would draw
    locals.before_step(it);
    const auto [l, forward_end] = forward_backward(o, it, *model, train, order, step * o.batch,
                                                   comm, next.pull.empty() ? nullptr : &next);
    locals.after_forward(it);
    // Only BSP's barrier paces every worker at the slowest; elsewhere a worker's compute is
    // its own, and the mode's pace follows from the workers' predictions. (Local SGD's
    // rounds are not its steps: neither.)
    if (!locals.local())
      follow_the_barrier(it, previous_round, comm, o.sync == "bsp", estimators, calibration,
                         rotation, result);
    comm.finish_iteration();
    if (it < o.warmup && locals.exchange(it).push) comm.wait_for_acks();  // timed before planning
    check_loss(o, it, l);
    locals.after_step(it);

    measure.transfers(it, comm);
    result.iterations.push_back(measure.record(it,
                                               record_of(it, epoch, l, comm, plan, plan_id, change),
                                               comm, forward_end, iteration_start, unit_names));
    log.iteration_done(result, step, it < o.warmup ? "warm-up" : "training");
    rank0_after_step(o, it, round, step + 1 == share.steps_per_epoch, share.total, comm, locals,
                     *model, test.get(), log, result);
  }
  if (result.interrupted_at >= 0) say_interrupted(o, result, progress);
  if (o.rank == 0)
    finish_job(comm, *model, test.get(), o, locals.rounds(), iteration_start, log, result);
  log.status(result, "done", true);
  comm.shutdown();
  keep_codec_state(codec_state, o, result.next_iteration(share.total), comm, before_last);
  model->set_observer(nullptr);
  finish_trace(comm, log, result);
  summarise(o, estimators, profile, given_link, comm.latency_ms(), result);
  if (!o.rotation.empty() && o.rank == 0)  // for the bench's re-prediction
    result.rotation_log = finish_rotation_log(std::move(rotation), o, result, profile, given_link,
                                              tracker, planner, comm.latency_ms());
  if (result.plan.pull.empty()) keep_plan(plan, profile, result);  // no warm-up end was crossed
  return result;
}

}  // namespace dynacomm::worker
