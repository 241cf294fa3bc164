// An edge worker: trains its share of the data through the parameter server, executing a
// Plan each iteration.
//
// Threads: the training thread runs forward/backward; the communication thread owns the
// PS connection. At the start of iteration t all pull requests of the plan go out at once
// (pipelined); the forward of unit u waits, at u's gate, only for u's own segment; backward
// hands each unit's gradients over as soon as they exist, and a push segment leaves as
// soon as all its units are ready and the (emulated) uplink is free. A full-duplex plan
// (dynacomm-fd, p3, bytescheduler) sends t+1's pull requests when t's backward starts;
// replies that come before t+1 begins are held and written into the model then. Sliced
// plans index atoms, pieces of units (plan/model/slicing.h); the job's atoms serve every
// scheduler it runs.
//
// Links are emulated in user space (net/shaper.h): each direction is paced by a token
// bucket at the given bandwidth and delayed by the one-way latency, on top of real TCP on
// loopback. This is emulation, not a kernel-shaped link.
//
// Planning: the first `warmup` iterations measure every unit's forward/backward time (the
// first, cold iteration's left out when there are more) and every transfer; they
// alternate the `sequential` plan (one segment per direction) and the `layerwise` one
// (one per unit), so transfers of very different sizes are seen and the link's
// per-transmission overhead (and bandwidth) can be fitted (plan/estimate/link_fit.h). Then
// the chosen scheduler plans from those measurements, with the given bandwidths and the
// measured overheads, and the plan is swapped at that iteration boundary.
//
// Re-planning (plan/replan/replan.h): from then on every iteration's unit times and transfers
// feed online estimators (plan/estimate/estimator.h); with `replan` dynamic, at most every
// `min_interval` iterations (and no sooner than four times the last task's duration
// after it ended) a task on another thread re-estimates, plans afresh and compares; a plan
// predicted faster by more than the threshold takes effect at the next iteration boundary after the
// task is done. The PS serves any segmentation at any time, so nothing else has to agree. Link and
// device traces (plan/replan/trace_file.h) are replayed on a thread of their own against the
// emulation (under --net netns the launcher changes the tbf rates; the worker still applies the
// latency).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "data/partition.h"
#include "net/curve.h"
#include "optim/sgd.h"
#include "plan/estimate/compute_stretch.h"
#include "plan/estimate/estimator.h"
#include "plan/estimate/link_fit.h"
#include "plan/model/profile.h"
#include "plan/planners/planner.h"
#include "plan/replan/replan.h"
#include "plan/replan/trace_file.h"
#include "worker/rotation_log.h"

namespace dynacomm::worker {

class ExternalStep;

struct WorkerOptions {
  std::string ps;  // PS endpoint, e.g. tcp://127.0.0.1:7070
  // The job's architecture: "ps", or "allreduce" (worker/ring_worker.h: no PS; the workers
  // meet at rank 0's store, ring_store HOST:PORT, each reachable at its ring_host, and sum
  // their gradients in buckets chosen by the rule `buckets`), or "gossip" (gossip_worker.h:
  // the same group; each worker averages its model with its neighbours' on `topology`).
  std::string arch = "ps";
  std::string ring_store, ring_host = "127.0.0.1";
  std::string buckets = "planned";
  std::string topology = "ring";          // --arch gossip: "ring" or "torus" (plan/model/gossip.h)
  std::optional<net::CurveClient> curve;  // CURVE keys (net/curve.h); none: plaintext
  int rank = 0;
  int workers = 1;
  std::string model = "cnn";
  int batch = 64;
  int epochs = 1;
  std::int64_t iterations = 0;  // stop after this many (0: run the epochs)
  std::uint64_t seed = 1;
  int threads = 1;
  std::string data_dir;
  data::PartitionOptions partition;
  std::int64_t train_samples = 0, test_samples = 0;  // 0 = all
  // Rank 0 evaluates on the test set after every epoch and, with eval_every > 0, after every
  // eval_every-th iteration too (metrics.csv's test_accuracy and eval_ms). With
  // target_accuracy > 0 it says, in its status, when an evaluation reached it (the launcher
  // then stops the job: cli/cluster_job.h) and summary.json gives the time to it.
  std::int64_t eval_every = 0;
  double target_accuracy = 0;
  // A planner's name (plan/planners/planner.h), or "auto": after the warm-up every
  // strategy is planned and predicted, and the job runs the one predicted fastest (with
  // several workers: fastest for the slowest of them); re-planning then refines that one.
  std::string scheduler = "auto";
  // The codec of the pushes (compress/compressor.h: METHOD[:PARAMETER][,ef|,noef]); the
  // job's, checked at hello. And of the pulls (compress/pull_codec.h; "none": float32).
  std::string compression = "none";
  std::string pull_compression = "none";
  // The job's synchronisation mode (ps/sync_policy.h; local:H, optim/local_sgd.h). Under BSP a job's full-duplex plans
  // are one (the slowest worker's, re-planned together); under the others, whose pulls do
  // not wait for every worker, each worker runs and re-plans its own.
  std::string sync = "bsp";
  // The job's optimiser, applied on the PS; its momentum dgc applies here (compress/dgc.cc),
  // and local SGD's steps on the device take its learning rate (optim/local_sgd.h).
  optim::SgdOptions sgd;
  plan::PlannerOptions planner;
  plan::LinkProfile link{20e6, 20e6, 0, 0, 0};  // emulated link; overheads are measured
  double extra_overhead_ms = 0;                 // injected per message, for what-if studies
  bool kernel_shaped = false;  // the kernel paces the link (netns + tbf): the transport
                               // adds only the latency; `link` is still what is planned for
  int warmup = 3;              // iterations measuring compute and the link before planning
  // Benchmarking: after warm-up, take turns between these schedulers, `rotation_block`
  // iterations each (A A A B B B C C C A A A ...), so drift hits all alike. Empty: only
  // `scheduler`. Plan id k+1 is rotation[k].
  std::vector<std::string> rotation;
  int rotation_block = 3;
  double device_slowdown = 1;  // emulation: every unit's compute stretched by this factor
  // Re-planning while training runs; a rotation is always static.
  plan::ReplanMode replan = plan::ReplanMode::kDynamic;
  plan::ReplanOptions replan_options;
  plan::EstimatorOptions estimator;
  // Traces replayed while training runs (the rows for this rank). Times count from
  // trace_origin (steady clock, shared by the job's processes; default: the start of
  // run_worker).
  plan::LinkTrace link_trace;
  plan::SlowdownTrace slowdown_trace;
  std::optional<std::chrono::steady_clock::time_point> trace_origin;
  std::chrono::milliseconds timeout{60000};  // every wait on the PS
  std::string cloud_link;  // --net user with --ps-link: the shared cloud link's file
  std::string out_dir;                       // rank 0: metrics.csv, weights.bin, ...;
                                             // every rank: trace-worker<R>.json and
                                             // status-worker<R>.json (live progress,
                                             // rewritten at most twice a second)
  int trace_iterations = 5;                  // iterations after warm-up in the trace
  // The job's settings as this worker runs them (flag, text; cli/job_flags.h): its hello
  // carries them for the PS to check against the job's. Empty: not checked.
  std::vector<std::pair<std::string, std::string>> job_settings;
  bool interactive = false;
  // A training loop outside the worker (worker/external_step.h: the Python package's): its
  // model and batches replace `model` and `data_dir`; only rank 0 fetches the final weights
  // (into the caller's module) and nothing is evaluated here.
  std::shared_ptr<ExternalStep> external;

  void validate() const;  // throws InvalidInput naming the option
  // A TorchScript file against the data's shape and classes (it loads the training set):
  // for a launcher, before any process starts; a worker meets the same error as it builds
  // its model. InvalidInput saying what does not fit.
  void check_model_fits_data() const;
  void validate_ring() const;  // --arch allreduce's and gossip's options
};

struct IterationRecord {
  std::int64_t iteration = 0;
  int epoch = 0;
  double ms = 0, loss = 0;
  double start_s = 0;  // when it started, seconds from the trace origin (the job's start)
  std::int64_t bytes_up = 0, bytes_down = 0;
  int plan_id = 0;
  std::size_t pull_segments = 0, push_segments = 0;
  std::string plan_change;       // why a new plan took effect at this iteration, else empty
  double predicted_gain_ms = 0;  // of that change, under the estimates it was made from
  // The largest prediction of this iteration any worker sent with its pushes, each for its
  // own plan, link and compute (0: not known): under BSP the slowest one sets the pace.
  double predicted_slowest_ms = 0;
  // This worker's compute (the units' times, without waits at the gates) and the training
  // thread's CPU time in it (0: not known); the difference is the CPU it was denied.
  double compute_ms = 0, compute_cpu_ms = 0;
  // How many times slower compute ran under a busy downlink / uplink, as the estimates held
  // it at this iteration's start: the warm-up's fit, refitted online (0: not fitted yet).
  double stretch_down = 0, stretch_up = 0;
  // Rank 0: the test set's accuracy of the weights this iteration pulled, evaluated after it
  // (-1: not evaluated), and the time inside `ms` spent on the job's outputs after the step:
  // that evaluation, and writing model.pt at a PS checkpoint (the job's last evaluation,
  // after the final update, is outside every iteration: 0).
  double test_accuracy = -1, eval_ms = 0;
};

struct WorkerResult {
  std::vector<IterationRecord> iterations;
  std::int64_t steps_per_epoch = 0;
  std::vector<double> epoch_test_accuracy;  // rank 0 only
  double last_test_accuracy = -1;           // rank 0: of the latest evaluation (-1: none yet)
  double test_accuracy = 0;                 // rank 0: of the final weights
  std::vector<float> final_weights;         // rank 0
  std::string state_dict;                   // rank 0: model.pt (Model::export_pt)
  std::int64_t checkpoint_model_iteration = -1;  // rank 0: of model.pt at a PS checkpoint
  std::int64_t interrupted_at = -1;         // stopped before this iteration (request_stop); -1: not
  // The iteration a worker taking up this run would start at.
  std::int64_t next_iteration(std::int64_t total) const {
    return interrupted_at >= 0 ? interrupted_at : total;
  }
  plan::Plan plan;                          // the plan used after warm-up
  struct PlanInfo {
    int id;
    std::string scheduler;
    plan::Plan plan;
    double predicted_ms;                      // from the estimates it was made from
    double predicted_final_ms;                // from the estimates at the end of the run
    double ideal_ms = 0, ideal_final_ms = 0;  // of the model the plan runs under
                                              // (phase-separated or full duplex)
  };
  // --scheduler auto: which strategy was chosen, and why (empty otherwise), and every
  // strategy with its prediction for the job, fastest first.
  std::string scheduler_choice;
  struct Ranked {
    std::string scheduler;
    double predicted_ms;
  };
  std::vector<Ranked> scheduler_ranking;
  // Compressed pushes: the codecs in use at the end, per unit (worker/codec_costs.h's
  // describe_choice; empty: dense).
  std::string codecs;
  // And how far their times in training were from the warm-up's (worker/codec_times.h):
  // encoding (this worker's) and decoding (the PS's), with how many pushes said so.
  double codec_encode_ratio = 1, codec_decode_ratio = 1;
  std::size_t codec_encode_samples = 0, codec_decode_samples = 0;
  std::vector<PlanInfo> plans;  // every plan used after warm-up (the rotation's, or the
                                // first and each re-plan's)
  struct PlanChange {
    std::int64_t iteration;  // the first iteration run with the new plan
    int plan_id;
    std::string why;
    double predicted_current_ms, predicted_best_ms;  // under the estimates of the change
  };
  std::vector<PlanChange> plan_changes;  // after the first plan
  double ideal_ms = 0;         // the phase-separated ideal for the measured profile and link
                               // (DESIGN.md); a full-duplex plan's is in its PlanInfo
  plan::ModelProfile profile;  // measured during warm-up
  double predicted_ms = 0, predicted_sequential_ms = 0;
  // The warm-up's sequential iterations, measured (the cold first one left out): the median
  // and how many (0: the warm-up ran none warm, as with --warmup 1 or 2).
  double measured_sequential_ms = 0;
  int measured_sequential_iterations = 0;
  // The job's prediction: the median over the iterations after warm-up of the largest
  // prediction any worker sent (predicted_slowest_ms); this worker's own predicted_ms
  // where none came back. Above predicted_ms when another worker's link or device is slower.
  double predicted_slowest_ms = 0;
  double median_iteration_ms = 0;
  plan::LinkFit measured_down, measured_up;  // fitted from the warm-up's transfers
  plan::ComputeStretch compute_stretch;      // fitted from the warm-up's units (spans 0: not)
  plan::AggregationFit aggregation;  // the PS's, from the warm-up's pushes that completed units
  double transport_rtt_ms = 0;       // hello round trip, outside the emulation
  std::optional<double> ps_clock_offset_ms;  // the PS's clock minus this one's (hello)
  plan::LinkProfile planned_link;            // what the plan was made for
  // The online estimates at the end of the run (the last few iterations), and the ideal
  // for them: a prediction from these is not thrown off by a cold start in warm-up.
  plan::ModelProfile final_profile;
  plan::LinkProfile final_link;
  plan::AggregationFit final_aggregation;  // the PS's, from the updates in the last window
  double ideal_final_ms = 0;
  // Rank 0 of a rotation: what its iterations measured, for the bench to predict them
  // again (rotation.json).
  std::optional<RotationLog> rotation_log;
};

// Asks every run_worker of this process to stop at its next iteration's start (from a
// SIGTERM handler: async-signal-safe). It stops cleanly: rank 0 keeps the weights of the
// last iteration it pulled, evaluates them, and every worker says goodbye, so the PS can
// checkpoint a consistent state.
void request_stop();
bool stop_requested();

// Joins the job (hello; rank 0 also sends the initial parameters), trains, and says
// goodbye. Throws Timeout / Error naming the PS, unit and iteration on failure.
WorkerResult run_worker(const WorkerOptions& options, std::ostream& progress);

// The strategies a worker plans after its warm-up: the rotation's, every planner's for
// "auto", or the one scheduler.
std::vector<std::string> planned_schedulers(const WorkerOptions& o);

}  // namespace dynacomm::worker
