#include "worker/calibration.h"

#include <algorithm>

#include "ps/sync_policy.h"

namespace dynacomm::worker {

namespace {
plan::EstimatorOptions warmup_weights(const WorkerOptions& o) {
  plan::EstimatorOptions w;
  w.window = o.warmup;
  w.half_life = 1e9;
  return w;
}

// Plan for the link the transfers showed (plan::planned_link): the fitted line unless
// the given bandwidth explains them as well.
void use(const plan::LinkFit& f, const std::vector<plan::TransferSample>& samples, double given,
         double& bps, double& overhead) {
  const plan::LinkFit p = plan::planned_link(f, samples, given);
  bps = p.bandwidth_bps;
  overhead = p.overhead_ms;
}
}  // namespace

// The warm-up's unit times, all iterations alike but the first: it runs cold (first
// allocations, caches), up to 1.7x as long as the next, and would bias the plans' inputs.
Calibration::Calibration(const WorkerOptions& o, std::size_t units)
    : o_(o), units_(units), weights_(warmup_weights(o)), compute_(units, weights_) {}

void Calibration::add_transfer(std::int64_t iteration, bool up, double bytes, double service_ms) {
  if (iteration < o_.warmup) (up ? up_ : down_).push_back({bytes, service_ms, 1.0});
}

void Calibration::add_updates(const std::vector<plan::TransferSample>& updates) {
  updates_.insert(updates_.end(), updates.begin(), updates.end());
}

void Calibration::add_units(std::int64_t it, const UnitTimes& t, bool cpu_valid) {
  cpu_known_ = cpu_known_ && cpu_valid;
  cpu_.push_back({it, t.forward_cpu, t.backward_cpu});
  if (it > 0 || o_.warmup == 1) {
    units_seen_.push_back({it, t.forward_ms, t.backward_ms});
    compute_.add(it, t.forward_ms, t.backward_ms);
  }
}

void Calibration::pace(std::int64_t it, double factor) {
  compute_.pace(it, factor);
  if (it < o_.warmup) paces_[it] = factor;
}

Calibrated Calibration::finish(std::int64_t it, StretchTracker& tracker, Estimators& estimators,
                               std::vector<UnitSample>& log, plan::ModelProfile& profile,
                               plan::LinkProfile& given, plan::LinkProfile link) {
  Calibrated c;
  if (cpu_known_ && !cpu_.empty()) {
    c.compute_stretch = tracker.fit_warmup(it);
    given.compute_stretch_down = link.compute_stretch_down = c.compute_stretch.down;
    given.compute_stretch_up = link.compute_stretch_up = c.compute_stretch.up;
    // The warm-up's iterations again, at idle-link speed, with their paces.
    compute_ = plan::UnitTimeEstimator(units_, weights_);
    estimators.compute = plan::UnitTimeEstimator(units_, o_.estimator);
    units_seen_.clear();
    for (const UnitSample& s : cpu_) {
      if (s.iteration > 0 || o_.warmup == 1) {
        units_seen_.push_back(
            {s.iteration, tracker.at_idle_speed(s.forward), tracker.at_idle_speed(s.backward)});
        compute_.add(s.iteration, units_seen_.back().forward, units_seen_.back().backward);
      }
      estimators.compute.add(s.iteration, tracker.at_idle_speed(s.forward),
                             tracker.at_idle_speed(s.backward));
      for (UnitSample& l : log)
        if (l.iteration == s.iteration) {
          l.forward = tracker.at_idle_speed(s.forward);
          l.backward = tracker.at_idle_speed(s.backward);
        }
    }
    for (const auto& [i, f] : paces_) {
      compute_.pace(i, f);
      estimators.compute.pace(i, f);
    }
  }
  compute_.apply(profile);
  c.measured_down = plan::fit_link(down_, o_.link.down_bps);
  c.measured_up = plan::fit_link(up_, o_.link.up_bps);
  use(c.measured_down, down_, o_.link.down_bps, link.down_bps, link.overhead_down_ms);
  use(c.measured_up, up_, o_.link.up_bps, link.up_bps, link.overhead_up_ms);
  // The PS's aggregation, which the full-duplex model charges before a unit's next pull;
  // kept for the online estimates too.
  c.aggregation = plan::fit_aggregation(updates_);
  given.aggregation_ms = link.aggregation_ms = c.aggregation.ms;
  given.aggregation_ms_per_mb = link.aggregation_ms_per_mb = c.aggregation.ms_per_mb;
  // Several workers whose compute differs (plan/model/duplex.h): this worker's unit times in the
  // warm-up's iterations as factors on the profile, which the model of several workers
  // draws every worker's times from (the others taken to be like this one).
  c.planner = o_.planner;
  c.planner.workers = o_.workers;
  // Under ASP the PS answers every pull at once (plan::PlannerOptions::
  // pulls_answered_at_once). Under backup workers only a straggler's: the others' wait for
  // N-B pushes, their own among them, and a credit plan serves them best (cnn, 4 workers,
  // one on 5 Mbit/s: the fast ones' plans predicted 389 ms with a credit, 445 without).
  c.planner.pulls_answered_at_once = ps::is_asp(o_.sync);
  if (o_.workers > 1)
    for (const UnitSample& s : units_seen_) {
      plan::ComputeFactors f;
      for (std::size_t u = 0; u < profile.units.size(); ++u) {
        const double fw = profile.units[u].forward_ms, bw = profile.units[u].backward_ms;
        f.forward.push_back(fw > 0 && s.forward[u] > 0 ? s.forward[u] / fw : 1);
        f.backward.push_back(bw > 0 && s.backward[u] > 0 ? s.backward[u] / bw : 1);
      }
      c.planner.compute_spread.push_back(std::move(f));
    }
  c.link = link;
  return c;
}

}  // namespace dynacomm::worker
