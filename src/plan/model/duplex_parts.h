// Private to plan/model: the parts the full-duplex simulations share (duplex.cc, the
// BSP model; at_once.cc, pulls answered at once). Not part of the module's interface.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"

namespace dynacomm::plan::detail {

// Busy time of a direction for a segmentation (sum of transmissions).
double busy_ms(const ModelProfile& p, const std::vector<Segment>& segments, double overhead_ms,
               double bps, bool up);

// A plan's transmissions: the bytes of each pull and push segment, and the PS's time from
// a push segment's arrival to its units being servable (its aggregation over the dense
// bytes it decodes to, plus decoding).
struct SegmentCosts {
  std::vector<std::int64_t> pull_bytes, push_bytes;
  std::vector<double> push_aggregation_ms;
};
SegmentCosts segment_costs(const ModelProfile& profile, const LinkProfile& link, const Plan& p);

// Compute under a busy link in the mean (predict_duplex_ms, ideal_duplex_ms): the factor on
// every unit when the links are busy `down_ms` and `up_ms` of a period of `period_ms`.
double mean_stretch(const LinkProfile& link, double down_ms, double up_ms, double period_ms);

// Compute under a busy link, charged in the mean (predict_duplex_ms and the workers'
// prediction): from `period` without it, every unit of `profiles` stretched by the factor
// at the current period and simulated again (simulate(stretched)), until the period moves
// by at most `tolerance` of itself or after `rounds` rounds. The links' busy times come from
// the plan's segments over the first profile (all alike in bytes).
template <class Simulate>
double stretched_period(const std::vector<ModelProfile>& profiles, const LinkProfile& link,
                        const Plan& p, double period, int rounds, double tolerance,
                        Simulate simulate) {
  if (link.compute_stretch_down == 1 && link.compute_stretch_up == 1) return period;
  const double down = busy_ms(profiles[0], p.pull, link.overhead_down_ms, link.down_bps, false);
  const double up = busy_ms(profiles[0], p.push, link.overhead_up_ms, link.up_bps, true);
  std::vector<ModelProfile> stretched = profiles;
  for (int round = 0; round < rounds && period > 0; ++round) {
    const double f = mean_stretch(link, down, up, period);
    for (std::size_t k = 0; k < profiles.size(); ++k)
      for (std::size_t u = 0; u < profiles[k].units.size(); ++u) {
        stretched[k].units[u].forward_ms = profiles[k].units[u].forward_ms * f;
        stretched[k].units[u].backward_ms = profiles[k].units[u].backward_ms * f;
      }
    const double next = simulate(stretched);
    const bool done = std::abs(next - period) <= tolerance * std::max(1.0, period);
    period = next;
    if (done) break;
  }
  return period;
}

// The state the next iteration depends on, relative to nothing: compared across iterations
// to find the repeat.
struct State {
  double forward_start, backward_end, down_free, up_free;
};

bool repeats(const std::vector<State>& s, std::size_t t, std::size_t c);

// A sliced plan's samples as atom profiles and the plan over them (atom_params 0); any
// other plan and its samples as they are.
std::pair<std::vector<ModelProfile>, Plan> in_atoms(const std::vector<ModelProfile>& samples,
                                                    const Plan& plan);

// Per unit of an L-unit plan, the index of the pull segment that holds it.
std::vector<int> pull_segment_of_units(const Plan& p, int L);

// Throws InvalidInput, starting with `what`, unless there is at least one sample and all
// are valid profiles of one model (the same units and bytes each way).
void check_samples(const std::vector<ModelProfile>& samples, const char* what);

// A worker under priority hands its uplink (a FIFO: the kernel's queue), at time t, the
// lowest ready push segments the credit allows (or one, when nothing is unacknowledged);
// each leaves once the ones before it have. on_send(k) is told of each, after up_free is
// its end; its ack time is filled in later (in_flight[flight_of[k]]).
template <class OnSend>
void hand_over_by_priority(const Plan& p, const LinkProfile& link, double t,
                           const std::vector<double>& end_backward,
                           const std::vector<std::int64_t>& push_bytes, std::vector<bool>& sent,
                           std::size_t& left,
                           std::vector<std::pair<double, std::int64_t>>& in_flight,
                           std::vector<std::size_t>& flight_of, double& up_free, OnSend on_send) {
  const std::size_t n_push = p.push.size();
  while (left > 0) {
    std::int64_t unacked = 0;
    for (const auto& [back, bytes] : in_flight)
      if (back > t) unacked += bytes;
    std::size_t pick = n_push;
    for (std::size_t k = 0; k < n_push; ++k)
      if (!sent[k] && end_backward[static_cast<std::size_t>(p.push[k].first)] <= t &&
          (pick == n_push || p.push[k].first < p.push[pick].first))
        pick = k;
    if (pick == n_push || (unacked > 0 && unacked + push_bytes[pick] > p.credit_bytes))
      return;  // wait for a gradient or an ack
    up_free = std::max(t, up_free) + link.up_ms(push_bytes[pick]);
    sent[pick] = true;
    --left;
    flight_of[pick] = in_flight.size();
    in_flight.push_back({std::numeric_limits<double>::infinity(), push_bytes[pick]});
    on_send(pick);
  }
}

}  // namespace dynacomm::plan::detail
