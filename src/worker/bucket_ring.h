// The communication side of --arch allreduce: as backward hands over each unit's gradients,
// the bucket they complete is summed over the workers' ring (collective/ring_group.h) on a
// thread of its own, one bucket at a time in send order, so the all-reduce of the top
// buckets overlaps the backward of the rest. Forward waits for nothing: every worker holds
// the whole model.
//
//   BucketRing ring(*model, *group, timeout);
//   model->set_observer(&ring);
//   ring.begin(it, buckets);          // before forward
//   loss.backward();                  // buckets leave as their units are ready
//   ring.finish();                    // every bucket summed: ring.sums()
//
// Training thread: begin, finish and the accessors; backward's thread: the observer calls.
// The vote to stop is worker::stop_requested() (worker.h) when the top unit's bucket leaves.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "base/thread_annotations.h"
#include "collective/ring_group.h"
#include "compress/compressor.h"
#include "compress/powersgd.h"
#include "model/model.h"
#include "plan/model/plan.h"
#include "worker/unit_times.h"

namespace dynacomm::worker {

class BucketRing : public model::UnitObserver {
 public:
  using Clock = std::chrono::steady_clock;

  // With `low_rank` (--compress powersgd:R; it outlives the ring), each bucket is summed
  // as PowerSGD's two factors (compress/powersgd.h): two all-reduces, the second after the
  // first's sums are in. With `selected` (--compress randomk:R, a linear codec whose
  // encoding is float32 values at places every worker draws alike from the shared seed;
  // it outlives the ring), only each unit's encoding is summed, and decoded after.
  BucketRing(model::Model& model, collective::RingGroup& group, std::chrono::milliseconds timeout,
             compress::PowerSgd* low_rank = nullptr, compress::Compressor* selected = nullptr);
  ~BucketRing() override;  // waits for a bucket on its way (the ring's steps time out)

  // Iteration `it` with `buckets` (send order: the first holds the top unit).
  void begin(std::int64_t it, const std::vector<plan::Segment>& buckets);
  // Waits until every bucket is summed; rethrows the ring's failure (Error, Timeout).
  void finish();
  // Every unit's gradients summed over the workers, units in order, after finish().
  const std::vector<float>& sums() const { return sums_; }
  // How many workers asked to stop in this iteration (a vote carried by the bucket holding
  // the top unit, read when it leaves): every worker sees the same count, so all stop after
  // the same iteration.
  int stop_votes() const { return static_cast<int>(sums_.back()); }
  std::int64_t offset(int unit) const { return offsets_[static_cast<std::size_t>(unit)]; }

  struct BucketTime {
    std::int64_t bytes = 0;
    Clock::time_point start, end;  // waiting for the ring's turn left out
    double compute_ms = 0;         // of that, encoding and decoding on this worker
  };
  const std::vector<BucketTime>& bucket_times() const { return times_; }
  // The iteration's gate marks (no waits at the gates; no CPU clock: zeros).
  GateMarks marks(Clock::time_point forward_end) const;

  void before_forward(int unit) override;
  void gradients_ready(int unit) override;

 private:
  void run(std::int64_t it);  // the communication thread
  // A bucket's units in sums_ summed over the workers: dense, or as PowerSGD's factors.
  // Their bytes on the ring.
  std::int64_t sum_dense(const plan::Segment& s, const std::string& what);
  std::int64_t sum_low_rank(const plan::Segment& s, const std::string& what, BucketTime& time);
  std::int64_t sum_selected(const plan::Segment& s, std::int64_t it, const std::string& what,
                            BucketTime& time);

  model::Model& model_;
  collective::RingGroup& group_;
  const std::chrono::milliseconds timeout_;
  std::vector<std::int64_t> offsets_;  // of each unit in the flat gradient; and the end
  std::vector<float> sums_;            // the flat gradient, then the stop vote
  compress::PowerSgd* low_rank_;
  std::vector<float> first_, second_;  // PowerSGD's two sums; the first ends with the vote
  compress::Compressor* selected_;
  std::vector<std::int64_t> at_;  // of each unit's encoding in encoded_ (floats); the end
  std::vector<float> encoded_;    // the units' encodings, then the vote
  std::vector<float> scratch_;    // a decoded unit
  std::vector<plan::Segment> buckets_;
  std::vector<BucketTime> times_;
  GateMarks marks_;
  std::thread thread_;
  std::exception_ptr failure_;

  std::mutex mu_;
  std::condition_variable ready_cv_;
  std::vector<bool> ready_ DYNACOMM_GUARDED_BY(mu_);
  bool abandon_ DYNACOMM_GUARDED_BY(mu_) = false;
};

}  // namespace dynacomm::worker
