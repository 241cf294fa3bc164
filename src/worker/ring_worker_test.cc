// --arch allreduce through the real worker: its ranks as threads of this process, the ring
// over TCP loopback (collective/ring_group.h). Every bucket plan, and every rank, ends with
// the same weights bit for bit; with two workers they are the PS's under BSP too (the sum of
// two floats does not depend on their order, and the optimiser is the same code).
#include "worker/ring_worker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "plan/replan/trace_file.h"
#include "worker/test_cluster.h"
#include "worker/worker.h"

namespace dynacomm::worker {
namespace {

WorkerOptions short_job(const std::string& buckets) {
  WorkerOptions o;
  o.arch = "allreduce";
  o.buckets = buckets;
  o.model = "lenet5";  // no dropout: its masks would come from this process's one generator
  o.batch = 32;
  o.iterations = 6;
  o.warmup = 2;
  o.train_samples = 1000;
  o.test_samples = 100;
  o.link.down_bps = o.link.up_bps = 1e9;
  o.link.latency_ms = 1;
  o.sgd.schedule = optim::parse_lr_schedule("cosine");
  o.timeout = std::chrono::seconds(120);
  return o;
}

// A codec the ring sums (--compress), run with one bucket and with one per unit over 3
// workers: every bucket plan and every rank ends with the same weights, and not with those
// of dense all-reduce. Rank 0's result, and its bytes up per iteration as a fraction of
// dense's.
std::pair<WorkerResult, double> same_weights_for_every_bucket_plan(const std::string& codec) {
  WorkerOptions one = short_job("one"), layerwise = short_job("layerwise");
  one.compression = layerwise.compression = codec;
  const std::vector<WorkerResult> a = testing::run_ring_job(one, 3);
  const std::vector<WorkerResult> b = testing::run_ring_job(layerwise, 3);
  EXPECT_FALSE(a[0].final_weights.empty()) << codec;
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(a[r].final_weights == a[0].final_weights) << codec << " rank " << r;
    EXPECT_TRUE(b[r].final_weights == a[0].final_weights) << codec << " rank " << r;
  }
  const WorkerResult dense = testing::run_ring_job(short_job("one"), 3)[0];
  EXPECT_FALSE(dense.final_weights == a[0].final_weights) << codec;
  return {a[0], static_cast<double>(a[0].iterations.back().bytes_up) /
                    static_cast<double>(dense.iterations.back().bytes_up)};
}

TEST(RingWorker, EveryBucketPlanAndEveryRankEndsWithTheSameWeights) {
  const std::vector<WorkerResult> reference = testing::run_ring_job(short_job("one"), 3);
  ASSERT_FALSE(reference[0].final_weights.empty());
  EXPECT_GT(reference[0].test_accuracy, 0);
  for (int r = 1; r < 3; ++r) EXPECT_TRUE(reference[r].final_weights == reference[0].final_weights);
  for (const std::string rule : {"layerwise", "planned", "ddp"}) {
    const std::vector<WorkerResult> got = testing::run_ring_job(short_job(rule), 3);
    for (int r = 0; r < 3; ++r)
      EXPECT_TRUE(got[r].final_weights == reference[0].final_weights)
          << rule << " rank " << r << " changed the weights";
  }
  // And the weights did move: a job of one more iteration ends elsewhere.
  WorkerOptions longer = short_job("one");
  longer.iterations = 7;
  EXPECT_FALSE(testing::run_ring_job(longer, 3)[0].final_weights == reference[0].final_weights);
}

// --compress fp16: half the bytes on the ring, and still the same weights for every bucket
// plan and every rank (collective/ring_group.h), not those of float32.
TEST(RingWorker, HalfOnTheWireHalvesTheBytesAndKeepsEveryBucketPlansWeights) {
  const auto [half, ratio] = same_weights_for_every_bucket_plan("fp16");
  EXPECT_NEAR(ratio, 0.5, 0.01);
  EXPECT_GT(half.test_accuracy, 0);
}

// --compress powersgd:R (compress/powersgd.h): two sums per bucket, far fewer bytes, and
// still the same weights for every bucket plan and every rank.
TEST(RingWorker, PowerSgdSendsTheFactorsAndKeepsEveryBucketPlansWeights) {
  const auto [low_rank, ratio] = same_weights_for_every_bucket_plan("powersgd:2");
  EXPECT_LT(ratio, 0.2);  // lenet5's matrices at rank 2
  EXPECT_GT(ratio, 0);
  for (float w : low_rank.final_weights) ASSERT_TRUE(std::isfinite(w));
}

// A rank so high that no matrix shrinks: every tensor travels dense in the first sum, and
// two workers' sums are the dense ones bit for bit (the plumbing adds nothing).
TEST(RingWorker, PowerSgdOfAHighRankIsTheDenseSumForTwoWorkers) {
  WorkerOptions high = short_job("layerwise");
  high.compression = "powersgd:1024";
  EXPECT_TRUE(testing::run_ring_job(high, 2)[0].final_weights ==
              testing::run_ring_job(short_job("layerwise"), 2)[0].final_weights);
}

// --compress randomk:R: every worker draws the same places from the shared seed, so only
// the values are summed; the bytes shrink by R, and every bucket plan and rank still ends
// with the same weights (the encodings' layout does not depend on the buckets).
TEST(RingWorker, RandomKSumsOnlyTheDrawnValuesAndKeepsEveryBucketPlansWeights) {
  const auto [sparse, ratio] = same_weights_for_every_bucket_plan("randomk:0.05");
  EXPECT_NEAR(ratio, 0.05, 0.005);
  for (float w : sparse.final_weights) ASSERT_TRUE(std::isfinite(w));
}

// Every value drawn and no error feedback: the encodings are the gradients in order, and
// two workers' sums are the dense ones bit for bit (the plumbing adds nothing).
TEST(RingWorker, RandomKOfEveryValueIsTheDenseSumForTwoWorkers) {
  WorkerOptions all = short_job("layerwise");
  all.compression = "randomk:1,noef";
  EXPECT_TRUE(testing::run_ring_job(all, 2)[0].final_weights ==
              testing::run_ring_job(short_job("layerwise"), 2)[0].final_weights);
}

TEST(RingWorker, RingCodecsAreRefusedOffTheRingWithAClearMessage) {
  for (const char* arch : {"ps", "gossip"}) {
    WorkerOptions o = short_job("one");
    o.arch = arch;
    o.ps = "tcp://127.0.0.1:1";
    o.ring_store = "127.0.0.1:1";
    o.ring_host = "127.0.0.1";
    o.compression = "powersgd:4";
    try {
      o.validate();
      ADD_FAILURE() << arch << " took powersgd";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("--arch allreduce"), std::string::npos) << e.what();
    }
  }
  WorkerOptions gossip = short_job("one");
  gossip.arch = "gossip";
  gossip.ring_store = "127.0.0.1:1";
  gossip.ring_host = "127.0.0.1";
  gossip.compression = "randomk:0.01";
  try {
    gossip.validate();
    ADD_FAILURE() << "gossip took randomk";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("is for --arch allreduce and --arch ps"),
              std::string::npos)
        << e.what();
  }
  WorkerOptions bad = short_job("one");  // --arch allreduce
  bad.ring_store = "127.0.0.1:1";
  bad.ring_host = "127.0.0.1";
  bad.compression = "randomk:0.01";
  EXPECT_NO_THROW(bad.validate());
  bad.compression = "randomk:2";
  try {
    bad.validate();
    ADD_FAILURE() << "allreduce took randomk:2";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("ratio must be in (0, 1]"), std::string::npos) << e.what();
  }
}

TEST(RingWorker, PlannedBucketsComeWithAPredictionAndEveryUnitInOneBucket) {
  const WorkerResult r = testing::run_ring_job(short_job("planned"), 2)[0];
  EXPECT_GT(r.predicted_ms, 0);
  EXPECT_NO_THROW(r.plan.validate(r.profile.num_units()));
  EXPECT_EQ(r.iterations.size(), 6u);
  EXPECT_GT(r.iterations.back().bytes_up, 0);
}

// A cnn job on 2 ranks, re-planned every 3 iterations after a 4-iteration warm-up on
// `bps` both ways at `latency_ms` a step; from then on the link follows `trace_row`
// ("iteration,down,up,latency", keyed by iteration, user-space emulation).
WorkerOptions replanned_cnn_job(double bps, double latency_ms, std::int64_t iterations,
                                const std::string& trace_row) {
  WorkerOptions o = short_job("planned");
  o.model = "cnn";
  o.warmup = 4;
  o.iterations = iterations;
  o.link.down_bps = o.link.up_bps = bps;
  o.link.latency_ms = latency_ms;
  o.replan_options.min_interval = 3;
  std::istringstream trace("iteration,down,up,latency\n" + trace_row + "\n");
  o.link_trace = plan::parse_link_trace(trace, "test trace");
  return o;
}

// Every rank ran the same plan and buckets in every iteration, and ends with the same
// weights.
void expect_ranks_agree(const std::vector<WorkerResult>& got) {
  ASSERT_EQ(got[1].iterations.size(), got[0].iterations.size());
  for (std::size_t i = 0; i < got[0].iterations.size(); ++i) {
    EXPECT_EQ(got[1].iterations[i].plan_id, got[0].iterations[i].plan_id) << "iteration " << i;
    EXPECT_EQ(got[1].iterations[i].push_segments, got[0].iterations[i].push_segments)
        << "iteration " << i;
  }
  EXPECT_TRUE(got[1].final_weights == got[0].final_weights);
}

// Re-planning while the job runs: the ring's latency rises to 60 ms a step after a warm-up
// on a 50 Mbit/s link without latency, which planned several buckets for cnn (its
// backward hides small ones); each bucket now costs two steps' latency, and rank 0 refits
// the cost and changes every rank to one bucket at the same iteration.
TEST(RingWorker, BucketsAreReplannedForEveryRankWhenTheLinkChanges) {
  const std::vector<WorkerResult> got =
      testing::run_ring_job(replanned_cnn_job(50e6, 0, 13, "6,1gbit,1gbit,60ms"), 2);
  ASSERT_GT(got[0].plans.front().plan.push.size(), 1u) << "the warm-up planned one bucket";
  ASSERT_FALSE(got[0].plan_changes.empty());
  EXPECT_GE(got[0].plan_changes.front().iteration, 7);
  EXPECT_EQ(got[0].plans.back().plan.push, (std::vector<plan::Segment>{{0, 3}}));
  expect_ranks_agree(got);
  EXPECT_GT(got[0].iterations.back().plan_id, 1);
  EXPECT_EQ(got[1].plans.size(), got[0].plans.size());
}

// The other way, a change of latency alone: the warm-up on 1 Gbit/s at 60 ms a step
// planned one bucket, and from iteration 4 the latency is gone. One bucket's all-reduces
// alone would read that as more bandwidth and keep one bucket; rank 0 runs one iteration
// with the probe's two buckets (every rank the same), refits both figures, and plans more
// buckets.
TEST(RingWorker, AOneBucketPlanSeesALatencyDropThroughAProbe) {
  WorkerOptions o = replanned_cnn_job(1e9, 60, 12, "4,1gbit,1gbit,0ms");
  o.replan_options.threshold = 0;  // the gain is ~10%: no margin for a busy machine's noise
  const std::vector<WorkerResult> got = testing::run_ring_job(o, 2);
  ASSERT_EQ(got[0].plans.front().plan.push.size(), 1u) << "the warm-up planned buckets";
  ASSERT_FALSE(got[0].plan_changes.empty());
  EXPECT_GT(got[0].plans.back().plan.push.size(), 1u);
  bool probed = false;
  for (std::size_t i = 4; i < got[0].iterations.size(); ++i)
    probed |= got[0].iterations[i].plan_id == 1 && got[0].iterations[i].push_segments == 2;
  EXPECT_TRUE(probed);
  expect_ranks_agree(got);
}

TEST(RingWorker, TwoWorkersLearnThePsWeightsUnderBsp) {
  WorkerOptions ring = short_job("planned");
  WorkerOptions ps = ring;
  ps.arch = "ps";
  ps.scheduler = "sequential";
  const std::vector<float> reference = testing::run_ps_job(ps, 2).final_weights;
  ASSERT_FALSE(reference.empty());
  EXPECT_TRUE(testing::run_ring_job(ring, 2)[0].final_weights == reference);
}

}  // namespace
}  // namespace dynacomm::worker
