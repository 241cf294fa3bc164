#include "ps/agreement.h"

#include <cstdio>
#include <limits>

#include "base/error.h"

namespace dynacomm::ps {

PlanAgreement::PlanAgreement(int workers, std::function<void(const std::string&)> log)
    : log_(std::move(log)) {
  if (!log_) log_ = [](const std::string&) {};
  for (int r = 0; r < workers; ++r) present_.insert(r);
}

template <typename T>
bool PlanAgreement::everyone_in(const std::map<int, T>& from) const {
  if (present_.empty()) return false;
  for (int r : present_)
    if (!from.count(r)) return false;
  return true;
}

std::optional<net::AgreedPlans> PlanAgreement::offer(int rank, net::PlanOffer offer) {
  if (agreed_) {
    log_("plans: rank " + std::to_string(rank) + " offered after the agreement; it gets the job's");
    return plans_;
  }
  if (offers_.count(rank))
    throw InvalidInput("plans: rank " + std::to_string(rank) + " has already offered its plans");
  offers_[rank] = std::move(offer);
  if (!everyone_in(offers_)) return std::nullopt;
  return agree();
}

PlanAgreement::Completed PlanAgreement::leave(int rank, std::int64_t newest) {
  present_.erase(rank);
  offers_.erase(rank);
  reports_.erase(rank);
  Completed c;
  if (!agreed_ && !offers_.empty() && everyone_in(offers_)) c.plans = agree();
  if (agreed_ && !reports_.empty() && everyone_in(reports_)) c.change = decide(newest);
  return c;
}

void PlanAgreement::join(int rank) {
  present_.insert(rank);
  offers_.erase(rank);
  reports_.erase(rank);
}

net::AgreedPlans PlanAgreement::agree() {
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
  plans_ = agreed;
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
  if (!everyone_in(reports_)) return std::nullopt;
  return decide(newest);
}

std::optional<net::JobPlanChange> PlanAgreement::decide(std::int64_t newest) {
  char line[160];
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
  last_change_ = change;
  return change;
}

}  // namespace dynacomm::ps
