#include "ps/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "base/error.h"

namespace dynacomm::ps {
namespace {

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "dynacomm_ckpt_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ::mkdir(dir_.c_str(), 0755);
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  static Checkpoint at(std::int64_t iteration, float value) {
    Checkpoint c;
    c.iteration = iteration;
    c.job.model = "fake";
    c.job.workers = 2;
    c.job.unit_bytes = {12, 4};
    c.job.total_iterations = 100;
    c.settings.settings = {{"--lr", "0.05"}};
    c.units = {{iteration, {value, 2, 3}, {0.5f, 0.25f, -1}, true, {value, 2, 2.5f}},
               {iteration, {-value}, {0}, false, {}}};
    return c;
  }
  std::string dir_;
};

TEST_F(CheckpointTest, RoundTripsBitForBitAndKeepsTheNewest) {
  for (std::int64_t it : {10, 20, 30}) write_checkpoint(dir_, at(it, 0.1f * it), 2);
  const std::vector<std::string> files = checkpoint_files(dir_);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], dir_ + "/ckpt-000000000030.bin");
  EXPECT_EQ(files[1], dir_ + "/ckpt-000000000020.bin");
  const Checkpoint c = read_checkpoint(files[0]);
  const Checkpoint want = at(30, 3.0f);
  EXPECT_EQ(c.iteration, 30);
  EXPECT_EQ(c.job.model, "fake");
  EXPECT_EQ(c.job.unit_bytes, want.job.unit_bytes);
  EXPECT_EQ(c.job.total_iterations, 100);
  ASSERT_NE(c.settings.find("--lr"), nullptr);
  EXPECT_EQ(*c.settings.find("--lr"), "0.05");
  ASSERT_EQ(c.units.size(), 2u);
  for (std::size_t u = 0; u < 2; ++u) {
    EXPECT_EQ(c.units[u].params, want.units[u].params);
    EXPECT_EQ(c.units[u].velocity, want.units[u].velocity);
    EXPECT_EQ(c.units[u].started, want.units[u].started);
    EXPECT_EQ(c.units[u].public_copy, want.units[u].public_copy);  // compressed pulls' only
    EXPECT_EQ(c.units[u].version, 30);
  }
}

// A checkpoint cut short (the PS killed mid-write on a filesystem without atomic rename,
// a full disk) or with a flipped bit is refused, naming why, and the one before is used.
// The PS makes its --checkpoint-dir when it starts, so its first checkpoint has a place
// (before, a missing folder meant every checkpoint failed while the job ran on).
TEST_F(CheckpointTest, TheFolderIsMadeWhenMissingAndAFileInItsPlaceIsRefused) {
  const std::string nested = dir_ + "/a/b";
  make_checkpoint_dir(nested);
  EXPECT_NO_THROW(write_checkpoint(nested, at(4, 1), 3));
  EXPECT_EQ(read_checkpoint(checkpoint_files(nested).front()).iteration, 4);
  make_checkpoint_dir(nested);  // there already: nothing to do
  std::ofstream(dir_ + "/file") << "x";
  try {
    make_checkpoint_dir(dir_ + "/file");
    ADD_FAILURE() << "a file taken for a folder";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find(dir_ + "/file"), std::string::npos) << e.what();
  }
}

TEST_F(CheckpointTest, ATruncatedOrCorruptCheckpointIsRefusedAndThePreviousUsed) {
  write_checkpoint(dir_, at(10, 1), 3);
  write_checkpoint(dir_, at(20, 2), 3);
  write_checkpoint(dir_, at(30, 3), 3);
  const std::string newest = dir_ + "/ckpt-000000000030.bin";
  ASSERT_EQ(::truncate(newest.c_str(), 60), 0);
  {  // one bit of a parameter flipped in the one before
    std::fstream f(dir_ + "/ckpt-000000000020.bin",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-20, std::ios::end);
    f.put('\x7f');
  }
  std::vector<std::string> log;
  const Checkpoint c = load_latest(dir_, nullptr, [&](const std::string& l) { log.push_back(l); });
  EXPECT_EQ(c.iteration, 10);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0],
            "checkpoint " + newest +
                ": checksum mismatch (truncated or corrupt, 60 bytes); trying the one before");
  EXPECT_NE(log[1].find("ckpt-000000000020.bin: checksum mismatch"), std::string::npos) << log[1];
  EXPECT_THROW(read_checkpoint(dir_ + "/none.bin"), InvalidInput);
}

TEST_F(CheckpointTest, OneThatDoesNotFitTheJobIsRefusedAndNoneUsableSaysWhy) {
  write_checkpoint(dir_, at(10, 1), 3);
  write_checkpoint(dir_, at(20, 2), 3);
  std::vector<std::string> log;
  const auto not_twenty = [](const Checkpoint& c) {
    return c.iteration == 20 ? std::string("it was taken with --lr 0.05, the PS runs --lr 0.1")
                             : std::string();
  };
  EXPECT_EQ(
      load_latest(dir_, not_twenty, [&](const std::string& l) { log.push_back(l); }).iteration, 10);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("000020.bin: it was taken with --lr 0.05"), std::string::npos) << log[0];
  try {
    load_latest(
        dir_, [](const Checkpoint&) { return std::string("no"); }, nullptr);
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("no usable checkpoint in " + dir_ + ":\n  checkpoint "),
              std::string::npos)
        << e.what();
  }
  try {
    load_latest(dir_ + "/empty", nullptr, nullptr);
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("(none there)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dynacomm::ps
