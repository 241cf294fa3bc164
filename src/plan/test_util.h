// Random profiles and links for the planner property tests, drawn from the ranges the
// planning-core issue asks for: L in [min_units, max_units], unit sizes 1 KB..50 MB
// (log-uniform), compute 0.1..50 ms, per-transmission overhead 0..50 ms, latency 0..100 ms,
// and asymmetric links of 1 Mbit/s..1 Gbit/s drawn apart for each direction.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"

namespace dynacomm::plan::testing {

ModelProfile random_profile(std::mt19937_64& rng, int min_units, int max_units);
// The same with about half the units' pushes compressed (push_bytes, decode_ms) and, apart
// from them, about half the units' pulls (pull_bytes).
ModelProfile random_compressed_profile(std::mt19937_64& rng, int min_units, int max_units);
LinkProfile random_link(std::mt19937_64& rng);
// `units` alike: named u0, u1, ..., each of `bytes` (params: bytes / 4) and the given times.
ModelProfile uniform_profile(const std::string& model, int batch, int units, std::int64_t bytes,
                             double forward_ms, double backward_ms);
// The PS's aggregation on `link`: 0..20 ms per push and 0.1..100 ms per MB (log-uniform;
// a busy PS on slow cores to a fast one), for the full-duplex model's tests.
void add_random_aggregation(std::mt19937_64& rng, LinkProfile& link);
// Hand-computed cases: units u0, u1, ... of the given bytes (params: bytes / 4), each with
// the same forward and backward times, batch 1.
ModelProfile hand_profile(const std::vector<std::int64_t>& bytes, double forward_ms,
                          double backward_ms);
// A plan's resource bound with dense units: max(compute, its pull segments' time on the
// downlink, its push segments' on the uplink), the least any model's period can be.
double resource_bound_ms(const ModelProfile& profile, const LinkProfile& link, const Plan& plan);
// cnn's four units as one worker measured them (bytes of conv1, conv2, fc1, fc2), each
// with the given forward and backward times.
ModelProfile cnn_units(double forward_ms, double backward_ms);
// The steady-state period of a plan under the full-duplex model (plan/model/duplex.h); a test
// failure if the simulation found no steady state.
double duplex_period(const ModelProfile& profile, const LinkProfile& link, const Plan& plan);

}  // namespace dynacomm::plan::testing
