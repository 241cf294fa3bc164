#include "ps/delay_compensation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/error.h"

namespace dynacomm::ps {
namespace {

// The correction against its formula, computed here in double: g + lambda0 / sqrt(ms) * g^2
// * (w - w_read), ms the running mean square of the unit's gradients (0.95, from 0).
TEST(DelayCompensation, CorrectsByTheFirstOrderTermWithTheAdaptiveLambda) {
  DelayCompensation dc(2.0, 2, 3);
  const std::vector<float> read0 = {1.f, -2.f, 0.5f};
  dc.read(0, read0.data());
  dc.read(1, read0.data());
  // Rank 1 pushes at the weights it read: nothing to correct, its bits come back.
  const std::vector<float> g1 = {0.25f, -3.f, 1e-3f};
  std::vector<float> out(3);
  dc.correct(1, g1.data(), read0.data(), out.data());
  EXPECT_EQ(out, g1);
  // Rank 0's push lands after the weights moved.
  const std::vector<float> now = {1.5f, -2.25f, 0.5f};
  const std::vector<float> g0 = {-0.5f, 2.f, 4.f};
  dc.correct(0, g0.data(), now.data(), out.data());
  for (int k = 0; k < 3; ++k) {
    const double ms = 0.95 * (0.05 * g1[k] * g1[k]) + 0.05 * g0[k] * g0[k];
    const double want = g0[k] + 2.0 / std::sqrt(ms) * g0[k] * g0[k] * (now[k] - read0[k]);
    EXPECT_NEAR(out[k], want, 1e-5 * (1 + std::abs(want))) << "element " << k;
  }
  EXPECT_NE(out[0], g0[0]);  // it moved: the test is not vacuous
  EXPECT_EQ(out[2], g0[2]);  // that element's weight did not
}

TEST(DelayCompensation, LeavesAPushWithoutAReadAsItCame) {
  DelayCompensation dc(2.0, 2, 2);
  const std::vector<float> w = {1.f, 2.f}, moved = {3.f, 5.f}, g = {0.5f, -1.f};
  std::vector<float> out(2);
  dc.correct(0, g.data(), moved.data(), out.data());  // never read
  EXPECT_EQ(out, g);
  dc.read(0, w.data());
  dc.correct(0, g.data(), moved.data(), out.data());
  EXPECT_NE(out, g);
  dc.forget(0);  // it rejoined
  dc.correct(0, g.data(), moved.data(), out.data());
  EXPECT_EQ(out, g);
  dc.read(0, w.data());
  dc.forget_all();  // a restored store
  dc.correct(0, g.data(), moved.data(), out.data());
  EXPECT_EQ(out, g);
}

// Whatever finite gradients and weights come (they are a remote worker's), the correction
// is finite: a value past float's range is left uncorrected, zero gradients stay zero.
TEST(DelayCompensation, NeverMakesAnInfinityOrNaNFromFiniteInput) {
  DelayCompensation dc(2.0, 1, 4);
  const std::vector<float> read = {0.f, 0.f, -3e38f, 0.f};
  dc.read(0, read.data());
  const std::vector<float> now = {3e38f, 1.f, 3e38f, 1.f};
  const std::vector<float> g = {3e38f, 0.f, -3e38f, 1e-30f};
  std::vector<float> out(4);
  for (int push = 0; push < 3; ++push) {
    dc.correct(0, g.data(), now.data(), out.data());
    for (float v : out) EXPECT_TRUE(std::isfinite(v)) << v;
  }
  EXPECT_EQ(out[0], g[0]);
  EXPECT_EQ(out[1], 0.f);
}

TEST(DelayCompensation, RefusesANegativeOrNonFiniteLambda) {
  EXPECT_THROW(DelayCompensation(-1, 2, 3), InvalidInput);
  EXPECT_THROW(DelayCompensation(std::nan(""), 2, 3), InvalidInput);
  EXPECT_THROW(DelayCompensation(2, 0, 3), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::ps
