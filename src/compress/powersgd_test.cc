#include "compress/powersgd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "base/error.h"
#include "compress/compressor.h"
#include "compress/push_codec.h"

namespace dynacomm::compress {
namespace {

// A linear layer's weight (rows x cols) and bias, then a 1-D tensor and a conv weight.
std::vector<TensorShape> layers() {
  return {{0, {16, 24}}, {384, {16}}, {400, {5}}, {405, {8, 3, 3, 3}}};
}
constexpr std::int64_t kFloats = 405 + 8 * 27;

std::vector<float> random_values(std::int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0, 1);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = d(gen);
  return v;
}

// Workers' PowerSgd instances summed as the ring sums them: every worker gets the sums.
struct Cluster {
  std::vector<PowerSgd> workers;
  std::vector<std::vector<float>> first, second;

  Cluster(int n, int rank) {
    for (int w = 0; w < n; ++w) workers.emplace_back(layers(), rank, /*seed=*/7);
    const std::size_t t = workers[0].num_tensors();
    first.assign(n, std::vector<float>(workers[0].first_offset(t)));
    second.assign(n, std::vector<float>(workers[0].second_offset(t)));
  }
  static void sum_into_all(std::vector<std::vector<float>>& bufs, std::int64_t from,
                           std::int64_t to) {
    for (std::int64_t i = from; i < to; ++i) {
      float s = 0;
      for (auto& b : bufs) s += b[i];
      for (auto& b : bufs) b[i] = s;
    }
  }
  // One iteration over tensors [t0, t1): every worker's sums of its gradients.
  std::vector<std::vector<float>> step(const std::vector<std::vector<float>>& grads, std::size_t t0,
                                       std::size_t t1, std::vector<std::vector<float>>& sums) {
    const int n = static_cast<int>(workers.size());
    for (int w = 0; w < n; ++w) workers[w].first(t0, t1, grads[w].data(), first[w].data());
    sum_into_all(first, workers[0].first_offset(t0), workers[0].first_offset(t1));
    for (int w = 0; w < n; ++w) workers[w].second(t0, t1, first[w].data(), second[w].data());
    sum_into_all(second, workers[0].second_offset(t0), workers[0].second_offset(t1));
    for (int w = 0; w < n; ++w)
      workers[w].finish(t0, t1, first[w].data(), second[w].data(), n, sums[w].data());
    return sums;
  }
};

TEST(PowerSgdTest, SpecsGiveTheRank) {
  EXPECT_EQ(powersgd_rank("powersgd"), 4);
  EXPECT_EQ(powersgd_rank("powersgd:1"), 1);
  EXPECT_EQ(powersgd_rank("topk:0.01"), std::nullopt);
  EXPECT_EQ(powersgd_rank("powersgdx"), std::nullopt);
  for (const char* bad :
       {"powersgd:", "powersgd:0", "powersgd:2.5", "powersgd:-1", "powersgd:x", "powersgd:2000"})
    EXPECT_THROW(powersgd_rank(bad), InvalidInput) << bad;
  // A PS's codecs do not take it, and say where it runs.
  try {
    make_compressor("powersgd:4");
    ADD_FAILURE() << "a PS codec took powersgd";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("--arch allreduce"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(split_codec_list("none,fp16,powersgd:4"));
}

TEST(PowerSgdTest, OrthonormalisedColumnsAreOrthonormalAndAZeroColumnStaysZero) {
  const int r = 3;
  std::vector<float> a = random_values(50 * r, 1);
  for (int k = 0; k < 50; ++k) a[k * r + 2] = 2 * a[k * r + 0] - a[k * r + 1];  // dependent
  orthonormalise_columns(a.data(), 50, r);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      double dot = 0;
      for (int k = 0; k < 50; ++k) dot += double{a[k * r + i]} * a[k * r + j];
      EXPECT_NEAR(dot, i == j ? 1 : 0, 1e-5) << i << "," << j;
    }
  std::vector<float> z(10 * 2, 0.f);
  orthonormalise_columns(z.data(), 10, 2);
  for (float v : z) EXPECT_EQ(v, 0.f);
}

TEST(PowerSgdTest, WhichTensorsAreCompressedAndTheSumsSizes) {
  const PowerSgd p(layers(), 2, 1);
  EXPECT_TRUE(p.compressed(0));   // 16 x 24: 2 x (16 + 24) < 384
  EXPECT_FALSE(p.compressed(1));  // 1-D
  EXPECT_FALSE(p.compressed(2));
  EXPECT_TRUE(p.compressed(3));  // 8 x 27: 2 x 35 < 216
  EXPECT_EQ(p.first_offset(4), 16 * 2 + 16 + 5 + 8 * 2);
  EXPECT_EQ(p.second_offset(4), 24 * 2 + 27 * 2);
  const PowerSgd wide(layers(), 6, 1);  // 6 x (8 + 27) = 210 < 216: still smaller
  EXPECT_TRUE(wide.compressed(3));
  const PowerSgd too_wide(layers(), 7, 1);  // 245 > 216: dense
  EXPECT_FALSE(too_wide.compressed(3));
  EXPECT_EQ(p.tensors_in(384, 405), std::make_pair(std::size_t{1}, std::size_t{3}));
  EXPECT_THROW(p.tensors_in(100, 405), Error);
  EXPECT_THROW(PowerSgd({{0, {4, 4}}, {17, {3}}}, 1, 1), InvalidInput);
}

// Sums of gradients of rank at most r come through exactly, 1-D ones always; and what two
// workers get is the projection of the true sum onto the orthonormalised summed P, computed
// here apart in double precision.
TEST(PowerSgdTest, TheSumIsTheProjectionOntoTheSummedPAndExactForLowRank) {
  const int r = 2;
  Cluster c(2, r);
  std::vector<std::vector<float>> grads(2), sums(2, std::vector<float>(kFloats));
  for (int w = 0; w < 2; ++w) {
    grads[w] = random_values(kFloats, 10 + w);
    // The linear weight: rank 1 per worker (u v^T), so the sum has rank <= 2.
    const std::vector<float> u = random_values(16, 20 + w), v = random_values(24, 30 + w);
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 24; ++j) grads[w][i * 24 + j] = u[i] * v[j];
  }
  c.step(grads, 0, 4, sums);
  EXPECT_EQ(sums[0], sums[1]);  // the same bits on both workers
  for (std::int64_t i = 0; i < kFloats; ++i) {
    const float truth = grads[0][i] + grads[1][i];
    if (i < 384) {
      EXPECT_NEAR(sums[0][i], truth, 1e-4) << i;  // rank 2: exact
    } else if (i < 405) {
      EXPECT_EQ(sums[0][i], truth) << i;  // dense
    }
  }
  // The conv weight (8 x 27, full rank): P^ P^T (M1 + M2), P^ as the workers hold it.
  const PowerSgd& p = c.workers[0];
  const float* ph = c.first[0].data() + p.first_offset(3);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 27; ++j) {
      double want = 0;
      for (int k = 0; k < 8; ++k) {
        double proj = 0;
        for (int x = 0; x < r; ++x) proj += double{ph[i * r + x]} * ph[k * r + x];
        want += proj * (double{grads[0][405 + k * 27 + j]} + grads[1][405 + k * 27 + j]);
      }
      EXPECT_NEAR(sums[0][405 + i * 27 + j], want, 1e-4) << i << "," << j;
    }
}

// Error feedback: over iterations, the sums sent plus the workers' residuals are the sums
// of the gradients; and the residuals carried forward make the approximation catch up.
TEST(PowerSgdTest, SentPlusResidualsIsTheSumOfTheGradients) {
  Cluster c(3, 1);
  std::vector<std::vector<float>> sums(3, std::vector<float>(kFloats));
  std::vector<double> sent(kFloats, 0), truth(kFloats, 0);
  for (int it = 0; it < 5; ++it) {
    std::vector<std::vector<float>> grads(3);
    for (int w = 0; w < 3; ++w) {
      grads[w] = random_values(kFloats, 100 * it + w);
      for (std::int64_t i = 0; i < kFloats; ++i) truth[i] += grads[w][i];
    }
    c.step(grads, 0, 4, sums);
    for (std::int64_t i = 0; i < kFloats; ++i) sent[i] += sums[0][i];
  }
  for (std::size_t t : {std::size_t{0}, std::size_t{3}}) {
    const std::int64_t from = t == 0 ? 0 : 405, n = t == 0 ? 384 : 216;
    for (std::int64_t i = 0; i < n; ++i) {
      double residuals = 0;
      for (const PowerSgd& w : c.workers) residuals += w.residual(t)[i];
      EXPECT_NEAR(sent[from + i] + residuals, truth[from + i], 1e-3) << t << ":" << i;
    }
  }
}

// How the buckets group the tensors changes nothing: one call or three give the same bits.
TEST(PowerSgdTest, BucketsDoNotChangeTheBits) {
  Cluster whole(2, 2), split(2, 2);
  std::vector<std::vector<float>> a(2, std::vector<float>(kFloats)), b = a;
  for (int it = 0; it < 3; ++it) {
    std::vector<std::vector<float>> grads = {random_values(kFloats, 50 + it),
                                             random_values(kFloats, 60 + it)};
    whole.step(grads, 0, 4, a);
    split.step(grads, 3, 4, b);  // backward's order: the top tensors first
    split.step(grads, 1, 3, b);
    split.step(grads, 0, 1, b);
    ASSERT_EQ(a[0], b[0]) << "iteration " << it;
  }
}

// Warm start: the next Q is the mean of this iteration's, the same on every worker.
TEST(PowerSgdTest, EveryWorkerStartsTheNextIterationFromTheMeanQ) {
  Cluster c(3, 2);
  std::vector<std::vector<float>> sums(3, std::vector<float>(kFloats));
  c.step({random_values(kFloats, 1), random_values(kFloats, 2), random_values(kFloats, 3)}, 0, 4,
         sums);
  for (std::size_t t : {std::size_t{0}, std::size_t{3}}) {
    const std::vector<float>& q = c.workers[0].warm_start(t);
    const float* summed = c.second[0].data() + c.workers[0].second_offset(t);
    for (std::size_t i = 0; i < q.size(); ++i) EXPECT_EQ(q[i], summed[i] * (1.f / 3)) << i;
    for (int w = 1; w < 3; ++w) EXPECT_EQ(c.workers[w].warm_start(t), q) << "worker " << w;
  }
}

TEST(PowerSgdTest, StateRoundTripsAndAMismatchIsRefused) {
  Cluster c(2, 2);
  std::vector<std::vector<float>> sums(2, std::vector<float>(kFloats));
  c.step({random_values(kFloats, 1), random_values(kFloats, 2)}, 0, 4, sums);
  const std::string state = c.workers[0].state();
  PowerSgd fresh(layers(), 2, 7);
  fresh.set_state(state);
  EXPECT_EQ(fresh.state(), state);
  EXPECT_EQ(fresh.residual(0), c.workers[0].residual(0));
  PowerSgd other_rank(layers(), 3, 7);
  EXPECT_THROW(other_rank.set_state(state), InvalidInput);
  EXPECT_THROW(fresh.set_state(state.substr(0, state.size() - 1)), InvalidInput);
  EXPECT_THROW(fresh.set_state(state + "x"), InvalidInput);
  EXPECT_EQ(fresh.state(), state);  // nothing changed by a refusal
}

}  // namespace
}  // namespace dynacomm::compress
