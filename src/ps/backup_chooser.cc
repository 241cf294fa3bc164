#include "ps/backup_chooser.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"

namespace dynacomm::ps {

BackupChooser::BackupChooser(int workers, int units, std::int64_t from, int window,
                             double threshold, int first_window)
    : workers_(workers),
      units_(units),
      window_(window),
      first_window_(std::min(first_window, window)),
      threshold_(threshold),
      from_(from),
      next_(from) {
  if (workers < 1 || units < 1 || window < 1 || first_window < 1 || !(threshold >= 0))
    throw InvalidInput("backup:auto: workers, units and windows must be positive");
}

void BackupChooser::version_ready(std::int64_t iteration, double ms) {
  if (iteration >= next_) ready_.emplace(iteration, ms);  // the first time only
}

void BackupChooser::pushed(int rank, std::int64_t iteration, int first, int last, double ms) {
  if (iteration < next_ || rank < 0 || rank >= workers_ || last < first) return;
  int& in = units_in_[{iteration, rank}];
  in += last - first + 1;
  if (in >= units_) done_[iteration][rank] = ms;
}

int BackupChooser::best(const std::vector<std::vector<double>>& delays,
                        std::vector<double>* per_gradient) {
  const int n = delays.empty() ? 0 : static_cast<int>(delays.front().size());
  int chosen = 0;
  double least = kNever;
  if (per_gradient) per_gradient->assign(static_cast<std::size_t>(n), kNever);
  for (int b = 0; b < n; ++b) {
    std::vector<double> waits;  // per iteration: the (n-b)-th smallest delay
    for (std::vector<double> d : delays) {
      std::sort(d.begin(), d.end());
      waits.push_back(d[static_cast<std::size_t>(n - b - 1)]);
    }
    std::sort(waits.begin(), waits.end());
    const double median = waits[waits.size() / 2];
    const double cost = median / (n - b);
    if (per_gradient) (*per_gradient)[static_cast<std::size_t>(b)] = cost;
    if (cost < least) {
      least = cost;
      chosen = b;
    }
  }
  return chosen;
}

std::optional<BackupChooser::Change> BackupChooser::decide() {
  // A window is evaluated once two versions past its last iteration are ready.
  const std::int64_t end = next_ + (next_ == from_ ? first_window_ : window_);
  if (ready_.count(end + 1) == 0) return std::nullopt;
  std::vector<std::vector<double>> delays;
  for (std::int64_t t = next_; t < end; ++t) {
    auto r = ready_.find(t);
    if (r == ready_.end()) continue;
    std::vector<double> d(static_cast<std::size_t>(workers_), kNever);
    for (const auto& [rank, ms] : done_[t]) d[static_cast<std::size_t>(rank)] = ms - r->second;
    delays.push_back(std::move(d));
  }
  ready_.erase(ready_.begin(), ready_.lower_bound(end));
  done_.erase(done_.begin(), done_.lower_bound(end));
  units_in_.erase(units_in_.begin(), units_in_.lower_bound({end, -1}));
  const std::int64_t from = next_;
  next_ = end;
  if (delays.empty()) return std::nullopt;
  std::vector<double> cost;
  const int b = best(delays, &cost);
  const double now = cost[static_cast<std::size_t>(backups_)];
  if (b == backups_ || !(cost[static_cast<std::size_t>(b)] < now * (1 - threshold_)))
    return std::nullopt;
  char why[256];
  std::snprintf(why, sizeof why,
                "backup:auto: B %d -> %d after iterations %lld..%lld: %.1f ms per worker's "
                "gradient waiting for %d of %d pushes, against %.1f ms with B %d",
                backups_, b, static_cast<long long>(from), static_cast<long long>(end - 1),
                cost[static_cast<std::size_t>(b)], workers_ - b, workers_, now, backups_);
  backups_ = b;
  return Change{b, why};
}

}  // namespace dynacomm::ps
