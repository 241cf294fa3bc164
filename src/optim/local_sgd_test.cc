#include "optim/local_sgd.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "base/error.h"
#include "optim/sgd.h"

namespace dynacomm::optim {
namespace {

TEST(LocalSgd, ParsesItsSpecAndNamesWhatIsWrong) {
  EXPECT_FALSE(LocalSgd::parse("bsp"));
  EXPECT_FALSE(LocalSgd::parse("ssp:2"));
  const auto a = LocalSgd::parse("local:8");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->steps(), 8);
  EXPECT_EQ(a->warmup(), 0);
  const auto b = LocalSgd::parse("local:4,warmup=50");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->steps(), 4);
  EXPECT_EQ(b->warmup(), 50);
  // The calibration warm-up is counted in rounds (worker/local_steps.h): rounds 3.. begin
  // at step 24 of local:8, at step 3 inside a BSP start of 50.
  EXPECT_EQ(a->first_step(3), 24);
  EXPECT_EQ(b->first_step(3), 3);
  for (const char* bad : {"local:", "local:0", "local:x", "local:8,", "local:8,warmup=",
                          "local:8,warmup=-1", "local:8,wu=3", "local:1001", "local:2x"})
    EXPECT_THROW(LocalSgd::parse(bad), InvalidInput) << bad;
}

// Every (H, K, length) small enough: the rounds tile the steps in order, each round's one
// pull is its first step and its one push its last, rounds() counts them, first_step()
// inverts round_of(); H = 1 is BSP (every step a round).
TEST(LocalSgd, RoundsTileTheStepsExhaustively) {
  for (int h = 1; h <= 9; ++h)
    for (std::int64_t k = 0; k <= 6; ++k)
      for (std::int64_t total = 0; total <= 40; ++total) {
        const LocalSgd s(h, k);
        std::int64_t expected_round = 0;
        std::set<std::int64_t> rounds;
        for (std::int64_t step = 0; step < total; ++step) {
          const std::int64_t r = s.round_of(step);
          ASSERT_TRUE(r == expected_round || r == expected_round + 1) << h << k << step;
          if (step > 0 && r == expected_round + 1) {
            ASSERT_TRUE(s.pushes(step - 1, total));
          }
          expected_round = r;
          rounds.insert(r);
          ASSERT_EQ(s.pulls(step), s.first_step(r) == step);
          ASSERT_EQ(s.first_step(r) <= step && step < s.first_step(r + 1), true);
          const std::int64_t length = step < k ? 1 : h;
          ASSERT_LE(step - s.first_step(r), length - 1);
          if (h == 1) {
            ASSERT_EQ(r, step);
            ASSERT_TRUE(s.pulls(step) && s.pushes(step, total));
          }
        }
        ASSERT_EQ(s.rounds(total), static_cast<std::int64_t>(rounds.size())) << h << k << total;
        if (total > 0) {
          ASSERT_TRUE(s.pushes(total - 1, total));
        }
      }
}

// The PS's step on the mean of the workers' gradient sums, without momentum or weight
// decay, is the average of the models the workers' local steps reached (f(w) = (w - c)^2/2
// per worker, so g = w - c).
TEST(LocalSgd, ThePsStepOnTheMeanSumIsTheAverageOfTheLocalModels) {
  const double lr = 0.1;
  const std::vector<float> targets = {1.f, -3.f, 0.5f};
  const float w0 = 2.f;
  const int h = 5;
  std::vector<float> local(targets.size(), w0), sums(targets.size(), 0.f);
  for (std::size_t i = 0; i < targets.size(); ++i)
    for (int k = 0; k < h; ++k) {
      sums[i] += local[i] - targets[i];
      local[i] = w0 - static_cast<float>(lr) * sums[i];
    }
  float mean_sum = 0, average = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    mean_sum += sums[i] / static_cast<float>(targets.size());
    average += local[i] / static_cast<float>(targets.size());
  }
  SgdOptions o;
  o.lr = lr;
  o.momentum = 0;
  o.weight_decay = 0;
  Sgd sgd(o, {1});
  float w = w0;
  sgd.step(0, &w, &mean_sum, 0);
  EXPECT_NEAR(w, average, 1e-6);
}

}  // namespace
}  // namespace dynacomm::optim
