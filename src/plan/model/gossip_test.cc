#include "plan/model/gossip.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/error.h"

namespace dynacomm::plan {
namespace {

// W as a dense matrix from its rows.
std::vector<std::vector<double>> matrix(Topology t, int size) {
  std::vector<std::vector<double>> w(size, std::vector<double>(size, 0.0));
  for (int i = 0; i < size; ++i)
    for (const auto& [j, x] : mixing_weights(t, i, size)) w[i][j] = x;
  return w;
}

TEST(Gossip, NeighboursOfARingAndATorus) {
  EXPECT_EQ(gossip_neighbours(Topology::kRing, 0, 8), (std::vector<int>{1, 7}));
  EXPECT_EQ(gossip_neighbours(Topology::kRing, 0, 2), (std::vector<int>{1}));
  EXPECT_TRUE(gossip_neighbours(Topology::kRing, 0, 1).empty());
  EXPECT_EQ(torus_shape(9), (std::pair<int, int>{3, 3}));
  EXPECT_EQ(torus_shape(8), (std::pair<int, int>{2, 4}));
  EXPECT_EQ(torus_shape(7), (std::pair<int, int>{1, 7}));
  EXPECT_EQ(gossip_neighbours(Topology::kTorus, 4, 9), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(gossip_neighbours(Topology::kTorus, 0, 9), (std::vector<int>{1, 2, 3, 6}));
  EXPECT_EQ(gossip_neighbours(Topology::kTorus, 0, 8), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(gossip_neighbours(Topology::kTorus, 0, 7), gossip_neighbours(Topology::kRing, 0, 7));
  EXPECT_THROW(gossip_neighbours(Topology::kRing, 3, 3), InvalidInput);
  EXPECT_THROW(parse_topology("star"), InvalidInput);
  EXPECT_EQ(topology_name(parse_topology("torus")), "torus");
}

// For every size up to 20 and both topologies: the neighbour relation is symmetric and W is
// symmetric, doubly stochastic and non-negative.
TEST(Gossip, MixingIsSymmetricAndDoublyStochastic) {
  for (Topology t : {Topology::kRing, Topology::kTorus})
    for (int p = 1; p <= 20; ++p) {
      const auto w = matrix(t, p);
      for (int i = 0; i < p; ++i) {
        double row = 0, col = 0;
        for (int j = 0; j < p; ++j) {
          EXPECT_GE(w[i][j], 0.0);
          EXPECT_DOUBLE_EQ(w[i][j], w[j][i]) << topology_name(t) << " P=" << p;
          row += w[i][j];
          col += w[j][i];
        }
        EXPECT_NEAR(row, 1.0, 1e-12);
        EXPECT_NEAR(col, 1.0, 1e-12);
      }
    }
}

// D-PSGD on f_i(x) = |x - a_i|^2 / 2, worker i's own objective: the mean of the models stays
// where plain SGD on the mean objective takes it, and every model converges to mean(a).
TEST(Gossip, DpsgdConvergesToTheMeanObjectivesMinimum) {
  for (Topology t : {Topology::kRing, Topology::kTorus}) {
    const int p = 8, dim = 5;
    std::mt19937 rng(7);
    std::normal_distribution<double> normal(0, 3);
    std::vector<std::vector<double>> a(p, std::vector<double>(dim)), x = a;
    std::vector<double> target(dim, 0);
    for (int i = 0; i < p; ++i)
      for (int k = 0; k < dim; ++k) {
        a[i][k] = normal(rng);
        x[i][k] = normal(rng);
        target[k] += a[i][k] / p;
      }
    const auto w = matrix(t, p);
    for (int it = 0; it < 4000; ++it) {
      const double lr = 0.5 / (1 + it / 10.0);  // decaying: the disagreement decays with it
      auto next = x;
      for (int i = 0; i < p; ++i)
        for (int k = 0; k < dim; ++k) {
          double mixed = 0;
          for (int j = 0; j < p; ++j) mixed += w[i][j] * x[j][k];
          next[i][k] = mixed - lr * (x[i][k] - a[i][k]);
        }
      x = next;
    }
    // The models stay O(lr) apart (the gradients disagree at consensus); their mean is
    // exactly SGD on the mean objective.
    for (int k = 0; k < dim; ++k) {
      double mean = 0;
      for (int i = 0; i < p; ++i) mean += x[i][k] / p;
      EXPECT_NEAR(mean, target[k], 1e-9) << topology_name(t);
      for (int i = 0; i < p; ++i) EXPECT_NEAR(x[i][k], target[k], 0.05) << topology_name(t);
    }
  }
}

TEST(Gossip, TheExchangeOverlapsCompute) {
  ModelProfile p;
  p.units = {{"a", 0, 1000000, 10, 20, -1, 0, -1}, {"b", 0, 250000, 5, 5, -1, 0, -1}};
  LinkProfile link{100e6, 50e6, 1, 2, 3};
  // 2 neighbours x 1.25 MB over 50 Mbit/s = 400 ms, plus 2 x (2 + 3) ms.
  EXPECT_DOUBLE_EQ(gossip_exchange_ms(link, 2, 1250000), 410.0);
  EXPECT_DOUBLE_EQ(simulate_gossip(p, link, Topology::kRing, 8), 410.0);
  link.up_bps = link.down_bps = 1e12;
  EXPECT_NEAR(simulate_gossip(p, link, Topology::kRing, 8), 40.0, 1e-9);  // compute-bound
  EXPECT_DOUBLE_EQ(simulate_gossip(p, link, Topology::kRing, 1), 40.0);
  // A measured exchange stands in for the link's: behind compute, or in front of it.
  EXPECT_DOUBLE_EQ(simulate_gossip(p, link, Topology::kRing, 8, 530.0), 530.0);
  EXPECT_DOUBLE_EQ(simulate_gossip(p, link, Topology::kRing, 8, 25.0), 40.0);
  EXPECT_DOUBLE_EQ(simulate_gossip(p, link, Topology::kRing, 1, 530.0), 40.0);  // no exchange
}

}  // namespace
}  // namespace dynacomm::plan
