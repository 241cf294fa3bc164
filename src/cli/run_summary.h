// summary.json: what rank 0 reports of a cluster job, in one typed definition. The worker
// command writes it, the launcher (cli/cluster_job.h) reads it back for `train` and
// `bench`; the nested reports (the links measured, the final estimates, the profile) stay
// JSON objects as written, for the bench's notes and bench/fd_replay.py.
//
//   RunSummary s = make_summary(job, result);          // rank 0, at the run's end
//   folder.write_json("summary.json", to_json(s));
//   RunSummary back = summary_from_json(json);         // Error naming a missing field
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/job_flags.h"
#include "worker/time_to_accuracy.h"

namespace dynacomm::worker {
struct WorkerResult;
}

namespace dynacomm::cli {

struct RunSummary {
  struct Plan {  // a plan the run used (a bench rotation: one per strategy), ids from 1
    int id = 0;
    std::string scheduler;
    double predicted_ms = 0, predicted_final_ms = 0;  // warm-up's, and at the run's end
    double ideal_ms = 0, ideal_final_ms = 0;
    nlohmann::json plan;  // plan::to_json
    bool full_duplex() const { return plan.value("full_duplex", false); }
  };
  struct PlanChange {
    std::int64_t iteration = 0;
    int plan_id = 0;
    std::string why;
    double predicted_current_ms = 0, predicted_best_ms = 0;
  };

  std::string scheduler, model, replan;
  std::string sync = "bsp";      // --sync (ps/sync_policy.h)
  std::string arch = "ps";       // --arch, with allreduce's bucket rule ("allreduce:planned")
  std::string scheduler_choice;  // --scheduler auto: which strategy, and why
  std::string codecs;            // compressed pushes: rank 0's codecs at the end (else empty)
  int workers = 0, batch = 0;
  std::int64_t iterations = 0, iterations_per_epoch = 0;
  std::int64_t bytes_up = 0, bytes_down = 0;
  double median_iteration_ms = 0, predicted_ms = 0, predicted_sequential_ms = 0;
  double predicted_slowest_ms = 0;  // the largest any worker predicted (0: none)
  // The warm-up's sequential iterations, measured (0 iterations: none warm).
  double measured_sequential_ms = 0;
  int measured_sequential_iterations = 0;
  // Rank 0's first iteration (> 0: the job was resumed, or rank 0 rejoined it), and where
  // an interrupted run stopped (-1: it ran to the end).
  std::int64_t first_iteration = 0, interrupted_at = -1;
  struct Ranked {  // --scheduler auto: every strategy's prediction for the job, fastest first
    std::string scheduler;
    double predicted_ms = 0;
  };
  std::vector<Ranked> scheduler_ranking;
  double test_accuracy = 0, ideal_ms = 0, device_slowdown = 1;
  // --target-accuracy (target 0: none): when rank 0's evaluations first reached it.
  worker::TimeToAccuracy time_to_accuracy;
  std::vector<Plan> plans;
  std::vector<PlanChange> plan_changes;
  nlohmann::json link;             // as asked: down, up, latency, emulation
  nlohmann::json measured_link;    // the warm-up's fits
  nlohmann::json plan;             // the plan the run ended with
  nlohmann::json final_estimates;  // link, aggregation, ideal_ms, profile at the end
  nlohmann::json profile;          // the warm-up's per-unit profile
  nlohmann::json arch_choice;      // --arch auto: chosen, predictions, text (else null)

  // The strategy the run used: the scheduler, or what auto chose.
  std::string strategy() const;
  std::int64_t params() const;  // the profile's parameters, all units
  std::size_t units() const;
};

// What the end of a run says of its speed, one line each: the strategy's measured median
// against its prediction; against sequential, measured against measured where the warm-up
// ran a warm sequential iteration (predictions where it did not, and it says so); and, for
// --scheduler auto, when the measurement came out slower than a runner-up's prediction.
std::vector<std::string> speed_report(const RunSummary& s);

// "reached 88.00% test accuracy (88.12%) at iteration 412: 301.5 s of training (12.3 s of
// evaluations left out), 409 iterations, 12.3 MB up and 98.8 MB down (worker 0)".
std::string time_to_accuracy_line(const worker::TimeToAccuracy& t);

RunSummary make_summary(const JobFlags& job, const worker::WorkerResult& r);
nlohmann::json to_json(const RunSummary& s);
nlohmann::json to_json(const RunSummary::PlanChange& c);
nlohmann::json to_json(const worker::TimeToAccuracy& t);  // null when no target was set
// Error naming the field that is missing or of the wrong type.
RunSummary summary_from_json(const nlohmann::json& j);

}  // namespace dynacomm::cli
