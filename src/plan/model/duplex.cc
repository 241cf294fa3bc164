#include "plan/model/duplex.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <tuple>

#include "base/error.h"
#include "plan/model/duplex_parts.h"
#include "plan/model/slicing.h"
#include "plan/planners/planner.h"

namespace dynacomm::plan {

using namespace detail;  // plan/model/duplex_parts.h

namespace {

// One round of a priority plan, after iteration t's backward pass. The worker hands t's
// pushes to the uplink, a FIFO (the kernel's socket and queue), the ready segment lowest
// in the model first, as long as the bytes handed over and not yet acknowledged stay
// within the credit (or none are): a small credit keeps the queue short so that priority
// acts, a large one hands over in the order the gradients came. On the downlink, first
// come first served in the order the PS hands them over: the acks (one as each push
// arrives) and t+1's pull replies (each once its request and all its units' gradients
// are in, plus the aggregation; the lower first among those ready together). A push's
// credit comes back when its ack reaches the worker, one latency after the downlink
// carried it: behind t+1's parameters when the downlink is busy with them, as on a real
// link (one stream each way). The ack itself takes no link time. Events in time order; at
// one instant arrivals at the PS before replies becoming ready, those before the worker's
// hand-over (which sees every ack back by then).
void priority_round(const Plan& p, const LinkProfile& link, double request,
                    const std::vector<double>& end_backward,
                    const std::vector<std::int64_t>& push_bytes,
                    const std::vector<double>& push_aggregation_ms,
                    const std::vector<std::int64_t>& pull_bytes, const std::vector<int>& pull_seg,
                    std::vector<double>& exists, std::vector<double>& arrive,
                    std::vector<std::pair<double, std::int64_t>>& in_flight, double& up_free,
                    double& down_free) {
  enum Kind { kArrival = 0, kPullReady = 1, kUplink = 2 };
  struct Event {
    double time;
    int kind, key;
    std::size_t index;
    bool operator>(const Event& o) const {
      return std::tie(time, kind, key, index) > std::tie(o.time, o.kind, o.key, o.index);
    }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  const double lat = link.latency_ms;
  const std::size_t n_push = p.push.size(), n_pull = p.pull.size();
  std::vector<int> missing(n_pull);  // units of each pull segment whose gradient is still out
  std::vector<double> ready_at(n_pull, request);
  for (std::size_t k = 0; k < n_pull; ++k) missing[k] = p.pull[k].last - p.pull[k].first + 1;
  std::vector<bool> sent(n_push, false);
  std::vector<std::size_t> flight_of(n_push);
  std::size_t left = n_push;
  // The worker hands pushes over when a gradient becomes ready and when an ack comes back
  // (the previous round's too).
  for (std::size_t k = 0; k < n_push; ++k)
    events.push({end_backward[static_cast<std::size_t>(p.push[k].first)], kUplink, 0, 0});
  for (const auto& f : in_flight) events.push({f.first, kUplink, 0, 0});
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    switch (e.kind) {
      case kArrival: {
        const double start = std::max(e.time, down_free);  // the ack, behind what went before
        const double back = start + lat;
        in_flight[flight_of[e.index]].first = back;
        events.push({back, kUplink, 0, 0});
        const Segment& s = p.push[e.index];
        const double servable = e.time + push_aggregation_ms[e.index];
        for (int u = s.first; u <= s.last; ++u) {
          exists[static_cast<std::size_t>(u)] = servable;
          const auto q = static_cast<std::size_t>(pull_seg[static_cast<std::size_t>(u)]);
          ready_at[q] = std::max(ready_at[q], servable);
          if (--missing[q] == 0) events.push({ready_at[q], kPullReady, p.pull[q].first, q});
        }
        break;
      }
      case kPullReady: {
        const double start = std::max(e.time, down_free);
        down_free = start + link.down_ms(pull_bytes[e.index]);
        arrive[e.index] = down_free + lat;
        break;
      }
      case kUplink:
        hand_over_by_priority(p, link, e.time, end_backward, push_bytes, sent, left, in_flight,
                              flight_of, up_free, [&](std::size_t k) {
                                events.push({up_free + lat, kArrival, 0, k});
                              });
        break;
    }
  }
  if (left > 0) throw Error("duplex simulation: a push was never sent (a bug)");
  in_flight.erase(std::remove_if(in_flight.begin(), in_flight.end(),
                                 [&](const auto& f) { return f.first <= up_free; }),
                  in_flight.end());
}

}  // namespace

DuplexResult simulate_duplex(const ModelProfile& profile, const LinkProfile& link, const Plan& p,
                             const DuplexOptions& o) {
  if (o.pulls_answered_at_once) return simulate_at_once({profile}, link, p, o);
  profile.validate();
  link.validate();
  const int L = static_cast<int>(profile.units.size());
  p.validate(L);
  if (o.max_iterations < 4 || o.max_cycle < 1)
    throw InvalidInput("duplex simulation: max_iterations >= 4 and max_cycle >= 1 are required");
  const std::vector<int> order = p.pull_sequence();
  const std::vector<int> pull_seg = pull_segment_of_units(p, L);
  const SegmentCosts costs = segment_costs(profile, link, p);
  const std::vector<std::int64_t>&pull_bytes = costs.pull_bytes, &push_bytes = costs.push_bytes;

  const double lat = link.latency_ms;
  std::vector<double> exists(static_cast<std::size_t>(L), 0.0);  // parameters for t at the PS
  std::vector<double> arrive(p.pull.size()), end_backward(static_cast<std::size_t>(L));
  double request = lat, backward_end = 0, down_free = 0, up_free = 0;
  std::vector<State> states;
  DuplexResult r;
  const bool priority = p.credit_bytes > 0;
  std::vector<std::pair<double, std::int64_t>> in_flight;  // priority: (ack time, bytes)
  std::vector<std::pair<double, int>> served(p.pull.size());
  for (int t = 0; t < o.max_iterations; ++t) {
    // The downlink: in pull order (the PS answers in order), or, scheduled by priority, as
    // each segment becomes ready, the lower first among those ready together. Past the
    // first iteration a priority plan's pulls were served with the previous pushes' acks
    // (priority_round).
    if (t == 0 || !priority) {
      for (std::size_t i = 0; i < order.size(); ++i) {
        const int k = order[i];
        const Segment& s = p.pull[static_cast<std::size_t>(k)];
        double ready = request;
        for (int u = s.first; u <= s.last; ++u)
          ready = std::max(ready, exists[static_cast<std::size_t>(u)]);
        served[i] = {ready, k};
      }
      if (priority) std::stable_sort(served.begin(), served.end());
      for (const auto& [ready, k] : served) {
        const double start = std::max(ready, down_free);
        down_free = start + link.down_ms(pull_bytes[static_cast<std::size_t>(k)]);
        arrive[static_cast<std::size_t>(k)] = down_free + lat;
      }
    }
    double now = backward_end, forward_start = 0;  // forward, bottom-up
    for (int u = 0; u < L; ++u) {
      now = std::max(now, arrive[static_cast<std::size_t>(pull_seg[static_cast<std::size_t>(u)])]);
      if (u == 0) forward_start = now;
      now += profile.units[static_cast<std::size_t>(u)].forward_ms;
    }
    request = now + lat;                // the next iteration's requests leave as backward starts
    for (int u = L - 1; u >= 0; --u) {  // backward, top-down
      now += profile.units[static_cast<std::size_t>(u)].backward_ms;
      end_backward[static_cast<std::size_t>(u)] = now;
    }
    backward_end = now;
    auto send = [&](std::size_t k, double start) {
      const Segment& s = p.push[k];
      up_free = start + link.up_ms(push_bytes[k]);
      for (int u = s.first; u <= s.last; ++u)
        exists[static_cast<std::size_t>(u)] = up_free + lat + costs.push_aggregation_ms[k];
    };
    if (!priority) {
      for (std::size_t k = 0; k < p.push.size(); ++k)  // the uplink, in send order
        send(k, std::max(end_backward[static_cast<std::size_t>(p.push[k].first)], up_free));
    } else {
      priority_round(p, link, request, end_backward, push_bytes, costs.push_aggregation_ms,
                     pull_bytes, pull_seg, exists, arrive, in_flight, up_free, down_free);
    }
    states.push_back({forward_start, backward_end, down_free, up_free});
    r.forward_start_ms.push_back(forward_start);
    for (int c = 1; c <= o.max_cycle; ++c)
      if (repeats(states, static_cast<std::size_t>(t), static_cast<std::size_t>(c))) {
        r.converged = true;
        r.cycle = c;
        r.transient = t - 3 * c;
        r.period_ms = (states[static_cast<std::size_t>(t)].forward_start -
                       states[static_cast<std::size_t>(t - c)].forward_start) /
                      c;
        return r;
      }
  }
  const std::size_t n = states.size(), h = n / 2;
  r.period_ms =
      (states[n - 1].forward_start - states[h].forward_start) / static_cast<double>(n - 1 - h);
  return r;
}

double simulate_duplex_workers_ms(const std::vector<ModelProfile>& samples, int workers,
                                  const LinkProfile& link, const Plan& p) {
  if (workers < 1) throw InvalidInput("duplex simulation of workers: at least one worker");
  check_samples(samples, "duplex simulation of workers");
  link.validate();
  const ModelProfile& shape = samples[0];
  const int L = shape.num_units();
  p.validate(L);
  const auto W = static_cast<std::size_t>(workers);
  const std::size_t n_push = p.push.size(), n_pull = p.pull.size();
  const bool priority = p.credit_bytes > 0;
  const std::vector<int> order = p.pull_sequence();
  std::vector<std::size_t> position(n_pull);  // in the pull order
  for (std::size_t i = 0; i < order.size(); ++i) position[static_cast<std::size_t>(order[i])] = i;
  const std::vector<int> pull_seg = pull_segment_of_units(p, L);
  const SegmentCosts costs = segment_costs(shape, link, p);
  const std::vector<std::int64_t>&pull_bytes = costs.pull_bytes, &push_bytes = costs.push_bytes;
  const double lat = link.latency_ms;

  std::vector<double> down_free(W, 0), up_free(W, 0), backward_end(W, 0), request(W, 0);
  std::vector<std::vector<double>> arrive(W, std::vector<double>(n_pull, 0));
  std::vector<std::vector<double>> end_backward(W,
                                                std::vector<double>(static_cast<std::size_t>(L)));
  std::vector<std::vector<std::pair<double, std::int64_t>>> in_flight(W);  // (ack back, bytes)
  // Iteration 0: every request arrives one latency in and every unit exists; replies go in
  // pull order (by priority: the lower first, all being ready together).
  for (std::size_t w = 0; w < W; ++w)
    for (std::size_t i = 0; i < n_pull; ++i) {
      const std::size_t k = priority ? i : static_cast<std::size_t>(order[i]);
      down_free[w] = std::max(lat, down_free[w]) + link.down_ms(pull_bytes[k]);
      arrive[w][k] = down_free[w] + lat;
    }

  enum Kind { kArrival = 0, kPullReady = 1, kUplink = 2 };
  struct Event {
    double time;
    int kind;
    std::size_t key, worker, index;
    bool operator>(const Event& e) const {
      return std::tie(time, kind, key, worker, index) >
             std::tie(e.time, e.kind, e.key, e.worker, e.index);
    }
  };
  const std::size_t n = samples.size(), transient = 16, rounds = transient + 24 * n + 1;
  std::vector<double> starts;
  for (std::size_t round = 0; round < rounds; ++round) {
    for (std::size_t w = 0; w < W; ++w) {  // forward and backward
      const ModelProfile& m = samples[(round + w) % n];
      double now = backward_end[w];
      for (int u = 0; u < L; ++u) {
        const auto su = static_cast<std::size_t>(u);
        now = std::max(now, arrive[w][static_cast<std::size_t>(pull_seg[su])]);
        if (u == 0 && w == 0) starts.push_back(now);
        now += m.units[su].forward_ms;
      }
      request[w] = now + lat;  // the next iteration's requests leave as backward starts
      for (int u = L - 1; u >= 0; --u) {
        now += m.units[static_cast<std::size_t>(u)].backward_ms;
        end_backward[w][static_cast<std::size_t>(u)] = now;
      }
      backward_end[w] = now;
    }
    // Every worker's pushes of this iteration, their acks and the next one's replies.
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
    std::vector<int> count(static_cast<std::size_t>(L), 0);  // gradients of u in
    std::vector<int> missing(n_pull);                        // units not yet released
    std::vector<double> released(n_pull, 0);                 // when all of it exists
    for (std::size_t k = 0; k < n_pull; ++k) missing[k] = p.pull[k].last - p.pull[k].first + 1;
    std::vector<std::vector<bool>> sent(W, std::vector<bool>(n_push, false));
    std::vector<std::vector<std::size_t>> flight_of(W, std::vector<std::size_t>(n_push));
    std::vector<std::size_t> next_push(W, 0), next_pull(W, 0), left(W, n_push);
    std::vector<double> last_handover(W, 0);
    for (std::size_t w = 0; w < W; ++w) {
      for (std::size_t k = 0; k < n_push; ++k)
        events.push({end_backward[w][static_cast<std::size_t>(p.push[k].first)], kUplink, 0, w, 0});
      for (const auto& f : in_flight[w]) events.push({f.first, kUplink, 0, w, 0});
    }
    // In pull order: worker v's next replies, as far as their units are released.
    auto hand_in_order = [&](std::size_t v) {
      while (next_pull[v] < n_pull) {
        const auto q = static_cast<std::size_t>(order[next_pull[v]]);
        if (missing[q] > 0) break;
        last_handover[v] = std::max({released[q], request[v], last_handover[v]});
        events.push({last_handover[v], kPullReady, next_pull[v], v, q});
        ++next_pull[v];
      }
    };
    while (!events.empty()) {
      const Event e = events.top();
      events.pop();
      const std::size_t w = e.worker;
      if (e.kind == kArrival) {
        if (priority) {  // the ack, behind what w's downlink was given before
          const double back = std::max(e.time, down_free[w]) + lat;
          in_flight[w][flight_of[w][e.index]].first = back;
          events.push({back, kUplink, 0, w, 0});
        }
        bool newly = false;
        for (int u = p.push[e.index].first; u <= p.push[e.index].last; ++u) {
          if (++count[static_cast<std::size_t>(u)] < workers) continue;  // not the last
          const auto q = static_cast<std::size_t>(pull_seg[static_cast<std::size_t>(u)]);
          released[q] = std::max(released[q], e.time + costs.push_aggregation_ms[e.index]);
          if (--missing[q] > 0) continue;
          newly = true;
          if (priority)
            for (std::size_t v = 0; v < W; ++v)
              events.push({std::max(released[q], request[v]), kPullReady,
                           static_cast<std::size_t>(p.pull[q].first), v, q});
        }
        if (newly && !priority)
          for (std::size_t v = 0; v < W; ++v) hand_in_order(v);
      } else if (e.kind == kPullReady) {
        down_free[w] = std::max(e.time, down_free[w]) + link.down_ms(pull_bytes[e.index]);
        arrive[w][e.index] = down_free[w] + lat;
      } else if (priority) {  // w hands over the lowest ready pushes the credit allows
        hand_over_by_priority(p, link, e.time, end_backward[w], push_bytes, sent[w], left[w],
                              in_flight[w], flight_of[w], up_free[w], [&](std::size_t k) {
                                events.push({up_free[w] + lat, kArrival, 0, w, k});
                              });
      } else {  // in send order, each once its gradients are in
        while (next_push[w] < n_push &&
               end_backward[w][static_cast<std::size_t>(p.push[next_push[w]].first)] <= e.time) {
          up_free[w] = std::max(e.time, up_free[w]) + link.up_ms(push_bytes[next_push[w]]);
          events.push({up_free[w] + lat, kArrival, 0, w, next_push[w]});
          ++next_push[w];
        }
      }
    }
    for (std::size_t w = 0; w < W; ++w) {
      if ((priority ? left[w] : n_push - next_push[w]) > 0 ||
          next_pull[w] < (priority ? 0 : n_pull))
        throw Error("duplex simulation of workers: a transfer was never made (a bug)");
      auto& f = in_flight[w];
      f.erase(
          std::remove_if(f.begin(), f.end(), [&](const auto& x) { return x.first <= up_free[w]; }),
          f.end());
    }
  }
  return (starts[transient + 24 * n] - starts[transient]) / static_cast<double>(24 * n);
}

double predict_duplex_workers_ms(const std::vector<ModelProfile>& samples, int workers,
                                 const LinkProfile& link, const Plan& plan) {
  if (samples.empty())
    throw InvalidInput("duplex simulation of workers: at least one sample and one worker");
  const auto sliced = in_atoms(samples, plan);
  const std::vector<ModelProfile>& atoms = sliced.first;
  const Plan& p = sliced.second;
  // A few rounds: each is a simulation of every worker over whole cycles of the samples.
  return stretched_period(atoms, link, p, simulate_duplex_workers_ms(atoms, workers, link, p), 8,
                          1e-4, [&](const std::vector<ModelProfile>& stretched) {
                            return simulate_duplex_workers_ms(stretched, workers, link, p);
                          });
}

double predict_duplex_ms(const ModelProfile& profile, const LinkProfile& link, const Plan& p,
                         const DuplexOptions& o) {
  return stretched_period({profile}, link, p, simulate_duplex(profile, link, p, o).period_ms, 16,
                          1e-7, [&](const std::vector<ModelProfile>& stretched) {
                            return simulate_duplex(stretched[0], link, p, o).period_ms;
                          });
}

double ideal_duplex_ms(const ModelProfile& profile, const LinkProfile& link) {
  profile.validate();
  link.validate();
  double compute = 0;
  for (const auto& u : profile.units) compute += u.forward_ms + u.backward_ms;
  LinkProfile free = link;
  free.overhead_down_ms = free.overhead_up_ms = 0;
  const double down = free.down_ms(profile.total_pull_bytes()),
               up = free.up_ms(profile.total_push_bytes());
  // Compute under a busy link, as predict_duplex_ms charges it: the bound p solves
  // p = max(compute x (1 + (s_d - 1) min(1, down/p) + (s_u - 1) min(1, up/p)), down, up);
  // the right-hand side falls as p grows, so iterating from the stretch-free bound
  // converges (to within 1e-9) whenever the stretches are below 2, and stays bracketed.
  double p = std::max({compute, down, up});
  for (int round = 0; round < 200 && p > 0; ++round) {
    const double next = std::max({compute * mean_stretch(link, down, up, p), down, up});
    const bool done = std::abs(next - p) <= 1e-9 * std::max(1.0, p);
    p = next;
    if (done) break;
  }
  return p;
}

namespace {

// A point of the search space: cut after unit u (pull / push), and for each pull segment
// (named by its top unit) whether it is prefetched.
struct Candidate {
  std::vector<bool> pull_cut, push_cut, prefetch;
};

Plan to_plan(const Candidate& c) {
  Plan d;
  d.scheduler = "dynacomm-fd";
  d.full_duplex = true;
  d.pull = segments_of_cuts(c.pull_cut);
  d.push = reverse_to_send_order(segments_of_cuts(c.push_cut));
  const int n = static_cast<int>(d.pull.size());
  for (int i = n - 1; i >= 0; --i)
    if (c.prefetch[static_cast<std::size_t>(d.pull[static_cast<std::size_t>(i)].last)])
      d.pull_order.push_back(i);
  for (int i = 0; i < n; ++i)
    if (!c.prefetch[static_cast<std::size_t>(d.pull[static_cast<std::size_t>(i)].last)])
      d.pull_order.push_back(i);
  return d;
}

std::vector<bool> bits(unsigned long mask, std::size_t n) {
  std::vector<bool> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = (mask >> i) & 1;
  return v;
}

class Search {
 public:
  Search(const ModelProfile& p, const LinkProfile& l, const DuplexOptions& o)
      : p_(p), l_(l), o_(o), L_(static_cast<int>(p.units.size())) {
    for (const auto& u : p.units) compute_ += u.forward_ms + u.backward_ms;
  }
  double evaluate(const Candidate& c) {
    ++evaluations_;
    const DuplexResult r = simulate_duplex(p_, l_, to_plan(c), o_);
    if (r.period_ms < best_ms_) {
      best_ms_ = r.period_ms;
      best_ = c;
    }
    return r.period_ms;
  }
  // Every point of the family, pruned by the resource bounds.
  void exhaustive() {
    const std::size_t n = static_cast<std::size_t>(L_ - 1);
    for (unsigned long push = 0; push < (1ul << n); ++push) {
      const std::vector<bool> push_cut = bits(push, n);
      const double up = busy_ms(p_, segments_of_cuts(push_cut), l_.overhead_up_ms, l_.up_bps, true);
      if (std::max(compute_, up) >= best_ms_) continue;
      for (unsigned long pull = 0; pull < (1ul << n); ++pull) {
        const std::vector<bool> pull_cut = bits(pull, n);
        const double down =
            busy_ms(p_, segments_of_cuts(pull_cut), l_.overhead_down_ms, l_.down_bps, false);
        if (std::max({compute_, up, down}) >= best_ms_) continue;
        // Prefetch flags live on the segments' top units: enumerate subsets of segments.
        std::vector<int> tops;
        for (const Segment& s : segments_of_cuts(pull_cut)) tops.push_back(s.last);
        for (unsigned long sub = 0; sub < (1ul << tops.size()); ++sub) {
          Candidate c{pull_cut, push_cut, std::vector<bool>(static_cast<std::size_t>(L_))};
          for (std::size_t i = 0; i < tops.size(); ++i)
            c.prefetch[static_cast<std::size_t>(tops[i])] = (sub >> i) & 1;
          evaluate(c);
        }
      }
    }
  }
  // First-improvement local search from c; stops at a local optimum or the budget.
  void local(Candidate c, long budget) {
    double here = evaluate(c);
    const std::size_t n = static_cast<std::size_t>(L_ - 1);
    for (bool improved = true; improved && evaluations_ < budget;) {
      improved = false;
      for (int kind = 0; kind < 5 && evaluations_ < budget; ++kind)
        for (std::size_t u = 0; u < (kind == 2 ? n + 1 : n) && evaluations_ < budget; ++u) {
          Candidate m = c;
          if (kind == 0 || kind == 3) m.pull_cut[u] = !m.pull_cut[u];
          if (kind == 1 || kind == 4) m.push_cut[u] = !m.push_cut[u];
          if (kind == 2 || kind == 3) m.prefetch[u] = !m.prefetch[u];
          if (kind == 4) m.pull_cut[u] = !m.pull_cut[u];
          const double t = evaluate(m);
          if (t < here * (1 - 1e-12)) {
            here = t;
            c = std::move(m);
            improved = true;
          }
        }
    }
  }
  Candidate from(const Plan& plan, bool prefetch_all) const {
    return Candidate{cuts_of_segments(plan.pull, L_), cuts_of_segments(plan.push, L_),
                     std::vector<bool>(static_cast<std::size_t>(L_), prefetch_all)};
  }
  // Iterated local search: from the best so far, a few random toggles, then local search
  // again; deterministic (fixed seed).
  void perturbations(int rounds, long budget) {
    std::mt19937_64 rng(12345);
    const std::size_t n = static_cast<std::size_t>(L_ - 1);
    for (int r = 0; r < rounds && evaluations_ < budget && n > 0; ++r) {
      Candidate c = best_;
      for (int k = 0; k < 3; ++k) {
        const std::size_t u = std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
        switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
          case 0:
            c.pull_cut[u] = !c.pull_cut[u];
            break;
          case 1:
            c.push_cut[u] = !c.push_cut[u];
            break;
          default:
            c.prefetch[u] = !c.prefetch[u];
            break;
        }
      }
      local(std::move(c), budget);
    }
  }
  Plan best() const { return to_plan(best_); }
  long evaluations() const { return evaluations_; }

 private:
  const ModelProfile& p_;
  const LinkProfile& l_;
  const DuplexOptions& o_;
  int L_;
  double compute_ = 0, best_ms_ = 1e300;
  Candidate best_;
  long evaluations_ = 0;
};

}  // namespace

Plan plan_duplex(const ModelProfile& profile, const LinkProfile& link,
                 const DuplexPlannerOptions& o) {
  profile.validate();
  link.validate();
  const int L = static_cast<int>(profile.units.size());
  Search search(profile, link, o.simulation);
  if (L <= o.exact_up_to && L <= 20) {
    search.exhaustive();
    return search.best();
  }
  // Starts: the phase-separated optimum's segments, every unit alone, one segment; each
  // with nothing and with everything prefetched. The budget is shared.
  // (The search plans without the compute stretch, so the starts do too.)
  const PlannerOptions po;
  LinkProfile plain = link;
  plain.compute_stretch_down = plain.compute_stretch_up = 1;
  for (const char* start : {"dynacomm", "layerwise", "sequential"})
    for (bool prefetch : {false, true})
      search.local(search.from(make_plan(start, profile, plain, po), prefetch), o.max_evaluations);
  search.perturbations(o.perturbations, o.max_evaluations);
  return search.best();
}

Plan plan_duplex_exhaustive(const ModelProfile& profile, const LinkProfile& link,
                            const DuplexPlannerOptions& o) {
  if (profile.units.size() > 7) throw InvalidInput("plan_duplex_exhaustive: at most 7 units");
  DuplexPlannerOptions exact = o;
  exact.exact_up_to = 7;
  return plan_duplex(profile, link, exact);
}

Plan brute_force_duplex_family(const ModelProfile& profile, const LinkProfile& link,
                               const DuplexOptions& o) {
  const int L = static_cast<int>(profile.units.size());
  if (L > 10) throw InvalidInput("brute_force_duplex_family: at most 10 units");
  const std::size_t n = static_cast<std::size_t>(L - 1);
  Plan best;
  double best_ms = 1e300;
  for (unsigned long pull = 0; pull < (1ul << n); ++pull) {
    const std::vector<Segment> ascending = segments_of_cuts(bits(pull, n));
    const std::size_t k = ascending.size();
    for (unsigned long prefetched = 0; prefetched < (1ul << k); ++prefetched)
      for (unsigned long push = 0; push < (1ul << n); ++push) {
        Plan d{"brute-force", ascending, reverse_to_send_order(segments_of_cuts(bits(push, n)))};
        d.full_duplex = true;
        for (std::size_t i = k; i-- > 0;)  // the chosen segments, top first
          if ((prefetched >> i) & 1) d.pull_order.push_back(static_cast<int>(i));
        for (std::size_t i = 0; i < k; ++i)  // then the others, bottom-up
          if (!((prefetched >> i) & 1)) d.pull_order.push_back(static_cast<int>(i));
        const double t = simulate_duplex(profile, link, d, o).period_ms;
        if (t < best_ms) {
          best_ms = t;
          best = d;
        }
      }
  }
  return best;
}

Plan brute_force_duplex(const ModelProfile& profile, const LinkProfile& link,
                        const DuplexOptions& o) {
  const int L = static_cast<int>(profile.units.size());
  if (L > 7) throw InvalidInput("brute_force_duplex: at most 7 units");
  const std::size_t n = static_cast<std::size_t>(L - 1);
  Plan best;
  double best_ms = 1e300;
  for (unsigned long pull = 0; pull < (1ul << n); ++pull)
    for (unsigned long push = 0; push < (1ul << n); ++push) {
      Plan d{"brute-force", segments_of_cuts(bits(pull, n)),
             reverse_to_send_order(segments_of_cuts(bits(push, n)))};
      d.full_duplex = true;
      d.pull_order.resize(d.pull.size());
      for (std::size_t i = 0; i < d.pull_order.size(); ++i) d.pull_order[i] = static_cast<int>(i);
      do {
        const double t = simulate_duplex(profile, link, d, o).period_ms;
        if (t < best_ms) {
          best_ms = t;
          best = d;
        }
      } while (std::next_permutation(d.pull_order.begin(), d.pull_order.end()));
    }
  return best;
}

}  // namespace dynacomm::plan
