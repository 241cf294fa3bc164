// What a worker shows and leaves behind while it trains: its Chrome trace (the traced
// iterations' compute and transfers, its plan changes), its live status file for a
// launcher's combined display, and (rank 0) the progress bar. Training thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "report/chrome_trace.h"
#include "report/progress.h"
#include "report/run_folder.h"
#include "worker/comm.h"
#include "worker/unit_times.h"
#include "worker/worker.h"

namespace dynacomm::worker {

class RunLog {
 public:
  // Traces the iterations trace_from .. trace_from + trace_count - 1.
  RunLog(const WorkerOptions& o, std::int64_t total, std::int64_t trace_from,
         std::int64_t trace_count, std::ostream& progress);

  bool traced(std::int64_t it) const {
    return it >= trace_from_ && it < trace_from_ + trace_count_;
  }
  // A completed transfer, on its link's track when its iteration is traced.
  void transfer(const Comm::LinkEvent& e);
  // A traced iteration's units on the compute track.
  void units(std::int64_t it, int plan_id, const std::vector<std::string>& names,
             const UnitTimes& t);
  void plan_changed(std::int64_t it, int plan_id, const std::string& why, double current_ms,
                    double best_ms);
  // The trace file (trace-worker<R>.json in the run folder, when there is one).
  // Writes trace-worker<R>.json, recording the PS's clock offset for `dynacomm trace merge`.
  void write_trace(std::optional<double> ps_clock_offset_ms);

  // An epoch begins (rank 0: a fresh progress bar for its `steps` iterations).
  void epoch_begins(int epoch, std::int64_t steps, std::int64_t steps_per_epoch);
  // An iteration is done: the bar, and the status file at most twice a second (`force`:
  // now). `result` holds the iterations so far.
  void iteration_done(const WorkerResult& result, std::int64_t step, const char* phase);
  void status(const WorkerResult& result, const char* phase, bool force);
  void bar_finish(const std::string& text);

 private:
  // The epochs the job runs: --epochs, or fewer where --iterations ends it first.
  int epochs_run(std::int64_t steps_per_epoch) const;
  const WorkerOptions& o_;
  std::int64_t total_, trace_from_, trace_count_;
  std::ostream& progress_;
  report::ChromeTrace trace_;
  std::unique_ptr<report::ProgressBar> bar_;
  std::unique_ptr<report::RunFolder> status_dir_;
  std::string status_name_;
  Clock::time_point last_status_{};
  std::int64_t total_up_ = 0, total_down_ = 0;
  std::deque<std::pair<Clock::time_point, std::int64_t>> recent_;  // for images/s
};

double since_boot_ms(Clock::time_point t);  // CLOCK_MONOTONIC: shared by all processes here

}  // namespace dynacomm::worker
