#include "worker/bucket_ring.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/error.h"
#include "worker/worker.h"

namespace dynacomm::worker {

BucketRing::BucketRing(model::Model& model, collective::RingGroup& group,
                       std::chrono::milliseconds timeout, compress::PowerSgd* low_rank,
                       compress::Compressor* selected)
    : model_(model), group_(group), timeout_(timeout), low_rank_(low_rank), selected_(selected) {
  const int n = model.num_units();
  offsets_.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int u = 0; u < n; ++u) offsets_[u + 1] = offsets_[u] + model.units()[u].params;
  sums_.assign(static_cast<std::size_t>(offsets_.back()) + 1, 0.f);
  if (low_rank_) {
    const std::size_t t = low_rank_->num_tensors();
    first_.assign(static_cast<std::size_t>(low_rank_->first_offset(t)) + 1, 0.f);
    second_.assign(static_cast<std::size_t>(low_rank_->second_offset(t)), 0.f);
  }
  const auto zero = std::vector<double>(static_cast<std::size_t>(n), 0.0);
  marks_.called.resize(n);
  marks_.passed.resize(n);
  marks_.ready.resize(n);
  marks_.cpu_called = marks_.cpu_passed = marks_.cpu_ready = zero;
}

BucketRing::~BucketRing() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    abandon_ = true;
  }
  ready_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BucketRing::begin(std::int64_t it, const std::vector<plan::Segment>& buckets) {
  if (thread_.joinable()) throw Error("all-reduce: iteration " + std::to_string(it) +
                                      " begun before the last one finished");
  buckets_ = buckets;
  times_.assign(buckets.size(), {});
  if (selected_) {  // an encoding's size may depend on the iteration
    const int n = model_.num_units();
    at_.assign(static_cast<std::size_t>(n) + 1, 0);
    for (int u = 0; u < n; ++u) {
      const std::size_t bytes = selected_->encoded_bytes(model_.units()[u].params, it);
      if (bytes % sizeof(float))
        throw Error("all-reduce: " + selected_->name() + " does not encode float32 values");
      at_[u + 1] = at_[u] + static_cast<std::int64_t>(bytes / sizeof(float));
    }
    encoded_.assign(static_cast<std::size_t>(at_.back()) + 1, 0.f);
  }
  failure_ = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready_.assign(static_cast<std::size_t>(model_.num_units()), false);
    abandon_ = false;
  }
  thread_ = std::thread([this, it] { run(it); });
}

void BucketRing::finish() {
  if (thread_.joinable()) thread_.join();
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

GateMarks BucketRing::marks(Clock::time_point forward_end) const {
  GateMarks m = marks_;
  m.forward_end = forward_end;
  return m;
}

void BucketRing::before_forward(int unit) {
  marks_.called[unit] = marks_.passed[unit] = Clock::now();
}

void BucketRing::gradients_ready(int unit) {
  marks_.ready[unit] = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready_[static_cast<std::size_t>(unit)] = true;
  }
  ready_cv_.notify_all();
}

void BucketRing::run(std::int64_t it) {
  try {
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const plan::Segment s = buckets_[b];
      {
        std::unique_lock<std::mutex> lock(mu_);
        const bool ready = ready_cv_.wait_for(lock, timeout_, [&] {
          return abandon_ ||
                 std::all_of(ready_.begin() + s.first, ready_.begin() + s.last + 1,
                             [](bool r) { return r; });
        });
        if (abandon_) return;
        if (!ready)
          throw Timeout("all-reduce: iteration " + std::to_string(it) + ": units " +
                        std::to_string(s.first) + ".." + std::to_string(s.last) +
                        " had no gradients within " + std::to_string(timeout_.count()) + " ms");
      }
      times_[b].start = Clock::now();
      for (int u = s.first; u <= s.last; ++u)
        std::memcpy(sums_.data() + offsets_[u], model_.grads(u),
                    static_cast<std::size_t>(model_.units()[u].bytes()));
      const std::string what = "iteration " + std::to_string(it) + " bucket " + std::to_string(b) +
                               " (units " + std::to_string(s.first) + ".." +
                               std::to_string(s.last) + ")";
      times_[b].bytes = low_rank_   ? sum_low_rank(s, what, times_[b])
                        : selected_ ? sum_selected(s, it, what, times_[b])
                                    : sum_dense(s, what);
      times_[b].end = Clock::now();
    }
  } catch (...) {
    failure_ = std::current_exception();
  }
}

std::int64_t BucketRing::sum_dense(const plan::Segment& s, const std::string& what) {
  const std::int64_t from = offsets_[s.first];
  std::int64_t count = offsets_[s.last + 1] - from;
  if (s.last + 1 == model_.num_units()) {  // the top unit's bucket carries the vote
    sums_.back() = stop_requested() ? 1.f : 0.f;
    ++count;
  }
  group_.allreduce_sum(sums_.data() + from, count, from, what);
  return (offsets_[s.last + 1] - from) * group_.wire_bytes();
}

namespace {

// Runs `step`, adding its duration to the bucket's compute time.
template <typename Step>
void time_into(BucketRing::BucketTime& time, Step&& step) {
  const auto began = BucketRing::Clock::now();
  step();
  time.compute_ms +=
      std::chrono::duration<double, std::milli>(BucketRing::Clock::now() - began).count();
}

}  // namespace

std::int64_t BucketRing::sum_low_rank(const plan::Segment& s, const std::string& what,
                                      BucketTime& time) {
  compress::PowerSgd& p = *low_rank_;
  const auto [t0, t1] = p.tensors_in(offsets_[s.first], offsets_[s.last + 1]);
  const auto timed = [&time](auto&& step) { time_into(time, step); };
  timed([&] { p.first(t0, t1, sums_.data(), first_.data()); });
  const std::int64_t from1 = p.first_offset(t0), to1 = p.first_offset(t1);
  const bool top = s.last + 1 == model_.num_units();
  if (top) first_.back() = stop_requested() ? 1.f : 0.f;  // after the last tensor's
  group_.allreduce_sum(first_.data() + from1, to1 - from1 + (top ? 1 : 0), from1,
                       what + ", PowerSGD's P");
  if (top) sums_.back() = first_.back();
  timed([&] { p.second(t0, t1, first_.data(), second_.data()); });
  const std::int64_t from2 = p.second_offset(t0), to2 = p.second_offset(t1);
  if (to2 > from2)
    group_.allreduce_sum(second_.data() + from2, to2 - from2, from2, what + ", PowerSGD's Q");
  timed([&] { p.finish(t0, t1, first_.data(), second_.data(), group_.size(), sums_.data()); });
  return (to1 - from1 + to2 - from2) * group_.wire_bytes();
}

// Each unit's encoding (error feedback on this worker's residual), the encodings summed
// as floats (sums of one slot's encodings decode to the sum), each sum decoded into sums_.
std::int64_t BucketRing::sum_selected(const plan::Segment& s, std::int64_t it,
                                      const std::string& what, BucketTime& time) {
  compress::Compressor& c = *selected_;
  auto* bytes = reinterpret_cast<std::uint8_t*>(encoded_.data());
  time_into(time, [&] {
    for (int u = s.first; u <= s.last; ++u)
      c.encode({u, it}, sums_.data() + offsets_[u], model_.units()[u].params, bytes + 4 * at_[u]);
  });
  const std::int64_t from = at_[s.first], to = at_[s.last + 1];
  const bool top = s.last + 1 == model_.num_units();
  if (top) encoded_.back() = stop_requested() ? 1.f : 0.f;
  group_.allreduce_sum(encoded_.data() + from, to - from + (top ? 1 : 0), from,
                       what + ", " + c.name() + "'s values");
  if (top) sums_.back() = encoded_.back();
  time_into(time, [&] {
    for (int u = s.first; u <= s.last; ++u) {
      const std::int64_t n = model_.units()[u].params;
      const float* sum = c.decode({u, it}, bytes + 4 * at_[u],
                                  static_cast<std::size_t>(4 * (at_[u + 1] - at_[u])), n, scratch_);
      std::memcpy(sums_.data() + offsets_[u], sum, static_cast<std::size_t>(n) * sizeof(float));
    }
  });
  return (to - from) * group_.wire_bytes();
}

}  // namespace dynacomm::worker
