#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "data/fashion_mnist.h"
#include "plan/model/simulate.h"
#include "plan/planners/planner.h"
#include "report/run_folder.h"
#include "train/local_training.h"
#include "train/profiler.h"

namespace dynacomm::train {
namespace {

bool have_fashion_mnist() {
  struct stat st;
  return ::stat(data::default_fashion_mnist_dir().c_str(), &st) == 0;
}

LocalTrainingOptions small_run(std::uint64_t seed) {
  LocalTrainingOptions o;
  o.model = "cnn";
  o.epochs = 1;
  o.batch = 32;
  o.seed = seed;
  o.threads = 1;
  o.iterations = 20;
  o.train_samples = 2000;
  o.test_samples = 200;
  return o;
}

TEST(LocalTraining, SameSeedOneThreadGivesIdenticalWeights) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  std::ostringstream sink;
  TrainingResult a = train_local(small_run(3), sink);
  TrainingResult b = train_local(small_run(3), sink);
  TrainingResult c = train_local(small_run(4), sink);
  EXPECT_EQ(a.iterations, 20);
  ASSERT_EQ(a.weights.size(), b.weights.size());
  EXPECT_TRUE(a.weights == b.weights) << "same seed, one thread: weights must be bit-identical";
  EXPECT_FALSE(a.weights == c.weights);
}

TEST(LocalTraining, WritesRunFolder) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  LocalTrainingOptions o = small_run(1);
  o.out_dir = ::testing::TempDir() + "dynacomm_run_" + std::to_string(::getpid());
  std::ostringstream sink;
  TrainingResult r = train_local(o, sink);
  std::ifstream summary_in(o.out_dir + "/summary.json");
  nlohmann::json summary = nlohmann::json::parse(summary_in);
  EXPECT_EQ(summary["model"], "cnn");
  EXPECT_EQ(summary["epochs"], 1);
  EXPECT_DOUBLE_EQ(summary["test_accuracy"].get<double>(), r.test_accuracy);
  EXPECT_GT(summary["train_seconds"].get<double>(), 0);
  EXPECT_EQ(report::read_floats(o.out_dir + "/weights.bin"), r.weights);
  std::ifstream csv(o.out_dir + "/metrics.csv");
  std::string header, row, extra;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(header.rfind("epoch,iterations,train_loss,train_accuracy,test_loss,test_accuracy", 0),
            0u);
  EXPECT_EQ(row.rfind("1,20,", 0), 0u) << row;
  EXPECT_FALSE(std::getline(csv, extra));
  EXPECT_NE(sink.str().find("epoch 1/1"), std::string::npos);
  std::system(("rm -rf '" + o.out_dir + "'").c_str());
}

// A short run on a subset must actually learn: this fails if gradients, the optimizer
// or the data pipeline are wrong (chance is 10%).
TEST(LocalTraining, CnnLearnsOnASubset) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  LocalTrainingOptions o;
  o.model = "cnn";
  o.epochs = 1;
  o.batch = 64;
  o.threads = 2;
  o.sgd.schedule = optim::LrSchedule::kCosine;  // total_iterations is filled in by the run
  o.train_samples = 12000;
  o.test_samples = 2000;
  std::ostringstream sink;
  TrainingResult r = train_local(o, sink);
  EXPECT_GE(r.test_accuracy, 0.78) << sink.str();
}

TEST(LocalTraining, RejectsBadOptions) {
  LocalTrainingOptions o;
  o.epochs = 0;
  std::ostringstream sink;
  EXPECT_THROW(train_local(o, sink), InvalidInput);
  o = LocalTrainingOptions{};
  o.data_dir = "/nonexistent-dataset-dir";
  EXPECT_THROW(train_local(o, sink), InvalidInput);
}

TEST(Profiler, ProducesAPlannableProfile) {
  ProfileOptions o;
  o.model = "lenet5";
  o.batch = 8;
  o.iterations = 3;
  o.warmup = 1;
  plan::ModelProfile p = profile_model(o);
  ASSERT_EQ(p.num_units(), 5);
  EXPECT_EQ(p.units[0].name, "conv1");
  EXPECT_EQ(p.units[0].params, 156);
  EXPECT_EQ(p.units[0].bytes, 624);
  EXPECT_GT(p.total_forward_ms(), 0);
  EXPECT_GT(p.total_backward_ms(), 0);
  // Through JSON, as `dynacomm plan --profile` reads it.
  plan::ModelProfile q = plan::model_profile_from_json(plan::to_json(p), "profile");
  plan::LinkProfile link{20e6, 20e6, 5, 5, 10};
  plan::Plan d = plan::make_plan("dynacomm", q, link, {});
  EXPECT_GT(plan::simulate(q, link, d), 0);
  o.iterations = 0;
  EXPECT_THROW(profile_model(o), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::train
