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

RingCost RingCost::of(const LinkProfile& link, int workers) {
  check_workers(workers);
  RingCost c;
  if (workers == 1) return c;
  const double steps = 2.0 * (workers - 1);
  c.fixed_ms = steps * (std::max(link.overhead_down_ms, link.overhead_up_ms) + link.latency_ms);
  c.bps = std::min(link.down_bps, link.up_bps) * workers / steps;
  return c;
}

LinkProfile RingCost::as_push_link() const {
  LinkProfile out;
  out.down_bps = out.up_bps = bps > 0 ? bps : 1e300;  // 0: an instant link
  out.overhead_down_ms = out.overhead_up_ms = bps > 0 ? fixed_ms : 0;
  return out;
}

double ring_allreduce_ms(const LinkProfile& link, int workers, std::int64_t bytes) {
  return RingCost::of(link, workers).ms(bytes);
}

double simulate_ring(const ModelProfile& profile, const RingCost& cost,
                     const std::vector<Segment>& buckets, double stretch_up) {
  const int n = profile.num_units();
  Plan(std::string("ring"), {{0, n - 1}}, buckets).validate(n);
  double t = 0;
  for (const UnitProfile& u : profile.units) t += u.forward_ms;
  double link_free = 0;
  std::size_t next = 0;
  for (int u = n - 1; u >= 0; --u) {
    t = compute_end(t, profile.units[u].backward_ms, link_free, stretch_up);
    while (next < buckets.size() && buckets[next].first == u) {
      std::int64_t bytes = 0;
      for (int k = buckets[next].first; k <= buckets[next].last; ++k)
        bytes += profile.units[k].up_bytes();
      link_free = std::max(t, link_free) + cost.ms(bytes);
      ++next;
    }
  }
  return std::max(t, link_free);
}

}  // namespace dynacomm::plan
