#include "worker/stretch_tracker.h"

#include <algorithm>
#include <iterator>

namespace dynacomm::worker {

namespace {
double ms_since(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

void StretchTracker::open(std::int64_t it, bool cpu_valid, const UnitTimes& t,
                          std::chrono::steady_clock::time_point started) {
  if (!cpu_valid || !(it < warmup_ ? it > 0 || warmup_ == 1 : idle_wall_per_cpu_ > 0)) return;
  OpenSpans open{it, {}, {}};
  for (std::size_t u = 0; u < t.forward_ms.size(); ++u) {
    open.windows.emplace_back(ms_since(started, t.forward_span[u].first),
                              ms_since(started, t.forward_span[u].second));
    open.spans.push_back({t.forward_ms[u], t.forward_cpu[u], 0, 0});
    open.windows.emplace_back(ms_since(started, t.backward_span[u].first),
                              ms_since(started, t.backward_span[u].second));
    open.spans.push_back({t.backward_ms[u], t.backward_cpu[u], 0, 0});
  }
  open_.push_back(std::move(open));
}

void StretchTracker::count(std::int64_t it, plan::LinkProfile& given) {
  bool refit = false;
  while (!open_.empty() &&
         (open_.front().iteration < warmup_ || open_.front().iteration <= it - 2)) {
    OpenSpans& open = open_.front();
    plan::add_busy_times(open.spans, open.windows, recent_busy_);
    if (open.iteration < warmup_) {
      warmup_spans_.insert(warmup_spans_.end(), open.spans.begin(), open.spans.end());
    } else {
      online_spans_.push_back(std::move(open.spans));
      if (online_spans_.size() > static_cast<std::size_t>(std::max(1, window_)))
        online_spans_.pop_front();
      refit = true;
    }
    open_.pop_front();
  }
  // What ended before the oldest open span began overlaps nothing still to count.
  recent_busy_.erase(recent_busy_.begin(),
                     std::find_if(recent_busy_.begin(), recent_busy_.end(), [&](const auto& b) {
                       return !open_.empty() && b.end_ms >= open_.front().windows.front().first;
                     }));
  if (!refit) return;
  std::vector<plan::UnitSpan> spans;
  for (const auto& v : online_spans_) spans.insert(spans.end(), v.begin(), v.end());
  const plan::ComputeStretch f = plan::fit_compute_stretch(spans, idle_wall_per_cpu_);
  if (f.fitted_down) given.compute_stretch_down = f.down;  // else as it was
  if (f.fitted_up) given.compute_stretch_up = f.up;
  stretch_from_[it + 1] = {given.compute_stretch_down, given.compute_stretch_up};
}

plan::ComputeStretch StretchTracker::fit_warmup(std::int64_t it) {
  const plan::ComputeStretch f = plan::fit_compute_stretch(warmup_spans_);
  idle_wall_per_cpu_ = f.idle_wall_per_cpu;
  stretch_from_[it] = {f.down, f.up};
  return f;
}

std::vector<double> StretchTracker::at_idle_speed(const std::vector<double>& cpu_ms) const {
  std::vector<double> ms(cpu_ms.size());
  for (std::size_t u = 0; u < cpu_ms.size(); ++u) ms[u] = cpu_ms[u] * idle_wall_per_cpu_;
  return ms;
}

std::optional<std::pair<double, double>> StretchTracker::stretch_at(std::int64_t it) const {
  auto s = stretch_from_.upper_bound(it);
  if (s == stretch_from_.begin()) return std::nullopt;
  return std::prev(s)->second;
}

}  // namespace dynacomm::worker
