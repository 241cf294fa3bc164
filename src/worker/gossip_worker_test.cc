// --arch gossip through the real worker: its ranks as threads of this process, the
// exchange over TCP loopback (collective/ring_group.h).
#include "worker/gossip_worker.h"

#include <gtest/gtest.h>

#include <vector>

#include "worker/test_cluster.h"
#include "worker/worker.h"

namespace dynacomm::worker {
namespace {

WorkerOptions short_job(const std::string& arch, std::int64_t iterations) {
  WorkerOptions o;
  o.arch = arch;
  o.model = "lenet5";  // no dropout: its masks would come from this process's one generator
  o.batch = 32;
  o.iterations = iterations;
  o.warmup = 2;
  o.train_samples = 2000;
  o.test_samples = 500;
  o.link.down_bps = o.link.up_bps = 1e9;
  o.link.latency_ms = 1;
  o.timeout = std::chrono::seconds(120);
  return o;
}

// With no neighbour the mixing weight is 1 and gossip is plain SGD: the same bits as an
// all-reduce of one worker.
TEST(GossipWorker, OneWorkerIsPlainSgd) {
  const std::vector<float> sgd =
      testing::run_ring_job(short_job("allreduce", 5), 1)[0].final_weights;
  ASSERT_FALSE(sgd.empty());
  EXPECT_TRUE(testing::run_ring_job(short_job("gossip", 5), 1)[0].final_weights == sgd);
}

// Every rank ends with the consensus (the models' average, the same bits everywhere), each
// iteration sends the model (and the stop slot) once to each of its two neighbours, and the
// prediction is made after the warm-up.
TEST(GossipWorker, EveryRankEndsWithTheSameAverageAndSendsItsModelToTwoNeighbours) {
  const std::vector<WorkerResult> got = testing::run_ring_job(short_job("gossip", 6), 3);
  ASSERT_FALSE(got[0].final_weights.empty());
  const std::int64_t floats = static_cast<std::int64_t>(got[0].final_weights.size()) + 1;
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(got[r].final_weights == got[0].final_weights) << "rank " << r;
    ASSERT_EQ(got[r].iterations.size(), 6u);
    for (const IterationRecord& it : got[r].iterations) EXPECT_EQ(it.bytes_up, 2 * floats * 4);
  }
  EXPECT_GT(got[0].predicted_ms, 0);
  EXPECT_EQ(got[0].plan.scheduler, "gossip-ring");
  // The models did not stay together (each took its own gradient) yet learned: a job of
  // the same length with one worker ends elsewhere.
  EXPECT_FALSE(testing::run_ring_job(short_job("gossip", 6), 1)[0].final_weights ==
               got[0].final_weights);
}

// D-PSGD learns about as fast per iteration as the all-reduce's exact average on a ring of
// four and on a torus of four.
TEST(GossipWorker, RingAndTorusLearnAlmostAsWellAsAllreduce) {
  WorkerOptions allreduce = short_job("allreduce", 80);
  allreduce.epochs = 10;
  const double exact = testing::run_ring_job(allreduce, 4)[0].test_accuracy;
  EXPECT_GT(exact, 0.5);
  for (const char* topology : {"ring", "torus"}) {
    WorkerOptions o = allreduce;
    o.arch = "gossip";
    o.topology = topology;
    const double got = testing::run_ring_job(o, 4)[0].test_accuracy;
    EXPECT_GT(got, exact - 0.05) << topology << ": " << got << " against " << exact;
  }
}

}  // namespace
}  // namespace dynacomm::worker
