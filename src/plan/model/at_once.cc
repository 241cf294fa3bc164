// The full-duplex model where the PS answers pulls at once (plan/model/duplex.h,
// simulate_at_once).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "base/error.h"
#include "plan/model/duplex.h"
#include "plan/model/duplex_parts.h"

namespace dynacomm::plan {

using namespace detail;  // plan/model/duplex_parts.h

namespace {

// The downlink as the acks see it: the pull replies, handed over an iteration at a time
// (all of an iteration's as its requests arrive, in pull order), and when the link is
// free of each batch. An ack waits for the replies handed over before it, not for later
// ones; at the same instant the ack goes first (the BSP model's rule too).
class Downlink {
 public:
  // Hands over one iteration's replies at `at`; writes when each reaches the worker.
  void hand_over(double at, const std::vector<int>& order, const std::vector<std::int64_t>& bytes,
                 const LinkProfile& link, std::vector<double>& arrive) {
    for (int k : order) {
      free_ = std::max(at, free_) + link.down_ms(bytes[static_cast<std::size_t>(k)]);
      arrive[static_cast<std::size_t>(k)] = free_ + link.latency_ms;
    }
    batches_.emplace_back(at, free_);
  }
  // When the ack of a push that reached the PS at `arrived` reaches the worker.
  double ack_back(double arrived, double latency) const {
    double busy_until = 0;
    for (auto b = batches_.rbegin(); b != batches_.rend(); ++b)
      if (b->first < arrived) {
        busy_until = b->second;
        break;
      }
    return std::max(arrived, busy_until) + latency;
  }
  double free() const { return free_; }

 private:
  std::vector<std::pair<double, double>> batches_;  // (handed over at, link free after)
  double free_ = 0;
};

// One round's pushes on the uplink, after the rounds before it: in send order, or by
// priority within the credit (the acks in flight from the round before count against it).
// Returns when the round's last ack is back.
double push_round(const Plan& p, const LinkProfile& link, const std::vector<double>& end_backward,
                  const std::vector<std::int64_t>& push_bytes, const Downlink& down,
                  double& up_free, std::vector<std::pair<double, std::int64_t>>& in_flight) {
  const double lat = link.latency_ms;
  double acked = 0;
  if (p.credit_bytes <= 0) {
    for (std::size_t k = 0; k < p.push.size(); ++k) {
      up_free = std::max(end_backward[static_cast<std::size_t>(p.push[k].first)], up_free) +
                link.up_ms(push_bytes[k]);
      acked = std::max(acked, down.ack_back(up_free + lat, lat));
    }
    return acked;
  }
  // The worker hands pushes over as gradients become ready and as acks come back; an ack
  // back before the round's first hand-over no longer counts.
  std::priority_queue<double, std::vector<double>, std::greater<double>> times;
  double first = end_backward[static_cast<std::size_t>(p.push[0].first)];
  for (const Segment& s : p.push) {
    times.push(end_backward[static_cast<std::size_t>(s.first)]);
    first = std::min(first, end_backward[static_cast<std::size_t>(s.first)]);
  }
  in_flight.erase(std::remove_if(in_flight.begin(), in_flight.end(),
                                 [&](const auto& f) { return f.first <= first; }),
                  in_flight.end());
  for (const auto& f : in_flight) times.push(f.first);
  std::vector<bool> sent(p.push.size(), false);
  std::vector<std::size_t> flight_of(p.push.size());
  std::size_t left = p.push.size();
  while (left > 0 && !times.empty()) {
    const double t = times.top();
    times.pop();
    hand_over_by_priority(p, link, t, end_backward, push_bytes, sent, left, in_flight, flight_of,
                          up_free, [&](std::size_t k) {
                            const double back = down.ack_back(up_free + lat, lat);
                            in_flight[flight_of[k]].first = back;
                            acked = std::max(acked, back);
                            times.push(back);
                          });
  }
  if (left > 0) throw Error("at-once simulation: a push was never sent (a bug)");
  return acked;
}

}  // namespace

DuplexResult simulate_at_once(const std::vector<ModelProfile>& samples, const LinkProfile& link,
                              const Plan& p, const DuplexOptions& o) {
  check_samples(samples, "at-once simulation");
  link.validate();
  const ModelProfile& shape = samples[0];
  const int L = shape.num_units();
  p.validate(L);
  if (o.max_iterations < 4 || o.max_cycle < 1)
    throw InvalidInput("at-once simulation: max_iterations >= 4 and max_cycle >= 1 are required");
  const std::vector<int> order = p.pull_sequence();
  const std::vector<int> pull_seg = pull_segment_of_units(p, L);
  const SegmentCosts costs = segment_costs(shape, link, p);
  const double lat = link.latency_ms;
  const std::size_t n = samples.size();

  Downlink down;
  std::vector<double> arrive(p.pull.size()), next_arrive(p.pull.size());
  down.hand_over(lat, order, costs.pull_bytes, link, arrive);  // iteration 0's requests
  std::vector<double> acked;  // by round: when its last ack was back
  std::vector<double> end_backward(static_cast<std::size_t>(L)), previous;
  double backward_end = 0, up_free = 0;
  std::vector<std::pair<double, std::int64_t>> in_flight;  // priority: (ack back, bytes)
  std::vector<State> states;
  DuplexResult r;
  for (std::size_t t = 0; t < static_cast<std::size_t>(o.max_iterations); ++t) {
    const ModelProfile& m = samples[t % n];
    // t begins once the pushes of t-2 are acknowledged, then its forward pass waits on its
    // replies unit by unit.
    double now = std::max(backward_end, t >= 2 ? acked[t - 2] : 0.0), forward_start = 0;
    for (int u = 0; u < L; ++u) {
      const auto su = static_cast<std::size_t>(u);
      now = std::max(now, arrive[static_cast<std::size_t>(pull_seg[su])]);
      if (u == 0) forward_start = now;
      now += m.units[su].forward_ms;
    }
    down.hand_over(now + lat, order, costs.pull_bytes, link, next_arrive);  // t+1's, at once
    for (int u = L - 1; u >= 0; --u) {
      now += m.units[static_cast<std::size_t>(u)].backward_ms;
      end_backward[static_cast<std::size_t>(u)] = now;
    }
    backward_end = now;
    // The pushes of t-1: they reach the PS before t+2's requests do (t+1 began only once
    // they were acknowledged), so every reply handed over before them is known by now.
    if (t >= 1)
      acked.push_back(push_round(p, link, previous, costs.push_bytes, down, up_free, in_flight));
    previous = end_backward;
    arrive.swap(next_arrive);
    states.push_back({forward_start, backward_end, down.free(), up_free});
    r.forward_start_ms.push_back(forward_start);
    // The repeat: whole cycles of the samples.
    for (std::size_t c = n; c <= n * static_cast<std::size_t>(o.max_cycle); c += n)
      if (repeats(states, t, c)) {
        r.converged = true;
        r.cycle = static_cast<int>(c);
        r.transient = static_cast<int>(t - 3 * c);
        r.period_ms =
            (states[t].forward_start - states[t - c].forward_start) / static_cast<double>(c);
        return r;
      }
  }
  const std::size_t to = states.size() - 1, whole = states.size() / 2 / n * n;
  const std::size_t h = whole > 0 ? whole : to;
  r.period_ms = (states[to].forward_start - states[to - h].forward_start) / static_cast<double>(h);
  return r;
}

double predict_at_once_ms(const std::vector<ModelProfile>& samples, const LinkProfile& link,
                          const Plan& plan) {
  check_samples(samples, "at-once simulation");
  const auto sliced = in_atoms(samples, plan);
  const std::vector<ModelProfile>& atoms = sliced.first;
  const Plan& p = sliced.second;
  return stretched_period(atoms, link, p, simulate_at_once(atoms, link, p).period_ms, 16, 1e-7,
                          [&](const std::vector<ModelProfile>& stretched) {
                            return simulate_at_once(stretched, link, p).period_ms;
                          });
}

}  // namespace dynacomm::plan
