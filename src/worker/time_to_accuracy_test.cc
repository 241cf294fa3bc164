#include "worker/time_to_accuracy.h"

#include <gtest/gtest.h>

namespace dynacomm::worker {
namespace {

IterationRecord iteration(std::int64_t i, double start_s, double ms, double acc = -1,
                          double eval_ms = 0) {
  IterationRecord r;
  r.iteration = i;
  r.start_s = start_s;
  r.ms = ms;
  r.bytes_up = 100;
  r.bytes_down = 1000;
  r.test_accuracy = acc;
  r.eval_ms = eval_ms;
  return r;
}

TEST(TimeToAccuracy, LeavesTheEvaluationsOut) {
  // Iterations of 100 ms from 2 s; evaluations of 500 ms after iterations 1 and 3, inside
  // their iteration times (so iteration 2 starts 600 ms after 1).
  const std::vector<IterationRecord> its = {
      iteration(0, 2.0, 100), iteration(1, 2.1, 600, 0.70, 500), iteration(2, 2.7, 100),
      iteration(3, 2.8, 600, 0.90, 500), iteration(4, 3.4, 100, 0.95)};
  const TimeToAccuracy t = time_to_accuracy(its, 0.88);
  ASSERT_TRUE(t.reached());
  EXPECT_EQ(t.iteration, 3);
  EXPECT_DOUBLE_EQ(t.accuracy, 0.90);
  EXPECT_NEAR(t.wall_s, 2.0 + 4 * 0.1, 1e-12);  // four iterations of training
  EXPECT_NEAR(t.eval_s, 1.0, 1e-12);
  EXPECT_EQ(t.iterations, 4);
  EXPECT_EQ(t.bytes_up, 400);
  EXPECT_EQ(t.bytes_down, 4000);
}

TEST(TimeToAccuracy, ReachedOnlyAtOrAboveTheTarget) {
  const std::vector<IterationRecord> its = {iteration(10, 0, 100, 0.8799, 10),
                                            iteration(11, 0.11, 100, 0.88, 0)};
  EXPECT_EQ(time_to_accuracy(its, 0.88).iteration, 11);
  EXPECT_EQ(time_to_accuracy(its, 0.8801).iteration, -1);
  EXPECT_FALSE(time_to_accuracy(its, 0.9).reached());
  EXPECT_FALSE(time_to_accuracy({}, 0.5).reached());
  // Not evaluated (-1) never counts, whatever the target.
  EXPECT_FALSE(time_to_accuracy({iteration(0, 0, 1)}, 0.0001).reached());
}

}  // namespace
}  // namespace dynacomm::worker
