// `--sync backup:auto`: how many backup workers B an update does without, chosen by the PS
// from the pushes' measured arrival times, window by window. Pure: no clock, no sockets;
// the server tells it when pushes and versions arrive (ms on any one clock).
//
//   BackupChooser c(/*workers=*/4, /*units=*/8);
//   c.version_ready(t, ms);                  // every unit at version >= t
//   c.pushed(rank, t, first, last, ms);      // a push of units first..last for iteration t
//   if (auto change = c.decide()) log(change->why);   // c.backups() is the new B
//
// The model: a worker's delay d_r(t) is from version t being ready to the arrival of its
// last push of iteration t (its pull, compute and push: its own pace, not the others'); a
// worker with no complete push of t (it lags, or left) counts as infinitely late. With B
// backups an update waits for the (N-B)-th smallest delay, and carries N-B workers'
// gradients, so its time per gradient is T(B) / (N-B), T(B) the median over the window's
// iterations of that order statistic. After each window of `window` iterations (evaluated
// once two more versions are ready, so pushes that were merely late are in) the B with the
// least time per gradient is chosen (ties: the smaller B); a change needs a gain of more
// than `threshold` over the B in use. The first window is `first_window` iterations (at
// most `window`): until it ends the job runs BSP, and a straggler that stays slow makes
// every one of those iterations its own length (3: the calibration warm-up's, where a
// 5 Mbit/s device already takes seconds against the others' tenths).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dynacomm::ps {

class BackupChooser {
 public:
  // from: the first iteration the job runs (a resumed job's checkpoint).
  BackupChooser(int workers, int units, std::int64_t from = 0, int window = 10,
                double threshold = 0.05, int first_window = 3);

  void version_ready(std::int64_t iteration, double ms);
  void pushed(int rank, std::int64_t iteration, int first, int last, double ms);

  struct Change {
    int backups;
    std::string why;
  };
  // A new B once a window is complete and calls for one; nullopt otherwise.
  std::optional<Change> decide();
  int backups() const { return backups_; }

  // The B in 0..N-1 with the least median time per gradient over `delays` (per iteration,
  // per rank; infinity: no push), and that time per B (infinity: never N-B pushes).
  static int best(const std::vector<std::vector<double>>& delays,
                  std::vector<double>* per_gradient);

  static constexpr double kNever = std::numeric_limits<double>::infinity();

 private:
  int workers_, units_, window_, first_window_;
  double threshold_;
  int backups_ = 0;
  std::int64_t from_ = 0;  // the first iteration of the first window
  std::int64_t next_ = 0;  // the first iteration not evaluated yet
  std::map<std::int64_t, double> ready_;
  std::map<std::pair<std::int64_t, int>, int> units_in_;  // (iteration, rank) -> units pushed
  std::map<std::int64_t, std::map<int, double>> done_;    // iteration -> rank -> last push ms
};

}  // namespace dynacomm::ps
