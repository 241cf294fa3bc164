// Re-planning while training runs (plan/replan/replan.h), on the training thread at each
// iteration's start: dynamic (a task on another thread plans afresh from the online
// estimates whenever the policy and the search cadence allow, and a plan predicted faster
// by more than the threshold takes effect at the next boundary after it is done), epoch
// (the paper's policy: at every epoch's start) or oracle (at every change of the link
// trace, handed its true figures). A job's agreed full-duplex plan is re-planned together
// (ps/server.h): each worker reports what its own re-planning decides, and the PS changes
// the job's plan for every worker when the slowest proposes one.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "net/job_protocol.h"
#include "plan/model/slicing.h"
#include "plan/replan/replan.h"
#include "plan/replan/trace_file.h"
#include "worker/comm.h"
#include "worker/estimates.h"
#include "worker/left_behind.h"
#include "worker/run_log.h"
#include "worker/worker.h"

namespace dynacomm::worker {

// What the replanner reads and writes, owned by the worker's loop.
struct ReplanContext {
  const WorkerOptions& o;
  Comm& comm;
  const plan::Slicing& slicing;
  Estimators& estimators;                              // what the links hold comes back from a task
  const plan::ModelProfile& profile;                   // the units; times come from the estimates
  const plan::LinkProfile& given;                      // the given link, with the fitted stretch
  const std::vector<plan::LinkTracePoint>& link_rows;  // this rank's link trace
  const std::atomic<int>& link_row;                    // the row in force (-1: none)
  Clock::time_point started;
  WorkerResult& result;  // plans and plan_changes
  RunLog& log;
  std::ostream& progress;
};

class Replanner {
 public:
  explicit Replanner(ReplanContext c);
  ~Replanner();  // waits for a task in flight

  // At the warm-up's end (iteration `it`), once result.plans holds the first plans made
  // with `planner` for `link`.
  void start(std::int64_t it, const plan::PlannerOptions& planner, const plan::LinkProfile& link);
  // Before iteration `it` (step `step` of epoch `epoch`) runs: consumes a finished task,
  // starts the next, applies a due change. The change that takes effect at `it`, if any.
  struct Change {
    std::string why;
    double gain_ms = 0;
  };
  Change before_iteration(std::int64_t it, std::int64_t step, int epoch);
  int plan_id() const { return current_plan_id_; }  // the plan in use (0: warm-up)
  // backup:B: iteration `it` runs the PS's iteration `round` (left_behind.h). When the
  // others leave this worker behind, or stop doing so, later plans are planned for pulls
  // answered at once or not (from the first iteration after the warm-up), and a search
  // starts at the next chance, whatever the back-off (dynamic re-planning only).
  void round_begun(std::int64_t it, std::int64_t round);

 private:
  void adopt(std::int64_t it, const plan::ReplanDecision& d, const Replanned& r,
             const std::string& why, Change& change);
  void consider(std::int64_t it, const plan::ReplanDecision& d, const Replanned& r,
                const std::string& why, Change& change);
  // --compress auto: the pushes' codecs from iteration `it` on, when the decision changes them.
  void follow_codecs(std::int64_t it, const plan::ReplanDecision& d);
  void follow_the_job(std::int64_t it, Change& change);
  void dynamic(std::int64_t it, Change& change);
  Replanned estimates_now() const;
  // Says how far the codecs' times in training are from the warm-up's, the first time
  // they are known and whenever they move by half again.
  void say_codec_times(std::int64_t it);

  ReplanContext c_;
  plan::ReplanMode mode_;
  plan::ReplanPolicy policy_;
  bool job_plan_ = false;
  std::int64_t job_plan_from_ = 0;                // the job's plan in use runs from this iteration
  std::optional<net::JobPlanChange> job_change_;  // the PS's next plan for the job, not yet due
  std::int64_t replanning_from_ = 0;              // the iteration the task in flight started in
  std::future<Replanned> replanning_;             // the task in flight, if any
  plan::SearchCadence cadence_;                   // when the next task may start
  int oracle_row_ = -1;                           // the link row the oracle last planned for
  int current_plan_id_ = 0;
  LeftBehind left_behind_;                    // backup:B: is this worker the one left behind?
  std::int64_t model_from_ = 0;               // a search started before this judged the old model
  bool search_now_ = false;                   // the model changed: search at the next chance
  std::string model_why_;                     // and why, for the first search after it
  double said_encode_ = 0, said_decode_ = 0;  // the codec times' ratios last said (0: none)
};

}  // namespace dynacomm::worker
