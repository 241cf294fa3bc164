// Compute under a busy link (plan/estimate/compute_stretch.h), tracked while training runs.
//
// Every unit's span is kept with how long each link carried data during it, counted once
// every transfer that could overlap it has ended: at its iteration's end in the warm-up
// (which waits for its acks), two iterations later after it (a full-duplex plan's pushes
// run on into the next iteration). At the warm-up's end the spans give the first fit and
// the idle share (wall per CPU ms with idle links); past it they refit the stretch over the
// last estimator window of iterations, with the warm-up's idle share held (the machine's
// load and the plans' overlap change while training runs). Training thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "plan/estimate/compute_stretch.h"
#include "plan/model/profile.h"
#include "worker/unit_times.h"

namespace dynacomm::worker {

class StretchTracker {
 public:
  StretchTracker(int warmup, int window) : warmup_(warmup), window_(window) {}

  // A transfer ended: busy from start to end (ms since the worker started).
  void add_busy(const plan::LinkBusy& b) { recent_busy_.push_back(b); }
  // Iteration `it`'s units, to be counted (when their CPU marks are valid and, past the
  // warm-up, the idle share is known; the warm-up's cold first iteration is left out).
  void open(std::int64_t it, bool cpu_valid, const UnitTimes& t,
            std::chrono::steady_clock::time_point started);
  // Counts the spans whose transfers have all ended by the end of `it` and, past the
  // warm-up, refits the stretch into `given` (a direction with too little busy work keeps
  // its last value).
  void count(std::int64_t it, plan::LinkProfile& given);
  // The warm-up's fit, held from iteration `it` on.
  plan::ComputeStretch fit_warmup(std::int64_t it);

  double idle_wall_per_cpu() const { return idle_wall_per_cpu_; }  // 0: not fitted
  std::vector<double> at_idle_speed(const std::vector<double>& cpu_ms) const;
  // The stretch (down, up) the estimates held at the start of `it` (none before the fit).
  std::optional<std::pair<double, double>> stretch_at(std::int64_t it) const;

 private:
  struct OpenSpans {
    std::int64_t iteration;
    std::vector<std::pair<double, double>> windows;  // ms since the worker started
    std::vector<plan::UnitSpan> spans;  // wall and CPU; busy times filled in when counted
  };
  int warmup_, window_;
  std::deque<OpenSpans> open_;
  std::vector<plan::LinkBusy> recent_busy_;  // ended transfers that may overlap an open span
  std::vector<plan::UnitSpan> warmup_spans_;
  std::deque<std::vector<plan::UnitSpan>> online_spans_;            // per iteration, the window
  std::map<std::int64_t, std::pair<double, double>> stretch_from_;  // down, up: from it
  double idle_wall_per_cpu_ = 0;
};

}  // namespace dynacomm::worker
