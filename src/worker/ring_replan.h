// Re-planning --arch allreduce's buckets while the job runs (the model and the decision:
// plan/replan/ring_replan.h). Under --replan dynamic every --replan-interval iterations
// after the first plan, under epoch at every epoch's start; static and oracle keep the
// first plan (oracle hands the PS's planner a link trace's true figures; the ring has no
// such path, and says so). Rank 0 refits the ring's cost to the all-reduces since its last
// look, plans, and publishes the buckets (or "same") under a key of that iteration; every
// rank reads it there, so all run the same buckets. When those all-reduces were all of one
// size (one bucket), rank 0 first publishes a probe (at most every 10 re-plans): one
// iteration with two unequal buckets, whose sizes let the refit see the fixed part (a
// latency change) too. Every bucket plan sums each element in
// the same order (collective/ring_group.h): the weights do not depend on when, or whether,
// the buckets change.
//
//   RingReplanner replanner(o, group, result, log, progress);
//   replanner.start(it, buckets, profile, cost);        // the first plan
//   const auto& buckets = replanner.before_iteration(it, step);
//   ...  replanner.record(buckets, ring.bucket_times());
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "collective/ring_group.h"
#include "plan/estimate/link_fit.h"
#include "plan/model/plan.h"
#include "plan/model/profile.h"
#include "plan/model/ring.h"
#include "worker/bucket_ring.h"
#include "worker/run_log.h"
#include "worker/worker.h"

namespace dynacomm::worker {

// Buckets as "first-last,first-last,..." in send order (the store's text), and back,
// checked against the model's `units` (Error naming the text otherwise).
std::string encode_buckets(const std::vector<plan::Segment>& buckets);
std::vector<plan::Segment> decode_buckets(const std::string& text, int units);

// Each all-reduce's bytes and the ms its ring took (encoding and decoding left out).
std::vector<plan::TransferSample> transfer_samples(const std::vector<BucketRing::BucketTime>& t);

class RingReplanner {
 public:
  RingReplanner(const WorkerOptions& o, collective::RingGroup& group, WorkerResult& result,
                RunLog& log, std::ostream& progress);

  // The first plan, run from iteration `it`; rank 0 passes the profile and the ring's cost
  // it was made from (the other ranks' are not read).
  void start(std::int64_t it, std::vector<plan::Segment> buckets, plan::ModelProfile profile,
             plan::RingCost cost);
  // A training iteration's all-reduces (`times`), once it is done.
  void record(const std::vector<BucketRing::BucketTime>& times);
  // Before iteration `it` (step `step` of its epoch) runs: the buckets to run it with.
  // Throws Timeout when rank 0's decision does not come.
  const std::vector<plan::Segment>& before_iteration(std::int64_t it, std::int64_t step);
  int plan_id() const { return plan_id_; }
  const std::vector<plan::Segment>& buckets() const { return buckets_; }

 private:
  bool due(std::int64_t it, std::int64_t step) const;
  std::string decide(std::int64_t it);  // rank 0: the new buckets, or "same"

  const WorkerOptions& o_;
  collective::RingGroup& group_;
  WorkerResult& result_;
  RunLog& log_;
  std::ostream& progress_;
  std::vector<plan::Segment> buckets_;
  plan::ModelProfile profile_;
  plan::RingCost last_, cost_;  // the last fit; the one the buckets in use were made for
  std::vector<plan::TransferSample> recent_;
  std::int64_t started_ = -1;
  int units_ = 0;
  int plan_id_ = 1;
  // Probing (plan/replan/ring_replan.h: ring_probe): rank 0 publishes kProbe and the probe's
  // buckets; every rank runs them for one iteration, then the decision, whose "same" means
  // the buckets from before the probe (resume_).
  static constexpr const char* kProbe = "probe:";
  bool probing_ = false;
  std::vector<plan::Segment> resume_;
  std::int64_t last_probe_ = -1000000;  // rank 0: the iteration of its last probe
};

}  // namespace dynacomm::worker
