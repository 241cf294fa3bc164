#include "plan/planners/architecture.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "plan/model/ring.h"
#include "plan/planners/planner.h"
#include "plan/planners/ring_buckets.h"

namespace dynacomm::plan {

namespace {

double share(double edge_bps, double cloud_bps, int workers) {
  return cloud_bps > 0 ? std::min(edge_bps, cloud_bps / workers) : edge_bps;
}

std::string mbit(double bps) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f", bps / 1e6);
  return s;
}

ArchitecturePrediction predict_ps(const ModelProfile& profile, const LinkProfile& edge,
                                  const CloudLink& cloud, int workers,
                                  const std::string& scheduler) {
  const LinkProfile link = ps_link_share(edge, cloud, workers);
  const std::vector<std::string> names = scheduler == kAutoScheduler
                                             ? std::vector<std::string>{"dynacomm", "dynacomm-fd"}
                                             : std::vector<std::string>{scheduler};
  ArchitecturePrediction best{"ps", 0, ""};
  for (const std::string& name : names) {
    const PlannerOptions options;
    const double ms =
        predict_plan_ms(profile, link, make_plan(name, profile, link, options), options);
    if (best.how.empty() || ms < best.ms)
      best = {"ps", ms, name + " on " + mbit(link.down_bps) + "/" + mbit(link.up_bps) + " Mbit/s"};
  }
  return best;
}

ArchitecturePrediction predict_allreduce(const ModelProfile& profile, const LinkProfile& edge,
                                         int workers) {
  ModelProfile ring = profile;  // the ring carries the pushes' encoding both ways (fp16)
  for (UnitProfile& u : ring.units) u.bytes = u.up_bytes();
  const RingCost cost = RingCost::of(edge, workers);
  const std::vector<Segment> buckets = optimal_ring_buckets(ring, cost);
  return {"allreduce", simulate_ring(ring, cost, buckets),
          std::to_string(buckets.size()) + " planned bucket(s)"};
}

}  // namespace

LinkProfile ps_link_share(const LinkProfile& edge, const CloudLink& cloud, int workers) {
  LinkProfile link = edge;
  link.down_bps = share(edge.down_bps, cloud.out_bps, workers);
  link.up_bps = share(edge.up_bps, cloud.in_bps, workers);
  return link;
}

std::string ArchitectureChoice::text() const {
  std::string out = chosen + ", predicted";
  for (const ArchitecturePrediction& p : predictions) {
    char ms[32];
    std::snprintf(ms, sizeof ms, " %.0f ms", p.ms);
    out += (&p == &predictions.front() ? " " : ", ") + p.arch + ms + " (" + p.how + ")";
  }
  std::string tried;
  for (const ArchitecturePrediction& p : predictions)
    if (p.measured_ms > 0) {
      char ms[32];
      std::snprintf(ms, sizeof ms, " %.0f ms", p.measured_ms);
      tried += (tried.empty() ? "" : ", ") + p.arch + ms;
    }
  if (!tried.empty()) out += "; measured in trials " + tried;
  return out;
}

ArchitectureChoice choose_architecture(const ModelProfile& profile, const LinkProfile& edge,
                                       const CloudLink& cloud, int workers,
                                       const std::vector<std::string>& candidates,
                                       const std::string& ps_scheduler, Topology topology) {
  if (candidates.empty()) throw InvalidInput("--arch auto: no architecture fits this job");
  ArchitectureChoice c;
  for (const std::string& arch : candidates) {
    if (arch == "ps") {
      c.predictions.push_back(predict_ps(profile, edge, cloud, workers, ps_scheduler));
    } else if (arch == "allreduce") {
      c.predictions.push_back(predict_allreduce(profile, edge, workers));
    } else if (arch == "gossip") {
      c.predictions.push_back({"gossip", simulate_gossip(profile, edge, topology, workers),
                               topology_name(topology) + " of " + std::to_string(workers)});
    } else {
      throw InvalidInput("--arch auto: unknown architecture '" + arch +
                         "' (known: ps, allreduce, gossip)");
    }
  }
  c.chosen = std::min_element(c.predictions.begin(), c.predictions.end(),
                              [](const auto& a, const auto& b) { return a.ms < b.ms; })
                 ->arch;
  return c;
}

}  // namespace dynacomm::plan
