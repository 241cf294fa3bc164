// The PS and real workers (the worker library, not the binary) as threads of this test
// process, over ZeroMQ inproc:// (one endpoint per job): the pattern of gloo's
// BaseTest::spawn. Each thread's
// exception is rethrown in the test. Seconds, not a process tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "model/model.h"
#include "plan/planners/planner.h"
#include "ps/checkpoint.h"
#include "ps/server.h"
#include "train/local_training.h"
#include "worker/test_cluster.h"
#include "worker/worker.h"

namespace dynacomm::worker {
namespace {

optim::SgdOptions job_sgd() {
  optim::SgdOptions s;
  s.schedule = optim::parse_lr_schedule("cosine");
  return s;
}

// A short job: 5 iterations of 32 images from the first 1000, 2 of them warm-up, fast links.
WorkerOptions short_job(const std::string& model, const std::string& scheduler) {
  WorkerOptions o;
  o.model = model;
  o.scheduler = scheduler;
  o.batch = 32;
  o.iterations = 5;
  o.warmup = 2;
  o.train_samples = 1000;
  o.test_samples = 100;
  o.link.down_bps = o.link.up_bps = 1e9;
  o.link.latency_ms = 1;
  o.threads = 1;
  o.sgd = job_sgd();  // the PS's (local SGD's device steps take its learning rate)
  o.timeout = std::chrono::seconds(120);  // only a failure waits; ThreadSanitizer runs 10x slower
  return o;
}

WorkerResult run_job_result(const WorkerOptions& job, int workers) {
  return testing::run_ps_job(job, workers);
}

std::vector<float> run_job(const WorkerOptions& job, int workers) {
  return run_job_result(job, workers).final_weights;
}

// Every strategy learns the same weights, bit for bit (lenet5: no dropout, whose random
// masks come from libtorch's one generator per process).
TEST(ThreadedCluster, EveryStrategyGivesBitIdenticalWeights) {
  const std::vector<float> reference = run_job(short_job("lenet5", "sequential"), 2);
  ASSERT_FALSE(reference.empty());
  for (const std::string& s : plan::planner_names()) {
    if (s == "sequential") continue;
    EXPECT_TRUE(run_job(short_job("lenet5", s), 2) == reference) << s << " changed the weights";
  }
}

// Compressed pulls (compress/pull_codec.h) through the real worker: updates are per atom
// and every worker's copy is the PS's public copy, so every strategy over the same atoms
// (full-duplex ones too, whose early replies wait to be applied) learns the same weights;
// and the pulls did compress (they are not dense pulls' weights).
TEST(ThreadedCluster, CompressedPullsGiveBitIdenticalWeightsUnderEveryStrategy) {
  WorkerOptions job = short_job("lenet5", "sequential");
  job.iterations = 8;
  job.pull_compression = "topk:0.05";
  // Updates are per atom: every strategy here cuts the job into the same atoms (whole
  // units; dynacomm-fd would otherwise slice at its candidate sizes).
  job.planner.fd_slice_params.clear();
  const std::vector<float> reference = run_job(job, 2);
  ASSERT_FALSE(reference.empty());
  for (const std::string s : {"layerwise", "dynacomm", "dynacomm-fd", "bytescheduler"}) {
    job.scheduler = s;
    EXPECT_TRUE(run_job(job, 2) == reference) << s << " changed the weights";
  }
  job.pull_compression = "none";
  job.scheduler = "sequential";
  EXPECT_FALSE(run_job(job, 2) == reference);
}

std::int64_t bytes_pushed(const WorkerResult& r) {
  std::int64_t bytes = 0;
  for (const IterationRecord& i : r.iterations) bytes += i.bytes_up;
  return bytes;
}

// `job` for 11 iterations under BSP, and under `twin`, a mode the maths makes BSP, which
// must learn the same weights bit for bit; returns BSP's result.
WorkerResult bsp_and_its_twin(WorkerOptions& job, const std::string& twin) {
  job.iterations = 11;
  job.sync = "bsp";
  WorkerResult bsp = run_job_result(job, 2);
  job.sync = twin;
  EXPECT_TRUE(run_job(job, 2) == bsp.final_weights) << twin << " is not BSP";
  return bsp;
}

// Local SGD (optim/local_sgd.h) through the real worker: local:1 is BSP bit for bit; with
// H = 3 the weights change, the pushes are one per round (the warm-up counts rounds, so
// 11 steps are rounds of 3, 3, 3 and 2: 4 pushes against 11), and every strategy's
// segmented, overlapped exchanges of the rounds' sums learn the same weights.
TEST(ThreadedCluster, LocalSgdIsBspAtOneStepAndTheSameUnderEveryStrategy) {
  WorkerOptions job = short_job("lenet5", "sequential");
  const WorkerResult bsp = bsp_and_its_twin(job, "local:1");
  ASSERT_FALSE(bsp.final_weights.empty());
  job.sync = "local:3";
  const WorkerResult local = run_job_result(job, 2);
  EXPECT_FALSE(local.final_weights == bsp.final_weights);
  EXPECT_EQ(bytes_pushed(local) * 11, bytes_pushed(bsp) * 4);
  for (const std::string s : {"layerwise", "dynacomm", "dynacomm-fd", "bytescheduler"}) {
    job.scheduler = s;
    EXPECT_TRUE(run_job(job, 2) == local.final_weights) << s << " changed local:3's weights";
  }
}

// SSP through the real worker, whose pace the PS's pulls hold (no wait for its pushes'
// acks): ssp:0 is BSP bit for bit, and under ssp:2 both workers run the job to its end
// with a push of every iteration, as many bytes as BSP's, and finite weights.
TEST(ThreadedCluster, SspZeroIsBspAndSspTwoPushesEveryIteration) {
  WorkerOptions job = short_job("lenet5", "dynacomm-fd");
  const WorkerResult bsp = bsp_and_its_twin(job, "ssp:0");
  ASSERT_FALSE(bsp.final_weights.empty());
  job.sync = "ssp:2";
  const WorkerResult ssp = run_job_result(job, 2);
  ASSERT_EQ(ssp.final_weights.size(), bsp.final_weights.size());
  EXPECT_EQ(bytes_pushed(ssp), bytes_pushed(bsp));
  for (const float w : ssp.final_weights) ASSERT_TRUE(std::isfinite(w));
}

// --scheduler auto: both workers plan every strategy, agree through the PS on each one's
// job-wide prediction, and run the one predicted fastest (the same on both, or the job's
// full-duplex releases would stall); what it says lists the runners-up, each predicted no
// faster. Learning is untouched: the weights equal the sequential plan's.
TEST(ThreadedCluster, AutoRunsTheStrategyPredictedFastestForTheJob) {
  const WorkerResult r = run_job_result(short_job("lenet5", "auto"), 2);
  ASSERT_EQ(r.plans.size(), 1u);
  const std::string chosen = r.plans[0].scheduler;
  const std::vector<std::string> known = plan::planner_names();
  EXPECT_NE(std::find(known.begin(), known.end(), chosen), known.end()) << chosen;
  EXPECT_EQ(r.scheduler_choice.rfind(chosen + ", predicted ", 0), 0u) << r.scheduler_choice;
  EXPECT_NE(r.scheduler_choice.find("the fastest of all 9 strategies"), std::string::npos);
  std::vector<double> ms;  // the chosen one's, then the runners-up's, as stated
  std::istringstream words(r.scheduler_choice);
  for (std::string w, prev; words >> w; prev = w)
    if (w == "ms" || w.rfind("ms,", 0) == 0) ms.push_back(std::stod(prev));
  ASSERT_EQ(ms.size(), 4u) << r.scheduler_choice;
  for (std::size_t i = 1; i < ms.size(); ++i) EXPECT_LE(ms[0], ms[i]) << r.scheduler_choice;
  EXPECT_TRUE(r.final_weights == run_job(short_job("lenet5", "sequential"), 2));
}

// model.pt of a PS checkpoint's parameters, as `dynacomm export --checkpoint` writes it.
std::string export_of(const ps::Checkpoint& c) {
  model::ModelOptions mo;
  mo.name = c.job.model;
  const auto m = model::make_model(mo);
  m->set_flat_params(c.flat_params());
  return m->export_pt();
}

// Compressed pushes are timed where they are built and the PS says in its ack how long it
// took to decode each (worker/codec_times.h): after the warm-up the worker has its
// units' encodings and the PS's decodings, and the times it plans with are those (a PS
// that said nothing would leave the decoding at 0).
TEST(ThreadedCluster, CodecTimesComeFromTrainingsPushesAndThePsAcks) {
  WorkerOptions job = short_job("cnn", "dynacomm");
  job.iterations = 8;
  job.compression = "topk:0.01";
  const WorkerResult r = run_job_result(job, 2);  // worker 0's
  // 6 iterations after the warm-up (the last pushes may still be in flight when the
  // worker stops), each with units and pushes large enough to time (the smallest unit's
  // encoding is timer noise: left out).
  EXPECT_GE(r.codec_encode_samples, 5u);
  EXPECT_GE(r.codec_decode_samples, 3u);
  EXPECT_GT(r.codec_encode_ratio, 0);
  EXPECT_GT(r.codec_decode_ratio, 0);
  EXPECT_NE(r.codecs.find("topk:0.01,ef (4 units)"), std::string::npos) << r.codecs;
}

// While the job runs, rank 0's run folder holds model.pt of the PS's newest checkpoint: the
// PS tells of each before it answers that iteration's pulls, so rank 0 writes the file at
// the end of that very iteration, with the checkpoint's parameters exactly (lenet5 has no
// batch-norm statistics: byte for byte the checkpoint's export), under a full-duplex plan
// whose next pulls arrive early too.
TEST(ThreadedCluster, RankZeroKeepsModelPtOfThePsNewestCheckpoint) {
  for (const std::string scheduler : {"sequential", "dynacomm-fd"}) {
    const std::string dir = ::testing::TempDir() + "checkpoint_model_" + scheduler;
    std::filesystem::remove_all(dir);
    WorkerOptions job = short_job("lenet5", scheduler);
    job.iterations = 8;
    job.out_dir = dir + "/run";
    const WorkerResult r = testing::run_ps_job(job, 2, [&](ps::ServerOptions& so) {
      so.checkpoint_dir = dir + "/ckpt";
      so.checkpoint_every = 3;
      so.checkpoint_keep = 5;
    });
    EXPECT_EQ(r.checkpoint_model_iteration, 6) << scheduler;
    // Writing it (after checkpoint 3's iteration, or the next one when the news came late,
    // and after 6's) is booked apart from training, like an evaluation (none ran here).
    int booked = 0;
    for (const IterationRecord& it : r.iterations) {
      booked += it.eval_ms > 0;
      if (it.iteration == 6) {
        EXPECT_GT(it.eval_ms, 0) << scheduler;
      }
    }
    EXPECT_EQ(booked, 2) << scheduler;
    std::map<std::int64_t, std::string> exports;
    for (const std::string& f : ps::checkpoint_files(dir + "/ckpt")) {
      const ps::Checkpoint c = ps::read_checkpoint(f);
      exports[c.iteration] = export_of(c);
    }
    ASSERT_EQ(exports.size(), 3u) << scheduler;  // 3, 6 and the end's 8
    std::ifstream in(dir + "/run/model.pt", std::ios::binary);
    const std::string written{std::istreambuf_iterator<char>(in), {}};
    EXPECT_TRUE(written == exports[6]) << scheduler << ": model.pt is not checkpoint 6's";
    EXPECT_FALSE(exports[6] == exports[3]);
    EXPECT_FALSE(exports[6] == exports[8]);
    std::filesystem::remove_all(dir);
  }
}

// One worker through the PS equals training in one process, bit for bit.
TEST(ThreadedCluster, OneWorkerEqualsLocalTraining) {
  const WorkerResult one = run_job_result(short_job("cnn", "dynacomm"), 1);
  const std::vector<float>& via_ps = one.final_weights;
  // A lone worker's every push completes its units: the PS flagged all five of the
  // warm-up's (sequential: one; layerwise: one per unit of cnn's four), and the worker
  // fitted the PS's aggregation from them; the online estimates keep fitting it from
  // every update since.
  EXPECT_EQ(one.aggregation.samples, 5);
  const double model_ms = one.aggregation.ms + 3.3 * one.aggregation.ms_per_mb;  // 3.3 MB
  EXPECT_GT(model_ms, 0);
  EXPECT_LT(model_ms, 5000);
  EXPECT_GT(one.final_aggregation.samples, 5);
  EXPECT_DOUBLE_EQ(one.final_link.aggregation_ms, one.final_aggregation.ms);
  train::LocalTrainingOptions local;
  local.model = "cnn";
  local.iterations = 5;
  local.batch = 32;
  local.sgd = job_sgd();
  local.threads = 1;
  local.train_samples = 1000;
  local.test_samples = 100;
  std::ostringstream progress;
  const train::TrainingResult r = train::train_local(local, progress);
  EXPECT_TRUE(r.weights == via_ps);
}

// A worker that fails (here: a model the PS does not serve) comes back as this test's
// exception, naming the refusal; nothing hangs.
TEST(ThreadedCluster, AWorkersFailureIsRethrownHere) {
  WorkerOptions job = short_job("lenet5", "dynacomm");
  ps::ServerOptions so;
  so.workers = 1;
  so.model = "cnn";
  so.timeout = std::chrono::seconds(5);
  so.log = [](const std::string&) {};
  ps::PsServer server(so);
  server.start();
  job.ps = server.endpoint();
  job.timeout = std::chrono::seconds(5);
  std::exception_ptr error;
  std::thread t([&] {
    try {
      std::ostringstream progress;
      (void)run_worker(job, progress);
    } catch (...) {
      error = std::current_exception();
    }
  });
  t.join();
  server.stop();
  ASSERT_TRUE(error);
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("lenet5"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dynacomm::worker
