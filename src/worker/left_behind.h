// Backup workers (ps/sync_policy.h, backup:B): is this worker the one the others leave
// behind? A worker slower than the job's (N-B)-th fastest has its pushes dropped, and its
// pulls read versions the others have already made, so the PS answers them at once, as under
// ASP: its plans are then planned and predicted for pulls answered at once
// (plan::PlannerOptions::pulls_answered_at_once), the others' for pulls that wait for N-B
// pushes. The sign is in the rounds it runs: a dropped worker's next round skips ahead to
// the version it read (Comm::next_iteration), an on-time one's is the one after.
//
// It decides over the last `window` rounds, with hysteresis so that a worker that loses the
// race now and then is not flipped back and forth: left behind once at least
// `window` - 1 of them skipped, back with the others once at most one did.
//
//   LeftBehind watch;
//   if (watch.round(round)) replan_for(watch.left_behind());
#pragma once

#include <cstdint>
#include <deque>

namespace dynacomm::worker {

class LeftBehind {
 public:
  explicit LeftBehind(int window = 4);

  // The PS's iteration of the worker's next round, in order; true when the verdict changed
  // with it.
  bool round(std::int64_t iteration);
  bool left_behind() const { return left_behind_; }
  int skipped() const;  // of the last window's rounds

 private:
  const int window_;
  std::int64_t last_ = -1;
  std::deque<bool> skips_;
  bool left_behind_ = false;
};

}  // namespace dynacomm::worker
