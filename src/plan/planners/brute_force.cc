#include "plan/planners/brute_force.h"

#include <limits>
#include <string>

#include "base/error.h"
#include "plan/model/simulate.h"

namespace dynacomm::plan {

std::vector<Segment> segments_from_cuts(int num_units, std::uint32_t cuts) {
  std::vector<Segment> out;
  int first = 0;
  for (int u = 0; u < num_units; ++u) {
    if (u == num_units - 1 || (cuts >> u) & 1u) {
      out.push_back({first, u});
      first = u + 1;
    }
  }
  return out;
}

namespace {

void check_size(const ModelProfile& profile, int max_units, const char* what) {
  profile.validate();
  if (profile.num_units() > max_units)
    throw InvalidInput(std::string(what) + ": " + std::to_string(profile.num_units()) +
                       " units is too many for brute force (at most " + std::to_string(max_units) +
                       ")");
}

// Calls fn(plan) for each of the 2^(L-1) partitions of the direction `dir` points to.
template <typename Fn>
void for_each_partition(int n, std::vector<Segment>* dir, bool send_order, Plan& plan, Fn fn) {
  const std::uint32_t count = n > 1 ? (1u << (n - 1)) : 1u;
  for (std::uint32_t cuts = 0; cuts < count; ++cuts) {
    *dir = segments_from_cuts(n, cuts);
    if (send_order) *dir = reverse_to_send_order(std::move(*dir));
    fn(plan);
  }
}

}  // namespace

BruteForceResult brute_force_joint(const ModelProfile& profile, const LinkProfile& link) {
  check_size(profile, 10, "brute_force_joint");
  link.validate();
  const int n = profile.num_units();
  BruteForceResult best{{}, std::numeric_limits<double>::infinity()};
  Plan plan{"brute-force", {}, {}};
  for_each_partition(n, &plan.pull, false, plan, [&](Plan& p) {
    for_each_partition(n, &p.push, true, p, [&](Plan& q) {
      double t = simulate_unchecked(profile, link, q);
      if (t < best.iteration_ms) best = {q, t};
    });
  });
  return best;
}

namespace {

// Every partition of one direction, the other fixed: `vary` points into `plan`.
BruteForceResult brute_force_direction(const ModelProfile& profile, const LinkProfile& link,
                                       Plan plan, bool push, const char* what) {
  check_size(profile, 20, what);
  link.validate();
  std::vector<Segment>* vary = push ? &plan.push : &plan.pull;
  *vary = {{0, profile.num_units() - 1}};
  plan.validate(profile.num_units());  // the fixed direction; enumeration yields valid ones
  BruteForceResult best{{}, std::numeric_limits<double>::infinity()};
  for_each_partition(profile.num_units(), vary, push, plan, [&](Plan& p) {
    double t = simulate_unchecked(profile, link, p);
    if (t < best.iteration_ms) best = {p, t};
  });
  return best;
}

}  // namespace

BruteForceResult brute_force_pull(const ModelProfile& profile, const LinkProfile& link,
                                  const std::vector<Segment>& push) {
  return brute_force_direction(profile, link, Plan{"brute-force", {}, push}, false,
                               "brute_force_pull");
}

BruteForceResult brute_force_push(const ModelProfile& profile, const LinkProfile& link,
                                  const std::vector<Segment>& pull) {
  return brute_force_direction(profile, link, Plan{"brute-force", pull, {}}, true,
                               "brute_force_push");
}

}  // namespace dynacomm::plan
