#include "worker/left_behind.h"

#include <algorithm>

#include "base/error.h"

namespace dynacomm::worker {

LeftBehind::LeftBehind(int window) : window_(window) {
  if (window < 3) throw InvalidInput("LeftBehind: the window must be at least 3 rounds");
}

int LeftBehind::skipped() const {
  return static_cast<int>(std::count(skips_.begin(), skips_.end(), true));
}

bool LeftBehind::round(std::int64_t iteration) {
  const std::int64_t last = last_;
  last_ = iteration;
  if (last < 0) return false;  // the first round says nothing
  skips_.push_back(iteration > last + 1);
  if (static_cast<int>(skips_.size()) > window_) skips_.pop_front();
  if (static_cast<int>(skips_.size()) < window_) return false;
  const bool was = left_behind_;
  if (!was && skipped() >= window_ - 1) left_behind_ = true;
  if (was && skipped() <= 1) left_behind_ = false;
  return left_behind_ != was;
}

}  // namespace dynacomm::worker
