#include "ps/agreement.h"

#include <cstdio>
#include <limits>

#include "base/error.h"

namespace dynacomm::ps {

PlanAgreement::PlanAgreement(int workers, std::function<void(const std::string&)> log)
    : workers_(workers), log_(std::move(log)) {
  if (!log_) log_ = [](const std::string&) {};
}

std::optional<net::AgreedPlans> PlanAgreement::offer(int rank, net::PlanOffer offer) {
  if (agreed_ || offers_.count(rank))
    throw InvalidInput("plans: rank " + std::to_string(rank) + " has already offered its plans");
  offers_[rank] = std::move(offer);
  if (static_cast<int>(offers_.size()) < workers_) return std::nullopt;
  std::map<int, std::pair<int, const net::PlanOffer::Entry*>> pick;  // index -> (rank, entry)
  for (const auto& [r, o] : offers_)  // in rank order: ties go to the lower rank
    for (const auto& e : o.plans) {
      auto it = pick.find(e.index);
      if (it == pick.end() || e.predicted_ms > it->second.second->predicted_ms)
        pick[e.index] = {r, &e};
    }
  net::AgreedPlans agreed;
  for (const auto& [index, chosen] : pick) {
    const auto& [r, e] = chosen;
    log_("plans: strategy " + std::to_string(index) + " runs rank " + std::to_string(r) +
         "'s plan (predicted " + std::to_string(e->predicted_ms) + " ms there)");
    agreed.plans.push_back({index, r, e->predicted_ms, e->plan});
  }
  agreed_ = true;
  offers_.clear();
  return agreed;
}

std::optional<net::JobPlanChange> PlanAgreement::report(int rank, std::int64_t iteration,
                                                        net::ReplanReport report,
                                                        std::int64_t newest) {
  if (!agreed_) throw InvalidInput("replan: the job's plans have not been agreed yet");
  if (iteration < plan_from_) return std::nullopt;  // about the plan before
  char line[160];
  std::snprintf(line, sizeof line, "replan: rank %d at iteration %lld: the plan in use %.1f ms",
                rank, static_cast<long long>(iteration), report.current_ms);
  std::string text = line;
  if (report.proposal) {
    std::snprintf(line, sizeof line, ", proposes one of %.1f ms", report.proposal->predicted_ms);
    text += line;
  } else {
    text += ", keeps it";
  }
  log_(text);
  reports_[rank] = std::move(report);
  if (static_cast<int>(reports_.size()) < workers_) return std::nullopt;
  auto slowest = reports_.begin();  // ties: the lower rank
  for (auto r = reports_.begin(); r != reports_.end(); ++r)
    if (r->second.current_ms > slowest->second.current_ms) slowest = r;
  if (!slowest->second.proposal)
    return std::nullopt;  // the slowest keeps the plan: so does the job
  const net::ReplanReport::Proposal& p = *slowest->second.proposal;
  // (A peer's iteration is any non-negative int64: no overflow past the largest.)
  newest = std::max<std::int64_t>(newest, 0);
  plan_from_ =
      newest + std::min<std::int64_t>(3, std::numeric_limits<std::int64_t>::max() - newest);
  net::JobPlanChange change{p.plan,         p.predicted_ms, slowest->second.current_ms,
                            slowest->first, plan_from_,     p.why};
  std::snprintf(line, sizeof line,
                "replan: the job runs rank %d's plan from iteration %lld (predicted %.1f -> %.1f "
                "ms there)",
                slowest->first, static_cast<long long>(plan_from_), slowest->second.current_ms,
                p.predicted_ms);
  log_(line);
  reports_.clear();
  return change;
}

}  // namespace dynacomm::ps
