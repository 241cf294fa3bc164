#include "worker/worker.h"

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <tuple>

#include "base/error.h"
#include "base/stats.h"
#include "base/timed_replay.h"
#include "data/fashion_mnist.h"
#include "net/connection.h"
#include "net/endpoint.h"
#include "plan/compute_stretch.h"
#include "plan/duplex.h"
#include "plan/planner.h"
#include "plan/simulate.h"
#include "report/chrome_trace.h"
#include "report/progress.h"
#include "report/run_folder.h"
#include "train/local_training.h"
#include "worker/comm.h"

namespace dynacomm::worker {

namespace {

// epoch and oracle take any plan predicted faster, ignoring differences in the last digits.
constexpr double kAnyGain = 1e-3;

std::string fmt_g(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

double since_boot_ms(Clock::time_point t) {  // CLOCK_MONOTONIC: shared by all processes here
  return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count();
}

}  // namespace

void WorkerOptions::validate() const {
  if (ps.empty()) throw InvalidInput("worker: --ps is required");
  net::check_endpoint(ps, "worker: --ps");
  if (workers < 1) throw InvalidInput("worker: --workers must be at least 1");
  if (rank < 0 || rank >= workers)
    throw InvalidInput("worker: --rank " + std::to_string(rank) + " is not in 0.." +
                       std::to_string(workers - 1));
  if (batch < 1 || epochs < 1 || iterations < 0 || threads < 1)
    throw InvalidInput("worker: batch, epochs, threads must be positive; iterations >= 0");
  if (warmup < 1)
    throw InvalidInput("worker: --warmup must be at least 1: plans are made from what it measures");
  if (extra_overhead_ms < 0) throw InvalidInput("worker: --extra-overhead must be >= 0");
  if (!(device_slowdown >= 1) || device_slowdown > 1000)
    throw InvalidInput("worker: --device-slowdown must be in 1..1000");
  if (!rotation.empty() && rotation_block < 1)
    throw InvalidInput("worker: the rotation block must be at least 1 iteration");
  const std::vector<std::string> known = plan::planner_names();
  for (const auto& s : rotation)
    if (std::find(known.begin(), known.end(), s) == known.end())
      throw InvalidInput("worker: unknown scheduler '" + s + "' in the rotation (--schedulers); known: " +
                         [&] {
                           std::string k;
                           for (const auto& n : known) k += (k.empty() ? "" : ", ") + n;
                           return k;
                         }());
  link.validate();
  planner.validate();
  replan_options.validate();
  estimator.validate();
  link_trace.check_workers(workers);
  slowdown_trace.check_workers(workers);
  try {
    data::check_fashion_mnist_dir(data_dir);
  } catch (const InvalidInput& e) {
    throw InvalidInput(std::string("worker: --data-dir: ") + e.what());
  }
}

namespace {

// dynacomm-fd's search budget when re-planning, a tenth of the first plan's: the search
// runs beside training, and the next one waits four times as long as it took. Measured
// (`dynacomm plan --fd-evaluations N`, mobilenetv2 at 100 Mbit/s, 2 ms per message): 8.8 s
// with 200000 evaluations, 4.0 s with 20000 for a plan predicted 1.2% slower; resnet18
// 3.5 s and 2.5 s for the same plan.
constexpr long kReplanSearchEvaluations = 20000;

// What a re-planning task returns: the decision, the estimates it was made from, and the
// link estimators' held overheads (the task fits on copies).
struct Replanned {
  plan::ReplanDecision decision;
  plan::ModelProfile profile;
  plan::LinkProfile link;
  double held_down_ms, held_up_ms;
  double planning_ms = 0;  // how long the task took
};

// Updates below this many in the window: the aggregation stays the warm-up's.
constexpr std::size_t kMinAggregationUpdates = 5;

// The estimates now: unit times from `compute`, the link from the transfer estimators
// (falling back to `given` bandwidths before any fit), the PS's aggregation from its
// updates (the warm-up's, in `given`, before enough), the emulated latency.
Replanned estimate(const plan::UnitTimeEstimator& compute, plan::LinkEstimator down,
                   plan::LinkEstimator up, const plan::AggregationEstimator& aggregation,
                   plan::ModelProfile profile, plan::LinkProfile given, double latency_ms) {
  Replanned r;
  compute.apply(profile);
  const plan::LinkFit d = down.estimate(given.down_bps), u = up.estimate(given.up_bps);
  if (aggregation.size() >= kMinAggregationUpdates) {
    const plan::AggregationFit a = aggregation.estimate();
    given.aggregation_ms = a.ms;
    given.aggregation_ms_per_mb = a.ms_per_mb;
  }
  r.link = given;
  r.link.down_bps = d.bandwidth_bps > 0 ? d.bandwidth_bps : given.down_bps;
  r.link.up_bps = u.bandwidth_bps > 0 ? u.bandwidth_bps : given.up_bps;
  r.link.overhead_down_ms = d.overhead_ms;
  r.link.overhead_up_ms = u.overhead_ms;
  r.link.latency_ms = latency_ms;
  r.profile = std::move(profile);
  r.held_down_ms = down.held_overhead_ms();
  r.held_up_ms = up.held_overhead_ms();
  return r;
}

// A plan another worker made, as the PS handed it over (`whose` names it): parsed and
// checked against this worker's model and the job's atoms, an Error saying why not.
plan::Plan plan_from_peer(const nlohmann::json& j, const plan::ModelProfile& profile,
                          const plan::Slicing& slicing, const std::string& whose) {
  try {
    const std::int64_t atoms =
        j.is_object() && j.contains("atom_params") && j["atom_params"].is_number_integer()
            ? j["atom_params"].get<std::int64_t>()
            : 0;
    plan::Plan p = plan::plan_from_json(
        j, atoms > 0 ? plan::Slicing::make(profile, atoms).num_atoms() : profile.num_units(),
        whose);
    (void)slicing.lift(p);  // the job's atoms can carry it
    return p;
  } catch (const InvalidInput& x) {
    throw Error(whose + " is unusable here: " + x.what());
  }
}

// One full-duplex plan per strategy for the whole job (ps/server.h): each worker offers
// the ones it made with its prediction, and every worker runs, for each, the plan of the
// worker that predicted itself slowest with it. A full-duplex plan's releases wait for
// every worker's gradients, so workers pushing in different orders stall each other
// (docs/full-duplex.md, "Workers that plan apart"). Phase-separated plans stay each
// worker's own (DynaComm plans for each device's link). The adopted plans are predicted
// from this worker's own estimates.
void agree_on_full_duplex_plans(Comm& comm, const WorkerOptions& o,
                                const plan::ModelProfile& profile, const plan::LinkProfile& link,
                                const plan::PlannerOptions& planner, const plan::Slicing& slicing,
                                std::vector<WorkerResult::PlanInfo>& plans,
                                std::ostream& progress) {
  nlohmann::json offer = {{"plans", nlohmann::json::array()}};
  for (std::size_t k = 0; k < plans.size(); ++k)
    if (plans[k].plan.full_duplex)
      offer["plans"].push_back({{"index", k},
                                {"predicted_ms", plans[k].predicted_ms},
                                {"plan", plan::to_json(plans[k].plan)}});
  const std::string context = "worker " + std::to_string(o.rank) + ": the job's plans from the PS";
  const nlohmann::json agreed =
      nlohmann::json::parse(comm.agree_plans(offer.dump()), nullptr, false);
  if (!agreed.is_object() || !agreed.contains("plans") || !agreed["plans"].is_array())
    throw Error(context + ": not {\"plans\": [...]}");
  for (const nlohmann::json& e : agreed["plans"]) {
    if (!e.is_object() || !e.contains("index") || !e["index"].is_number_unsigned() ||
        !e.contains("rank") || !e["rank"].is_number_integer() || !e.contains("plan") ||
        !e["plan"].is_object())
      throw Error(context + ": an entry without index, rank and plan: " + e.dump().substr(0, 200));
    const auto k = e["index"].get<std::size_t>();
    if (k >= plans.size() || !plans[k].plan.full_duplex)
      throw Error(context + ": strategy " + std::to_string(k) +
                  " is not a full-duplex plan of this worker's");
    const int from = e["rank"].get<int>();
    if (from == o.rank) continue;
    const plan::Plan p = plan_from_peer(
        e["plan"], profile, slicing,
        context + ": rank " + std::to_string(from) + "'s plan for strategy " + std::to_string(k));
    if (!p.full_duplex || p.scheduler != plans[k].scheduler)
      throw Error(context + ": rank " + std::to_string(from) + "'s plan for strategy " +
                  std::to_string(k) + " is '" + p.scheduler + "', not full-duplex '" +
                  plans[k].scheduler + "'");
    plans[k].plan = p;
    plans[k].predicted_ms = plans[k].predicted_final_ms =
        plan::predict_plan_ms(profile, link, p, planner);
    plans[k].ideal_ms = plan::ideal_ms(profile, link, p);
    progress << "worker " << o.rank << ": " << plans[k].scheduler << " runs worker " << from
             << "'s plan, the job's slowest by their own predictions\n";
  }
}

}  // namespace

WorkerResult run_worker(const WorkerOptions& o, std::ostream& progress) {
  o.validate();
  const Clock::time_point started = Clock::now();
  torch::set_num_threads(o.threads);
  data::Dataset train = data::load_fashion_mnist(o.data_dir, data::Split::kTrain);
  const std::int64_t n_train =
      o.train_samples > 0 ? std::min(o.train_samples, train.size()) : train.size();
  std::vector<std::uint8_t> labels(train.labels.begin(), train.labels.begin() + n_train);
  auto parts = data::partition(labels, o.workers, o.partition);
  std::vector<std::int64_t> mine = parts[static_cast<std::size_t>(o.rank)];
  std::sort(mine.begin(), mine.end());  // with one worker: the same order as --local
  std::size_t smallest = mine.size();
  for (const auto& p : parts) smallest = std::min(smallest, p.size());
  const std::int64_t steps_per_epoch =
      (static_cast<std::int64_t>(smallest) + o.batch - 1) / o.batch;
  std::int64_t total = steps_per_epoch * o.epochs;
  if (o.iterations > 0) total = std::min(total, o.iterations);
  if (total < 1)
    throw InvalidInput("worker: no iterations to run (too little data for the batch size?)");

  auto model =
      model::make_model({o.model, model::InputShape{1, train.rows, train.cols}, 10, o.seed});
  const int n_units = model->num_units();
  // The job's atoms (plan/slicing.h): whole units, or pieces that every sliced scheduler
  // in use can be expressed in. Messages, the PS's store and plans at run time index them.
  plan::ModelProfile unit_sizes;
  for (const auto& u : model->units())
    unit_sizes.units.push_back({u.name, u.params, u.bytes(), 0, 0});
  const plan::Slicing slicing = plan::Slicing::make(
      unit_sizes, plan::common_atom_params(o.planner.slice_params(
                      o.rotation.empty() ? std::vector<std::string>{o.scheduler} : o.rotation)));
  std::vector<std::int64_t> unit_bytes;  // of the atoms
  for (const auto& a : slicing.atoms) unit_bytes.push_back(a.bytes);

  // Traced iterations: a few after warm-up, or one whole turn of a rotation.
  const std::int64_t trace_span = std::max<std::int64_t>(
      o.trace_iterations,
      static_cast<std::int64_t>(o.rotation.size()) * std::max(1, o.rotation_block));

  // Join.
  net::Connection conn(o.ps, net::WireLimits{unit_bytes, o.workers - 1, 64 * 1024});
  const std::string hello = nlohmann::json{
      {"model", o.model},
      {"workers", o.workers},
      {"unit_bytes", unit_bytes},
      {"total_iterations", total},
      {"trace_from", o.warmup},
      {"trace_count", trace_span}}.dump();
  std::vector<double> ping_ms;
  // The PS's clock minus ours, from the welcome with the shortest round trip: the PS took
  // the hello off its socket about half way (NTP's estimate; off by at most half the trip).
  std::optional<double> ps_clock_offset_ms;
  double offset_rtt_ms = 0;
  for (int i = 0; i < 5; ++i) {  // the real per-message cost of this transport, measured
    const auto t0 = Clock::now();
    conn.send(net::Header{net::MessageType::kHello, o.rank, 0, 0, 0}, hello.data(), hello.size());
    const net::Message welcome =
        conn.receive(o.timeout, "the PS's welcome (is `dynacomm ps` running at " + o.ps + "?)");
    const auto t1 = Clock::now();
    ping_ms.push_back(ms_between(t0, t1));
    const std::uint64_t at = welcome.header.arrived_us;
    if (at > 0 && (!ps_clock_offset_ms || ping_ms.back() < offset_rtt_ms)) {
      const double mid_ms =
          std::chrono::duration<double, std::milli>((t0 + (t1 - t0) / 2).time_since_epoch())
              .count();
      ps_clock_offset_ms = static_cast<double>(at) / 1000.0 - mid_ms;
      offset_rtt_ms = ping_ms.back();
    }
  }
  const double rtt_ms = median(ping_ms);  // the transport's own round trip
  if (o.rank == 0) {
    std::vector<float> init = model->flat_params();
    conn.send(net::Header{net::MessageType::kInit, 0, 0, 0,
                          static_cast<std::uint32_t>(slicing.num_atoms() - 1)},
              init.data(), init.size() * sizeof(float));
  }

  CommOptions co;
  co.rank = o.rank;
  co.down_bps = o.kernel_shaped ? 0 : o.link.down_bps;  // 0: no pacing in the transport
  co.up_bps = o.kernel_shaped ? 0 : o.link.up_bps;
  co.latency_ms = o.link.latency_ms;
  co.extra_overhead_ms = o.extra_overhead_ms;
  co.transport_one_way_ms = rtt_ms / 2;
  co.ps_clock_offset_ms = ps_clock_offset_ms;
  co.device_slowdown = o.device_slowdown;
  co.timeout = o.timeout;
  co.slicing = slicing;
  Comm comm(conn, *model, co);
  model->set_observer(&comm);
  comm.start();

  // Traces, replayed against the emulation from the job's start.
  std::atomic<int> link_row{-1};  // the link trace's row now in force
  std::vector<TimedReplay::Step> steps;
  const std::vector<plan::LinkTracePoint> link_rows = o.link_trace.for_worker(o.rank);
  for (std::size_t i = 0; i < link_rows.size(); ++i) {
    const plan::LinkTracePoint p = link_rows[i];
    steps.push_back({p.time_s, [&comm, &link_row, p, i, kernel = o.kernel_shaped] {
                       comm.set_link(kernel ? 0 : p.down_bps, kernel ? 0 : p.up_bps, p.latency_ms);
                       link_row = static_cast<int>(i);
                     }});
  }
  for (const plan::SlowdownTracePoint& p : o.slowdown_trace.for_worker(o.rank))
    steps.push_back({p.time_s, [&comm, f = p.factor] { comm.set_device_slowdown(f); }});
  TimedReplay replay(o.trace_origin.value_or(started), std::move(steps));

  // The plan: sequential and layerwise in turn during warm-up, then the scheduler's (or the
  // rotation's), from measurements.
  WorkerResult result;
  result.steps_per_epoch = steps_per_epoch;
  plan::ModelProfile profile;
  profile.model = o.model;
  profile.batch = o.batch;
  profile.input = "1x" + std::to_string(train.rows) + "x" + std::to_string(train.cols);
  for (const auto& u : model->units()) profile.units.push_back({u.name, u.params, u.bytes(), 0, 0});
  // Until the warm-up's transfers are fitted: the transport's own one-way time.
  plan::LinkProfile link = o.link;
  link.overhead_down_ms = link.overhead_up_ms = o.extra_overhead_ms + rtt_ms / 2;
  result.transport_rtt_ms = rtt_ms;
  result.ps_clock_offset_ms = ps_clock_offset_ms;
  const plan::Plan warmup_plans[2] = {plan::make_plan("sequential", profile, link, o.planner),
                                      plan::make_plan("layerwise", profile, link, o.planner)};
  plan::Plan plan = warmup_plans[0];
  int plan_id = 0;
  // After warm-up: the plan in use, and re-planning (a rotation is static).
  const plan::ReplanMode mode = o.rotation.empty() ? o.replan : plan::ReplanMode::kStatic;
  plan::ReplanPolicy policy(o.scheduler, o.planner, o.replan_options);
  plan::PlannerOptions planner = o.planner;  // with the warm-up's compute spread (below)
  // A job's agreed full-duplex plan (several workers): re-planned together through the PS
  // (ps/server.h), each worker reporting what its own re-planning decides.
  bool job_plan = false;
  std::int64_t job_plan_from = 0;            // the job's plan in use runs from this iteration
  std::optional<nlohmann::json> job_change;  // the PS's next plan for the job, not yet due
  std::int64_t replanning_from = 0;          // the iteration the task in flight started in
  plan::UnitTimeEstimator compute_estimator(static_cast<std::size_t>(n_units), o.estimator);
  plan::LinkEstimator down_estimator(o.estimator), up_estimator(o.estimator);
  plan::AggregationEstimator aggregation_estimator(o.estimator);
  std::future<Replanned> replanning;  // the task in flight, if any
  plan::SearchCadence cadence;        // when the next task may start (plan/replan.h)
  int oracle_row = -1;                // the link row the oracle last planned for
  int current_plan_id = 0;
  std::vector<plan::TransferSample> down_samples, up_samples;
  // The PS's updates its warm-up acks reported (the aggregation).
  std::vector<plan::TransferSample> aggregation_samples;
  // The warm-up's unit times, all iterations alike but the first: it runs cold (first
  // allocations, caches), up to 1.7x as long as the next, and would bias the plans' inputs.
  plan::EstimatorOptions warmup_weights;
  warmup_weights.window = o.warmup;
  warmup_weights.half_life = 1e9;
  plan::UnitTimeEstimator warmup_compute(static_cast<std::size_t>(n_units), warmup_weights);
  // A rotation (bench) also predicts each measured iteration from the online estimates of
  // the iterations before it (after the loop, out of the timed work): every unit's times
  // and every transfer are kept for that.
  struct ComputeSample {
    std::int64_t iteration;
    std::vector<double> forward, backward;
    double pace = 0;  // the barrier's (UnitTimeEstimator::pace); 0: not known
  };
  std::vector<ComputeSample> compute_log;
  std::vector<ComputeSample> wall_log;  // the same iterations' unit times as measured (wall)
  std::vector<ComputeSample> warmup_units;  // what warmup_compute was given, iteration by iteration
  // Compute under a busy link (plan/compute_stretch.h): the warm-up's units, each with its
  // CPU time and how long its links were busy during it, fitted at the warm-up's end. From
  // then on the estimators get each unit at idle-link speed (its CPU time times the idle
  // share), and the link the stretch; the warm-up's own iterations are converted alike.
  struct CpuSample {
    std::int64_t iteration;
    std::vector<double> forward, backward;  // CPU ms per unit
  };
  std::vector<CpuSample> warmup_cpu;
  std::vector<plan::UnitSpan> warmup_spans;
  // Every unit's span with how long each link carried data during it, counted once every
  // transfer that could overlap it has ended: at its iteration's end in the warm-up (which
  // waits for its acks), two iterations later after it (a full-duplex plan's pushes run on
  // into the next iteration). Past the warm-up they refit the stretch over the last
  // estimator window of iterations, with the warm-up's idle share (the machine's load and
  // the plans' overlap change while training runs; the warm-up saw one overlapping
  // iteration or two).
  struct OpenSpans {
    std::int64_t iteration;
    std::vector<std::pair<double, double>> windows;  // ms since the worker started
    std::vector<plan::UnitSpan> spans;  // wall and CPU; busy times filled in when counted
  };
  std::deque<OpenSpans> open_spans;
  std::vector<plan::LinkBusy> recent_busy;  // ended transfers that may overlap an open span
  std::deque<std::vector<plan::UnitSpan>> online_spans;            // per iteration, the window
  std::map<std::int64_t, std::pair<double, double>> stretch_from;  // down, up: from iteration i
  bool cpu_known = true;                 // every warm-up iteration's CPU marks came from one thread
  double idle_wall_per_cpu = 0;          // 0: not fitted (the estimators get wall times)
  std::map<std::int64_t, double> paces;  // the barrier's, per iteration (to rebuild)
  plan::LinkProfile given_link = o.link;  // with the fitted stretch
  auto at_idle_speed = [&](const std::vector<double>& cpu_ms) {
    std::vector<double> ms(cpu_ms.size());
    for (std::size_t u = 0; u < cpu_ms.size(); ++u) ms[u] = cpu_ms[u] * idle_wall_per_cpu;
    return ms;
  };
  std::vector<Comm::LinkEvent> link_log;
  std::vector<std::pair<std::int64_t, plan::TransferSample>> aggregation_log;  // likewise
  // The stretch the estimates held at the start of iteration `it` (none before the fit).
  auto stretch_at = [&](std::int64_t it) -> std::optional<std::pair<double, double>> {
    auto s = stretch_from.upper_bound(it);
    if (s == stretch_from.begin()) return std::nullopt;
    return std::prev(s)->second;
  };
  // Counts the open spans whose transfers have all ended by the end of iteration `it`
  // (see OpenSpans) and, past the warm-up, refits the stretch over the window.
  auto count_spans = [&](std::int64_t it) {
    bool refit = false;
    while (!open_spans.empty() &&
           (open_spans.front().iteration < o.warmup || open_spans.front().iteration <= it - 2)) {
      OpenSpans& open = open_spans.front();
      plan::add_busy_times(open.spans, open.windows, recent_busy);
      if (open.iteration < o.warmup) {
        warmup_spans.insert(warmup_spans.end(), open.spans.begin(), open.spans.end());
      } else {
        online_spans.push_back(std::move(open.spans));
        if (online_spans.size() > static_cast<std::size_t>(std::max(1, o.estimator.window)))
          online_spans.pop_front();
        refit = true;
      }
      open_spans.pop_front();
    }
    // What ended before the oldest open span began overlaps nothing still to count.
    recent_busy.erase(recent_busy.begin(),
                      std::find_if(recent_busy.begin(), recent_busy.end(), [&](const auto& b) {
                        return !open_spans.empty() &&
                               b.end_ms >= open_spans.front().windows.front().first;
                      }));
    if (!refit) return;
    std::vector<plan::UnitSpan> spans;
    for (const auto& v : online_spans) spans.insert(spans.end(), v.begin(), v.end());
    const plan::ComputeStretch f = plan::fit_compute_stretch(spans, idle_wall_per_cpu);
    if (f.fitted_down) given_link.compute_stretch_down = f.down;  // else as it was
    if (f.fitted_up) given_link.compute_stretch_up = f.up;
    stretch_from[it + 1] = {given_link.compute_stretch_down, given_link.compute_stretch_up};
  };

  report::ChromeTrace trace;
  const int pid = o.rank;
  trace.name_process(pid, "worker " + std::to_string(o.rank));
  trace.name_track(pid, report::ChromeTrace::kCompute, "compute");
  trace.name_track(pid, report::ChromeTrace::kDownlink, "downlink (pull)");
  trace.name_track(pid, report::ChromeTrace::kUplink, "uplink (push)");
  // A completed transfer of a traced iteration, on its link's track.
  auto trace_transfer = [&](const Comm::LinkEvent& e) {
    if (e.iteration < o.warmup || e.iteration >= o.warmup + trace_span) return;
    trace.add_event(pid, e.up ? report::ChromeTrace::kUplink : report::ChromeTrace::kDownlink,
                    (e.up ? "push " : "pull ") + std::to_string(e.segment) + " (it " +
                        std::to_string(e.iteration) + ")",
                    e.up ? "push" : "pull", since_boot_ms(e.start), since_boot_ms(e.end),
                    {{"bytes", e.bytes},
                     {"iteration", e.iteration},
                     {"link_busy_ms", e.service_ms},
                     {"held_at_ps_ms", e.held_ms}});
  };
  std::unique_ptr<data::Dataset> test;
  if (o.rank == 0)
    test =
        std::make_unique<data::Dataset>(data::load_fashion_mnist(o.data_dir, data::Split::kTest));
  std::vector<std::int64_t> order;
  std::unique_ptr<report::ProgressBar> bar;
  // Live progress for a launcher's combined display (dynacomm train).
  std::unique_ptr<report::RunFolder> status_dir;
  if (!o.out_dir.empty()) status_dir = std::make_unique<report::RunFolder>(o.out_dir);
  const std::string status_name = "status-worker" + std::to_string(o.rank) + ".json";
  Clock::time_point last_status{};
  std::int64_t total_up = 0, total_down = 0;
  std::deque<std::pair<Clock::time_point, std::int64_t>> recent;  // for images/s
  auto write_status = [&](const char* phase, bool force) {
    if (!status_dir || result.iterations.empty()) return;
    const auto now = Clock::now();
    if (!force && now - last_status < std::chrono::milliseconds(500)) return;
    last_status = now;
    const IterationRecord& r = result.iterations.back();
    double images_per_s = 0;
    if (recent.size() >= 2)
      images_per_s = static_cast<double>(recent.back().second - recent.front().second) * o.batch /
                     std::max(1e-9, ms_between(recent.front().first, recent.back().first) / 1e3);
    nlohmann::json acc = result.epoch_test_accuracy.empty()
                             ? nlohmann::json(nullptr)
                             : nlohmann::json(result.epoch_test_accuracy.back());
    status_dir->write_json(status_name, {{"rank", o.rank},
                                         {"phase", phase},
                                         {"iteration", r.iteration + 1},
                                         {"iterations", total},
                                         {"epoch", r.epoch},
                                         {"epochs", o.epochs},
                                         {"loss", r.loss},
                                         {"images_per_s", images_per_s},
                                         {"bytes_up", total_up},
                                         {"bytes_down", total_down},
                                         {"plan_id", r.plan_id},
                                         {"pull_segments", r.pull_segments},
                                         {"push_segments", r.push_segments},
                                         {"test_accuracy", acc}});
  };
  model->train(true);
  Clock::time_point iteration_start{};
  for (std::int64_t it = 0; it < total; ++it) {
    const int epoch = static_cast<int>(it / steps_per_epoch) + 1;
    const std::int64_t step = it % steps_per_epoch;
    if (step == 0) {
      order = mine;
      data::shuffle(order, o.seed * 1000003 + static_cast<std::uint64_t>(epoch));
      if (o.rank == 0)
        bar = std::make_unique<report::ProgressBar>(
            progress, "epoch " + std::to_string(epoch) + "/" + std::to_string(o.epochs),
            std::min(steps_per_epoch, total - it), o.interactive, "img");
    }
    if (it == o.warmup) {  // plan from what the warm-up measured
      if (cpu_known && !warmup_cpu.empty()) {
        result.compute_stretch = plan::fit_compute_stretch(warmup_spans);
        idle_wall_per_cpu = result.compute_stretch.idle_wall_per_cpu;
        given_link.compute_stretch_down = link.compute_stretch_down = result.compute_stretch.down;
        given_link.compute_stretch_up = link.compute_stretch_up = result.compute_stretch.up;
        stretch_from[it] = {given_link.compute_stretch_down, given_link.compute_stretch_up};
        // The warm-up's iterations again, at idle-link speed, with their paces.
        warmup_compute = plan::UnitTimeEstimator(static_cast<std::size_t>(n_units), warmup_weights);
        compute_estimator = plan::UnitTimeEstimator(static_cast<std::size_t>(n_units), o.estimator);
        warmup_units.clear();
        for (const CpuSample& c : warmup_cpu) {
          if (c.iteration > 0 || o.warmup == 1) {
            warmup_units.push_back(
                {c.iteration, at_idle_speed(c.forward), at_idle_speed(c.backward)});
            warmup_compute.add(c.iteration, warmup_units.back().forward,
                               warmup_units.back().backward);
          }
          compute_estimator.add(c.iteration, at_idle_speed(c.forward), at_idle_speed(c.backward));
          for (ComputeSample& l : compute_log)
            if (l.iteration == c.iteration) {
              l.forward = at_idle_speed(c.forward);
              l.backward = at_idle_speed(c.backward);
            }
        }
        for (const auto& [i, f] : paces) {
          warmup_compute.pace(i, f);
          compute_estimator.pace(i, f);
        }
      }
      warmup_compute.apply(profile);
      result.measured_down = plan::fit_link(down_samples, o.link.down_bps);
      result.measured_up = plan::fit_link(up_samples, o.link.up_bps);
      // Plan for the link the transfers showed: the fitted line where the bandwidth could
      // be fitted and is plausible (within 0.25x..1.5x of the given figure, which bounds
      // the damage of a bad fit from few points), else the given bandwidth with the
      // fitted overhead.
      auto use = [](const plan::LinkFit& f, const std::vector<plan::TransferSample>& samples,
                    double given, double& bps, double& overhead) {
        if (f.bandwidth_fitted && f.bandwidth_bps > 0.25 * given && f.bandwidth_bps < 1.5 * given) {
          bps = f.bandwidth_bps;
          overhead = f.overhead_ms;
        } else {
          bps = given;
          overhead = plan::fit_overhead(samples, given);
        }
      };
      use(result.measured_down, down_samples, o.link.down_bps, link.down_bps,
          link.overhead_down_ms);
      use(result.measured_up, up_samples, o.link.up_bps, link.up_bps, link.overhead_up_ms);
      // The PS's aggregation, which the full-duplex model charges before a unit's next
      // pull; kept for the online estimates too.
      result.aggregation = plan::fit_aggregation(aggregation_samples);
      given_link.aggregation_ms = link.aggregation_ms = result.aggregation.ms;
      given_link.aggregation_ms_per_mb = link.aggregation_ms_per_mb = result.aggregation.ms_per_mb;
      // Several workers whose compute differs (plan/duplex.h): this worker's unit times in
      // the warm-up's iterations as factors on the profile, which the model of several
      // workers draws every worker's times from (the others taken to be like this one).
      planner.workers = o.workers;
      if (o.workers > 1)
        for (const ComputeSample& c : warmup_units) {
          plan::ComputeFactors f;
          for (std::size_t u = 0; u < profile.units.size(); ++u) {
            const double fw = profile.units[u].forward_ms, bw = profile.units[u].backward_ms;
            f.forward.push_back(fw > 0 && c.forward[u] > 0 ? c.forward[u] / fw : 1);
            f.backward.push_back(bw > 0 && c.backward[u] > 0 ? c.backward[u] / bw : 1);
          }
          planner.compute_spread.push_back(std::move(f));
        }
      {  // re-planning searches with a smaller budget (kReplanSearchEvaluations)
        plan::PlannerOptions replanning = planner;
        replanning.fd_max_evaluations =
            std::min(planner.fd_max_evaluations, kReplanSearchEvaluations);
        policy.set_planner_options(replanning);
      }
      const std::vector<std::string> schedulers =
          o.rotation.empty() ? std::vector<std::string>{o.scheduler} : o.rotation;
      for (std::size_t k = 0; k < schedulers.size(); ++k) {
        plan::Plan p = plan::make_plan(schedulers[k], profile, link, planner);
        const double predicted = plan::predict_plan_ms(profile, link, p, planner);
        result.plans.push_back({static_cast<int>(k) + 1, schedulers[k], p, predicted, predicted,
                                plan::ideal_ms(profile, link, p), 0});
      }
      if (o.workers > 1)
        agree_on_full_duplex_plans(comm, o, profile, link, planner, slicing, result.plans,
                                   progress);
      result.planned_link = link;
      result.plan = result.plans[0].plan;
      result.profile = profile;
      result.predicted_ms = result.plans[0].predicted_ms;
      result.predicted_sequential_ms =
          plan::simulate(profile, link, plan::make_plan("sequential", profile, link, o.planner));
      result.ideal_ms = plan::ideal_ms(profile, link);
      current_plan_id = 1;
      policy.adopt(it, result.plans[0].plan, profile, link);
      if (o.workers > 1 && result.plans[0].plan.full_duplex && mode != plan::ReplanMode::kStatic) {
        job_plan = true;  // re-planned on each worker alone, the plans would part again
        job_plan_from = it;
        progress << "worker " << o.rank << ": the job runs one full-duplex plan; its workers "
                 << "re-plan it together (the slowest one's proposal, through the PS)\n";
      }
      oracle_row = link_row.load();
    }
    replay.rethrow();  // a failed trace step (e.g. a bad rate) ends the run, named
    std::string plan_change;
    double predicted_gain_ms = 0;
    if (it > o.warmup && mode != plan::ReplanMode::kStatic) {
      auto adopt = [&](const plan::ReplanDecision& d, const plan::ModelProfile& p,
                       const plan::LinkProfile& l, const std::string& why) {
        policy.adopt(it, d.plan, p, l);
        current_plan_id = static_cast<int>(result.plans.size()) + 1;
        result.plans.push_back({current_plan_id, o.scheduler, d.plan, d.best_ms, d.best_ms,
                                plan::ideal_ms(p, l, d.plan), 0});
        result.plan_changes.push_back({it, current_plan_id, why, d.current_ms, d.best_ms});
        plan_change = why;
        predicted_gain_ms = d.gain_ms();
        char line[160];
        std::snprintf(line, sizeof line, "; predicted %.1f -> %.1f ms)", d.current_ms, d.best_ms);
        progress << "worker " << o.rank << ": plan " << current_plan_id << " ("
                 << plan::to_string(mode) << ") from iteration " << it << ": "
                 << plan::format_segments(d.plan.pull) << " / "
                 << plan::format_segments(d.plan.push) << " (" << why << line << "\n";
        trace.add_instant(pid, report::ChromeTrace::kCompute,
                          "plan " + std::to_string(current_plan_id), "replan",
                          since_boot_ms(Clock::now()),
                          {{"iteration", it},
                           {"plan_id", current_plan_id},
                           {"why", why},
                           {"predicted_current_ms", d.current_ms},
                           {"predicted_best_ms", d.best_ms}});
      };
      auto estimates_now = [&] {
        return estimate(compute_estimator, down_estimator, up_estimator, aggregation_estimator,
                        profile, given_link, comm.latency_ms());
      };
      // What a re-planning decided: adopted, or for a job's plan reported to the PS (its
      // prediction of the plan in use, and the plan it would change to), which changes the
      // job's plan for every worker when the slowest proposes one (below).
      auto consider = [&](const plan::ReplanDecision& d, const plan::ModelProfile& p,
                          const plan::LinkProfile& l, const std::string& why) {
        if (!job_plan) {
          if (d.change) adopt(d, p, l, why);
          return;
        }
        if (!(d.current_ms > 0) || !std::isfinite(d.current_ms)) return;
        nlohmann::json report = {{"current_ms", d.current_ms}, {"proposal", nullptr}};
        if (d.change && d.best_ms > 0 && std::isfinite(d.best_ms))
          report["proposal"] = {
              {"predicted_ms", d.best_ms}, {"plan", plan::to_json(d.plan)}, {"why", why}};
        comm.report_replan(it, report.dump());
      };
      if (job_plan) {
        if (const std::optional<std::string> text = comm.take_job_replan()) {
          const std::string context =
              "worker " + std::to_string(o.rank) + ": the job's next plan from the PS";
          nlohmann::json c = nlohmann::json::parse(*text, nullptr, false);
          if (!c.is_object() || !c.contains("plan") || !c.contains("from_iteration") ||
              !c["from_iteration"].is_number_integer() || !c.contains("rank") ||
              !c["rank"].is_number_integer() || !c.contains("predicted_ms") ||
              !c["predicted_ms"].is_number() || !c.contains("current_ms") ||
              !c["current_ms"].is_number())
            throw Error(context + ": not {plan, from_iteration, rank, predicted_ms, current_ms}: " +
                        text->substr(0, 200));
          job_change = std::move(c);
        }
        if (job_change && it >= (*job_change)["from_iteration"].get<std::int64_t>()) {
          const nlohmann::json& c = *job_change;
          const int from = c["rank"].get<int>();
          plan::ReplanDecision d;
          d.change = true;
          d.plan = plan_from_peer(c["plan"], profile, slicing,
                                  "worker " + std::to_string(o.rank) + ": rank " +
                                      std::to_string(from) + "'s proposal for the job");
          if (!d.plan.full_duplex || d.plan.scheduler != o.scheduler)
            throw Error("worker " + std::to_string(o.rank) + ": rank " + std::to_string(from) +
                        "'s proposal for the job is '" + d.plan.scheduler + "', not full-duplex '" +
                        o.scheduler + "'");
          d.current_ms = c["current_ms"].get<double>();  // the proposer's predictions
          d.best_ms = c["predicted_ms"].get<double>();
          const Replanned r = estimates_now();
          const std::string why = c.contains("why") && c["why"].is_string()
                                      ? c["why"].get<std::string>()
                                      : std::string();
          adopt(d, r.profile, r.link,
                "the job's plan, proposed by rank " + std::to_string(from) +
                    " (the slowest by its prediction)" + (why.empty() ? "" : ": " + why));
          job_plan_from = it;
          job_change.reset();
        }
      }
      if (mode == plan::ReplanMode::kDynamic) {
        // Consume a finished task; start the next one when a change would be allowed.
        if (replanning.valid() &&
            replanning.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
          Replanned r = replanning.get();
          // A slow planner (dynacomm-fd searches for seconds) must not take a core from
          // training: the next task waits four times as long as this one took, or starts at
          // once when the estimates have moved far from this one's (plan::SearchCadence).
          cadence.searched(ms_between(started, Clock::now()), r.planning_ms, r.profile, r.link);
          down_estimator.hold_overhead(r.held_down_ms);
          up_estimator.hold_overhead(r.held_up_ms);
          if (replanning_from >= job_plan_from) {  // else it judged the job's previous plan
            plan::ReplanDecision d = r.decision;
            d.change = d.change && policy.due(it);
            consider(d, r.profile, r.link, d.why);
          }
        }
        std::optional<Replanned> now_estimates;
        auto estimates_if_asked = [&] {
          now_estimates = estimates_now();
          return plan::SearchCadence::Estimates{now_estimates->profile, now_estimates->link};
        };
        if (!replanning.valid() && policy.due(it + 1) &&
            cadence.may_start(ms_between(started, Clock::now()), estimates_if_asked)) {
          if (cadence.started_early()) {
            char factor[96];
            std::snprintf(factor, sizeof factor, "x%.2f from those the last search (%.1f s) ran on",
                          cadence.last_move(), cadence.last_took_ms() / 1e3);
            progress << "worker " << o.rank << ": the estimates moved " << factor << " ("
                     << plan::describe_change(cadence.made_from().profile, cadence.made_from().link,
                                              now_estimates->profile, now_estimates->link)
                     << "): searching again now, not after the back-off\n";
          }
          replanning_from = it;
          replanning = std::async(std::launch::async,
                                  [policy, compute = compute_estimator, down = down_estimator,
                                   up = up_estimator, aggregation = aggregation_estimator, profile,
                                   given = given_link, latency = comm.latency_ms()]() mutable {
                                    const auto t0 = Clock::now();
                                    Replanned r = estimate(compute, std::move(down), std::move(up),
                                                           aggregation, profile, given, latency);
                                    r.decision = policy.evaluate(r.profile, r.link);
                                    r.planning_ms = ms_between(t0, Clock::now());
                                    return r;
                                  });
        }
      } else if (mode == plan::ReplanMode::kEpoch && step == 0) {
        // The paper's policy: plan afresh at every epoch's start from what was measured.
        Replanned r = estimates_now();
        r.decision = policy.evaluate(r.profile, r.link, kAnyGain);
        consider(r.decision, r.profile, r.link,
                 "epoch " + std::to_string(epoch) + " starts; " + r.decision.why);
      } else if (mode == plan::ReplanMode::kOracle && link_row.load() != oracle_row) {
        // Handed the true link figures at every change (the overheads as estimated).
        oracle_row = link_row.load();
        Replanned r = estimates_now();
        const plan::LinkTracePoint& row = link_rows[static_cast<std::size_t>(oracle_row)];
        r.link.down_bps = row.down_bps;
        r.link.up_bps = row.up_bps;
        r.link.latency_ms = row.latency_ms;
        r.decision = policy.evaluate(r.profile, r.link, kAnyGain);
        consider(r.decision, r.profile, r.link,
                 "the link changed at " + fmt_g(row.time_s) + " s (oracle); " + r.decision.why);
      }
    }
    // The plan of iteration i >= warm-up: the rotation's turn, or the plan in use.
    auto plan_index = [&](std::int64_t i) {
      if (o.rotation.empty()) return static_cast<std::size_t>(current_plan_id - 1);
      return static_cast<std::size_t>((i - o.warmup) / std::max(1, o.rotation_block)) %
             o.rotation.size();
    };
    double predicted_ms = 0;  // this iteration's plan's prediction (warm-up: none)
    if (it < o.warmup) {
      plan = warmup_plans[it % 2];
    } else {
      const WorkerResult::PlanInfo& info = result.plans[plan_index(it)];
      plan = info.plan;
      plan_id = info.id;
      predicted_ms = info.predicted_ms;
    }
    const auto now = Clock::now();
    if (it > 0) result.iterations.back().ms = ms_between(iteration_start, now);
    iteration_start = now;
    comm.begin_iteration(it, slicing.lift(plan), predicted_ms);

    const std::int64_t begin = step * o.batch;
    const std::int64_t end =
        std::min<std::int64_t>(static_cast<std::int64_t>(order.size()), begin + o.batch);
    std::vector<std::int64_t> idx(order.begin() + begin, order.begin() + end);
    data::Batch b = data::make_batch(train, idx);
    torch::Tensor x = torch::from_blob(b.images.data(), {b.size(), 1, train.rows, train.cols});
    torch::Tensor y = torch::from_blob(b.labels.data(), {b.size()}, torch::kInt64);
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    const auto forward_end = comm.forward_done();
    // A full-duplex plan for the next iteration: its pulls go out as backward starts. (A
    // re-plan adopted at the next boundary changes its pushes; its pulls follow from t+2.)
    if (it >= o.warmup && it + 1 < total) {
      const plan::Plan& next = result.plans[plan_index(it + 1)].plan;
      if (next.full_duplex) comm.prefetch(it + 1, slicing.lift(next));
    }
    loss.backward();
    // The barrier: the previous iteration went at the pace of the slowest worker, which the
    // PS reported with this iteration's parameters (all in by now).
    if (it > 0)
      if (const std::optional<double> f = comm.slowest_compute_factor(it - 1)) {
        compute_estimator.pace(it - 1, *f);
        warmup_compute.pace(it - 1, *f);
        if (it - 1 < o.warmup) paces[it - 1] = *f;
        if (!compute_log.empty() && compute_log.back().iteration == it - 1)
          compute_log.back().pace = *f;
      }
    if (it > 0 && !result.iterations.empty() && result.iterations.back().iteration == it - 1)
      if (const std::optional<double> p = comm.slowest_predicted_ms(it - 1))
        result.iterations.back().predicted_slowest_ms = *p;
    comm.finish_iteration();
    if (it < o.warmup) comm.wait_for_acks();  // every transfer timed before planning
    const double l = loss.item<double>();
    if (!std::isfinite(l))
      throw Error("worker " + std::to_string(o.rank) + ": training diverged at iteration " +
                  std::to_string(it) + " (loss " + std::to_string(l) + ")");

    const bool traced = it >= o.warmup && it < o.warmup + trace_span;
    const std::vector<plan::TransferSample> updates = comm.take_aggregations();
    if (it < o.warmup)
      aggregation_samples.insert(aggregation_samples.end(), updates.begin(), updates.end());
    for (const plan::TransferSample& u : updates) {
      aggregation_estimator.add(it, u.bytes, u.ms);
      if (!o.rotation.empty()) aggregation_log.push_back({it, u});
    }
    for (const auto& e : comm.take_link_events()) {
      // Busy while it was served: the service time before its end.
      recent_busy.push_back(
          {ms_between(started, e.end) - e.service_ms, ms_between(started, e.end), e.up});
      if (!o.rotation.empty()) link_log.push_back(e);
      if (e.iteration < o.warmup)
        (e.up ? up_samples : down_samples)
            .push_back({static_cast<double>(e.bytes), e.service_ms, 1.0});
      (e.up ? up_estimator : down_estimator)
          .add(e.iteration, static_cast<double>(e.bytes), e.service_ms);
      trace_transfer(e);
    }
    // Compute-only times: from a unit's gate opening to the next unit's gate being reached.
    std::pair<double, double> compute_record{0, 0};  // wall, CPU
    {
      std::vector<double> forward_ms(static_cast<std::size_t>(n_units)),
          backward_ms(static_cast<std::size_t>(n_units));
      std::vector<Clock::time_point> all_ready(static_cast<std::size_t>(n_units) + 1);
      std::vector<double> cpu_all_ready(static_cast<std::size_t>(n_units) + 1);
      all_ready[static_cast<std::size_t>(n_units)] = forward_end;
      cpu_all_ready[static_cast<std::size_t>(n_units)] = comm.cpu_forward_end;
      for (int u = n_units - 1; u >= 0; --u) {
        const auto su = static_cast<std::size_t>(u);
        const bool later = comm.grads_ready[su] > all_ready[su + 1];
        all_ready[su] = later ? comm.grads_ready[su] : all_ready[su + 1];
        cpu_all_ready[su] = later ? comm.cpu_ready[su] : cpu_all_ready[su + 1];
      }
      double compute_ms = 0, compute_cpu_ms = 0;
      std::vector<double> forward_cpu(static_cast<std::size_t>(n_units)),
          backward_cpu(static_cast<std::size_t>(n_units));
      for (int u = 0; u < n_units; ++u) {
        const auto su = static_cast<std::size_t>(u);
        const auto next = u + 1 < n_units ? comm.gate_called[su + 1] : forward_end;
        if (traced) {
          const std::string& name = model->units()[su].name;
          const nlohmann::json args = {{"iteration", it}, {"plan_id", plan_id}};
          trace.add_event(pid, report::ChromeTrace::kCompute, "fwd " + name, "forward",
                          since_boot_ms(comm.gate_passed[su]), since_boot_ms(next), args);
          trace.add_event(pid, report::ChromeTrace::kCompute, "bwd " + name, "backward",
                          since_boot_ms(all_ready[su + 1]), since_boot_ms(all_ready[su]), args);
        }
        forward_ms[su] = ms_between(comm.gate_passed[su], next);
        backward_ms[su] = ms_between(all_ready[su + 1], all_ready[su]);
        forward_cpu[su] = (u + 1 < n_units ? comm.cpu_called[su + 1] : comm.cpu_forward_end) -
                          comm.cpu_passed[su];
        backward_cpu[su] = cpu_all_ready[su] - cpu_all_ready[su + 1];
        compute_ms += forward_ms[su] + backward_ms[su];
        compute_cpu_ms += forward_cpu[su] + backward_cpu[su];
      }
      const bool cpu_valid = comm.cpu_valid;
      compute_record = {compute_ms, cpu_valid ? compute_cpu_ms : 0};
      if (it < o.warmup) {
        cpu_known = cpu_known && cpu_valid;
        warmup_cpu.push_back({it, forward_cpu, backward_cpu});
        if (it > 0 || o.warmup == 1) {
          warmup_units.push_back({it, forward_ms, backward_ms});
          warmup_compute.add(it, forward_ms, backward_ms);
        }
      }
      if (cpu_valid && (it < o.warmup ? it > 0 || o.warmup == 1 : idle_wall_per_cpu > 0)) {
        OpenSpans open{it, {}, {}};
        for (int u = 0; u < n_units; ++u) {
          const auto su = static_cast<std::size_t>(u);
          open.windows.emplace_back(
              ms_between(started, comm.gate_passed[su]),
              ms_between(started, u + 1 < n_units ? comm.gate_called[su + 1] : forward_end));
          open.spans.push_back({forward_ms[su], forward_cpu[su], 0, 0});
          open.windows.emplace_back(ms_between(started, all_ready[su + 1]),
                                    ms_between(started, all_ready[su]));
          open.spans.push_back({backward_ms[su], backward_cpu[su], 0, 0});
        }
        open_spans.push_back(std::move(open));
      }
      count_spans(it);
      // Past the warm-up: at idle-link speed when the stretch was fitted (see above).
      const bool idle_speed = it >= o.warmup && idle_wall_per_cpu > 0 && cpu_valid;
      const std::vector<double> forward_q = idle_speed ? at_idle_speed(forward_cpu) : forward_ms;
      const std::vector<double> backward_q = idle_speed ? at_idle_speed(backward_cpu) : backward_ms;
      if (!o.rotation.empty()) {
        compute_log.push_back({it, forward_q, backward_q});
        if (it > 0) wall_log.push_back({it, forward_ms, backward_ms});  // not the cold one
      }
      compute_estimator.add(it, forward_q, backward_q);
    }
    IterationRecord r;
    r.iteration = it;
    r.start_s =
        std::chrono::duration<double>(iteration_start - o.trace_origin.value_or(started)).count();
    r.epoch = epoch;
    r.loss = l;
    r.bytes_up = comm.bytes_up;
    r.bytes_down = comm.bytes_down;
    r.plan_id = plan_id;
    r.pull_segments = plan.pull.size();
    r.push_segments = plan.push.size();
    r.plan_change = plan_change;
    r.predicted_gain_ms = predicted_gain_ms;
    std::tie(r.compute_ms, r.compute_cpu_ms) = compute_record;
    if (const auto s = stretch_at(it)) std::tie(r.stretch_down, r.stretch_up) = *s;
    result.iterations.push_back(r);
    total_up += r.bytes_up;
    total_down += r.bytes_down;
    recent.emplace_back(Clock::now(), it + 1);
    if (recent.size() > 20) recent.pop_front();
    write_status(it < o.warmup ? "warm-up" : "training", false);
    if (bar) {
      char status[96];
      std::snprintf(status, sizeof status, "loss %.4f  %zu/%zu segments", l, plan.pull.size(),
                    plan.push.size());
      bar->update(step + 1, status, o.batch * o.workers);
    }
    // The last epoch is evaluated after the final update is in (below), which also keeps
    // the evaluation out of the last iteration's measured time.
    const bool epoch_end = step + 1 == steps_per_epoch && it + 1 < total;
    if (epoch_end && o.rank == 0) {
      train::Evaluation ev = train::evaluate(*model, *test, o.test_samples, 256);
      result.epoch_test_accuracy.push_back(ev.accuracy);
      write_status("training", true);
      if (bar) {
        char s[64];
        std::snprintf(s, sizeof s, "test acc %.2f%% (before the last update)", 100 * ev.accuracy);
        bar->finish(s);
      }
    }
  }
  // The last iteration's time ends when its update is in: fetching the final parameters.
  if (o.rank == 0) {
    comm.fetch_all(total);
    result.iterations.back().ms = ms_between(iteration_start, Clock::now());
    result.final_weights = model->flat_params();
    result.test_accuracy = train::evaluate(*model, *test, o.test_samples, 256).accuracy;
    result.epoch_test_accuracy.push_back(result.test_accuracy);
    if (bar) {
      char s[64];
      std::snprintf(s, sizeof s, "test acc %.2f%%", 100 * result.test_accuracy);
      bar->finish(s);
    }
  }
  write_status("done", true);
  comm.shutdown();
  // The last iteration's pushes are acknowledged while the job ends: into the trace too.
  for (const auto& e : comm.take_link_events()) trace_transfer(e);
  model->set_observer(nullptr);
  if (!o.out_dir.empty())
    report::RunFolder(o.out_dir).write_json("trace-worker" + std::to_string(o.rank) + ".json",
                                            trace.json());

  if (!result.plans.empty() && !compute_estimator.empty()) {
    const Replanned last = estimate(compute_estimator, down_estimator, up_estimator,
                                    aggregation_estimator, profile, given_link, comm.latency_ms());
    result.final_profile = last.profile;
    result.final_link = last.link;
    result.final_aggregation = aggregation_estimator.estimate();
    result.ideal_final_ms = plan::ideal_ms(last.profile, last.link);
    for (auto& p : result.plans) {
      p.predicted_final_ms = plan::predict_ms(last.profile, last.link, p.plan);
      p.ideal_final_ms = plan::ideal_ms(last.profile, last.link, p.plan);
    }
  }
  if (!o.rotation.empty()) {
    // Each measured iteration predicted from the estimates of the iterations before it
    // (what a re-planning task would have seen then): a prediction that follows the
    // machine's drift over a long run, which the warm-up's cannot.
    plan::UnitTimeEstimator c(static_cast<std::size_t>(n_units), o.estimator);
    plan::LinkEstimator down(o.estimator), up(o.estimator);
    plan::AggregationEstimator aggregation(o.estimator);
    std::size_t next_sample = 0, next_pace = 0, next_update = 0;
    std::vector<std::pair<std::int64_t, const Comm::LinkEvent*>> events;
    for (const Comm::LinkEvent& e : link_log) events.emplace_back(e.iteration, &e);
    std::stable_sort(events.begin(), events.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t next_event = 0;
    for (IterationRecord& r : result.iterations) {
      for (; next_sample < compute_log.size() && compute_log[next_sample].iteration < r.iteration;
           ++next_sample)
        c.add(compute_log[next_sample].iteration, compute_log[next_sample].forward,
              compute_log[next_sample].backward);
      // The pace of t - 1 arrives during t: known from t + 1 on.
      for (; next_pace < compute_log.size() && compute_log[next_pace].iteration < r.iteration - 1;
           ++next_pace)
        if (compute_log[next_pace].pace >= 1)
          c.pace(compute_log[next_pace].iteration, compute_log[next_pace].pace);
      for (; next_event < events.size() && events[next_event].first < r.iteration; ++next_event) {
        const Comm::LinkEvent& e = *events[next_event].second;
        (e.up ? up : down).add(e.iteration, static_cast<double>(e.bytes), e.service_ms);
      }
      for (;
           next_update < aggregation_log.size() && aggregation_log[next_update].first < r.iteration;
           ++next_update)
        aggregation.add(aggregation_log[next_update].first,
                        aggregation_log[next_update].second.bytes,
                        aggregation_log[next_update].second.ms);
      if (r.iteration <= o.warmup || r.plan_id < 1 || c.empty()) continue;
      plan::LinkProfile then = given_link;
      if (const auto st = stretch_at(r.iteration))
        std::tie(then.compute_stretch_down, then.compute_stretch_up) = *st;
      const Replanned now = estimate(c, down, up, aggregation, profile, then, comm.latency_ms());
      down.hold_overhead(now.held_down_ms);  // as the re-planning task hands them back
      up.hold_overhead(now.held_up_ms);
      const plan::Plan& p = result.plans[static_cast<std::size_t>(r.plan_id - 1)].plan;
      r.predicted_ms = plan::predict_plan_ms(now.profile, now.link, p, planner);
      r.ideal_ms = plan::ideal_ms(now.profile, now.link, p);
      // The workers' spread: the last 4 iterations' unit times as measured, one per worker
      // and iteration in turn (the others taken to be like this one in distribution). Rank
      // 0's only: it writes metrics.csv, and resnet18's 306 slices take about 0.4 s each.
      if (p.full_duplex && o.workers > 1 && o.rank == 0) {
        const auto end =
            std::partition_point(wall_log.begin(), wall_log.end(),
                                 [&](const ComputeSample& c) { return c.iteration < r.iteration; });
        std::vector<plan::ModelProfile> samples;
        for (auto c = end - std::min<std::ptrdiff_t>(4, end - wall_log.begin()); c != end; ++c) {
          plan::ModelProfile m = profile;
          for (std::size_t u = 0; u < m.units.size(); ++u) {
            m.units[u].forward_ms = c->forward[u];
            m.units[u].backward_ms = c->backward[u];
          }
          samples.push_back(std::move(m));
        }
        plan::LinkProfile measured_under_load = now.link;  // the times carry the stretch
        measured_under_load.compute_stretch_down = measured_under_load.compute_stretch_up = 1;
        if (!samples.empty())
          r.predicted_workers_ms =
              plan::predict_duplex_workers_ms(samples, o.workers, measured_under_load, p);
      }
    }
  }
  std::vector<double> times;
  for (const auto& r : result.iterations)
    if (r.iteration >= o.warmup && r.ms > 0) times.push_back(r.ms);
  result.median_iteration_ms = median(times);
  std::vector<double> slowest;
  for (const auto& r : result.iterations)
    if (r.iteration >= o.warmup && r.predicted_slowest_ms > 0)
      slowest.push_back(r.predicted_slowest_ms);
  result.predicted_slowest_ms = slowest.empty() ? result.predicted_ms : median(slowest);
  if (result.plan.pull.empty()) {  // no warm-up boundary was crossed
    result.plan = plan;
    result.profile = profile;
  }
  return result;
}

}  // namespace dynacomm::worker
