// PyTorch DDP-style fixed-size buckets.
//
// DDP (torch/csrc/distributed/c10d/reducer.cpp, compute_bucket_assignment_by_size) walks
// the parameters in reverse order, the order backward produces gradients, and closes a
// bucket as soon as its size reaches the cap; the first bucket has a small cap (1 MB) so
// communication starts early. We do exactly that for the push. DDP has no per-iteration
// pull; the mirror for ours walks the units in forward order with the same caps, so the
// first bucket (small) arrives early and the first forward can start soon.
#include <cstdint>

#include "plan/planners/planner.h"

namespace dynacomm::plan {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}

Plan plan_bucket(const ModelProfile& profile, const LinkProfile&, const PlannerOptions& options) {
  const int n = profile.num_units();
  const double first_cap = options.first_bucket_mb * kMiB;
  const double cap = options.bucket_mb * kMiB;
  Plan p{"bucket", {}, {}};

  // Pull: ascending units.
  double filled = 0;
  bool first = true;
  int start = 0;
  for (int u = 0; u < n; ++u) {
    filled += static_cast<double>(profile.units[u].bytes);
    if (filled >= (first ? first_cap : cap) || u == n - 1) {
      p.pull.push_back({start, u});
      start = u + 1;
      filled = 0;
      first = false;
    }
  }
  // Push: descending units (send order).
  filled = 0;
  first = true;
  int top = n - 1;
  for (int u = n - 1; u >= 0; --u) {
    filled += static_cast<double>(profile.units[u].bytes);
    if (filled >= (first ? first_cap : cap) || u == 0) {
      p.push.push_back({u, top});
      top = u - 1;
      filled = 0;
      first = false;
    }
  }
  return p;
}

}  // namespace dynacomm::plan
