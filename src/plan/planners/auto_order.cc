// --scheduler auto's order of the strategies (planner.h).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "base/error.h"
#include "plan/planners/planner.h"

namespace dynacomm::plan {
namespace {

// The exact optimisers first on a tie: re-planning refines their plans.
int tie_rank(const std::string& scheduler) {
  if (scheduler == "dynacomm-fd") return 0;
  if (scheduler == "dynacomm") return 1;
  return 2;
}

}  // namespace

std::vector<std::size_t> auto_order(const std::vector<std::string>& schedulers,
                                    const std::vector<double>& predicted_ms) {
  if (schedulers.size() != predicted_ms.size())
    throw InvalidInput("auto_order: " + std::to_string(schedulers.size()) + " strategies but " +
                       std::to_string(predicted_ms.size()) + " predictions");
  std::vector<std::size_t> order(schedulers.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return predicted_ms[a] < predicted_ms[b]; });
  if (order.empty()) return order;
  // Those tied with the fastest: the exact optimisers first among them.
  const double fastest = predicted_ms[order.front()];
  const auto tied_end = std::find_if(order.begin(), order.end(), [&](std::size_t k) {
    return !(predicted_ms[k] <= fastest + 1e-6 * std::abs(fastest));
  });
  std::stable_sort(order.begin(), tied_end, [&](std::size_t a, std::size_t b) {
    return tie_rank(schedulers[a]) < tie_rank(schedulers[b]);
  });
  return order;
}

}  // namespace dynacomm::plan
