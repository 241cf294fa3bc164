#include "plan/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "plan/model/duplex.h"

namespace dynacomm::plan::testing {

namespace {
double log_uniform(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> d(std::log(lo), std::log(hi));
  return std::exp(d(rng));
}
double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
}  // namespace

double duplex_period(const ModelProfile& profile, const LinkProfile& link, const Plan& plan) {
  const DuplexResult r = simulate_duplex(profile, link, plan);
  EXPECT_TRUE(r.converged);
  return r.period_ms;
}

ModelProfile hand_profile(const std::vector<std::int64_t>& bytes, double forward_ms,
                          double backward_ms) {
  ModelProfile p;
  p.model = "hand";
  p.batch = 1;
  for (std::size_t u = 0; u < bytes.size(); ++u)
    p.units.push_back({"u" + std::to_string(u), bytes[u] / 4, bytes[u], forward_ms, backward_ms});
  return p;
}

double resource_bound_ms(const ModelProfile& p, const LinkProfile& l, const Plan& plan) {
  double compute = 0, down = 0, up = 0;
  for (const auto& u : p.units) compute += u.forward_ms + u.backward_ms;
  auto bytes = [&](const Segment& s) {
    std::int64_t b = 0;
    for (int u = s.first; u <= s.last; ++u) b += p.units[static_cast<std::size_t>(u)].bytes;
    return b;
  };
  for (const auto& s : plan.pull) down += l.down_ms(bytes(s));
  for (const auto& s : plan.push) up += l.up_ms(bytes(s));
  return std::max({compute, down, up});
}

ModelProfile cnn_units(double forward_ms, double backward_ms) {
  ModelProfile p = uniform_profile("cnn", 32, 4, 1280, forward_ms, backward_ms);
  const std::int64_t bytes[] = {1280, 73984, 3212288, 10280};
  for (std::size_t u = 0; u < 4; ++u) {
    p.units[u].bytes = bytes[u];
    p.units[u].params = bytes[u] / 4;
  }
  return p;
}

ModelProfile uniform_profile(const std::string& model, int batch, int units, std::int64_t bytes,
                             double forward_ms, double backward_ms) {
  ModelProfile p;
  p.model = model;
  p.batch = batch;
  for (int u = 0; u < units; ++u) {
    UnitProfile unit;
    unit.name = "u" + std::to_string(u);
    unit.params = bytes / 4;
    unit.bytes = bytes;
    unit.forward_ms = forward_ms;
    unit.backward_ms = backward_ms;
    p.units.push_back(unit);
  }
  return p;
}

ModelProfile random_profile(std::mt19937_64& rng, int min_units, int max_units) {
  ModelProfile p;
  p.model = "random";
  p.batch = 32;
  int n = std::uniform_int_distribution<int>(min_units, max_units)(rng);
  for (int u = 0; u < n; ++u) {
    UnitProfile unit;
    unit.name = "u" + std::to_string(u);
    unit.bytes = static_cast<std::int64_t>(log_uniform(rng, 1e3, 50e6));
    unit.params = unit.bytes / 4;
    unit.forward_ms = uniform(rng, 0.1, 50);
    unit.backward_ms = uniform(rng, 0.1, 50);
    p.units.push_back(unit);
  }
  return p;
}

ModelProfile random_compressed_profile(std::mt19937_64& rng, int min_units, int max_units) {
  ModelProfile p = random_profile(rng, min_units, max_units);
  for (UnitProfile& unit : p.units) {  // about half the units compressed, 2x to 1000x
    if (uniform(rng, 0, 1) < 0.5)      // and, apart from that, about half the units' pulls
      unit.pull_bytes =
          static_cast<std::int64_t>(static_cast<double>(unit.bytes) / log_uniform(rng, 2, 1000));
    if (uniform(rng, 0, 1) < 0.5) continue;
    unit.push_bytes =
        static_cast<std::int64_t>(static_cast<double>(unit.bytes) / log_uniform(rng, 2, 1000));
    unit.decode_ms = uniform(rng, 0, 5);
  }
  return p;
}

LinkProfile random_link(std::mt19937_64& rng) {
  LinkProfile l;
  l.down_bps = log_uniform(rng, 1e6, 1e9);
  l.up_bps = log_uniform(rng, 1e6, 1e9);
  l.overhead_down_ms = uniform(rng, 0, 50);
  l.overhead_up_ms = uniform(rng, 0, 50);
  l.latency_ms = uniform(rng, 0, 100);
  return l;
}

void add_random_aggregation(std::mt19937_64& rng, LinkProfile& link) {
  link.aggregation_ms = uniform(rng, 0, 20);
  link.aggregation_ms_per_mb = log_uniform(rng, 0.1, 100);
}

}  // namespace dynacomm::plan::testing
