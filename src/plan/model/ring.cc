#include "plan/model/ring.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "plan/model/simulate.h"

namespace dynacomm::plan {

namespace {

void check_workers(int workers) {
  if (workers < 1)
    throw InvalidInput("ring all-reduce: " + std::to_string(workers) +
                       " workers (need at least 1)");
}

}  // namespace

double ring_allreduce_ms(const LinkProfile& link, int workers, std::int64_t bytes) {
  check_workers(workers);
  if (workers == 1 || bytes <= 0) return 0;
  const double steps = 2.0 * (workers - 1);
  const double overhead = std::max(link.overhead_down_ms, link.overhead_up_ms);
  const double bps = std::min(link.down_bps, link.up_bps);
  return steps * (overhead + link.latency_ms) +
         steps / workers * static_cast<double>(bytes) * 8e3 / bps;
}

LinkProfile ring_as_push_link(const LinkProfile& link, int workers) {
  check_workers(workers);
  LinkProfile out = link;
  out.latency_ms = 0;
  out.compute_stretch_down = 1;
  out.aggregation_ms = out.aggregation_ms_per_mb = 0;
  if (workers == 1) {
    out.overhead_up_ms = 0;
    out.up_bps = 1e300;  // nothing travels
    return out;
  }
  const double steps = 2.0 * (workers - 1);
  out.overhead_up_ms =
      steps * (std::max(link.overhead_down_ms, link.overhead_up_ms) + link.latency_ms);
  out.up_bps = std::min(link.down_bps, link.up_bps) * workers / steps;
  return out;
}

double simulate_ring(const ModelProfile& profile, const LinkProfile& link, int workers,
                     const std::vector<Segment>& buckets) {
  check_workers(workers);
  const int n = profile.num_units();
  Plan(std::string("ring"), {{0, n - 1}}, buckets).validate(n);
  double t = 0;
  for (const UnitProfile& u : profile.units) t += u.forward_ms;
  double link_free = 0;
  std::size_t next = 0;
  for (int u = n - 1; u >= 0; --u) {
    t = compute_end(t, profile.units[u].backward_ms, link_free, link.compute_stretch_up);
    while (next < buckets.size() && buckets[next].first == u) {
      std::int64_t bytes = 0;
      for (int k = buckets[next].first; k <= buckets[next].last; ++k)
        bytes += profile.units[k].up_bytes();
      link_free = std::max(t, link_free) + ring_allreduce_ms(link, workers, bytes);
      ++next;
    }
  }
  return std::max(t, link_free);
}

}  // namespace dynacomm::plan
