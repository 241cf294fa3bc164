// What the PS decides about a job's full-duplex plans, as a pure state machine: no
// sockets, no clock; the server feeds it the decoded messages (net/job_protocol.h) and
// sends what it returns to every worker.
//
//   PlanAgreement a(/*workers=*/2, log);
//   a.offer(0, offer0);                       // nullopt: waiting for rank 1's
//   std::optional<AgreedPlans> p = a.offer(1, offer1);   // everyone's: the job's plans
//   a.report(0, /*iteration=*/40, report0, /*newest=*/41);
//   std::optional<JobPlanChange> c = a.report(1, 40, report1, 41);
//
// Agreeing: a full-duplex plan's releases wait for every worker's gradients, so workers
// pushing in different orders stall each other. Once every worker has offered its plans,
// the job runs for each strategy (index) the plan of the worker that predicted itself
// slowest with it (ties: the lower rank): the one that sets the pace.
//
// Re-planning together: once every worker has reported on the plan in use (its
// prediction of it, and a plan it proposes when its re-planning would change), the
// slowest of them by that prediction decides: its proposal, if it made one, becomes every
// worker's plan from three iterations past the newest the PS has seen (by then each worker
// has the answer: it arrives before the parameters of the iteration before that, which
// need gradients not yet pushed). A report made before the plan in use began is about the
// one before, and ignored.
//
// Membership: "every worker" is every rank in the job now. A rank that leaves no longer
// holds up an agreement or a re-planning (leave may complete either); one that joins again
// offers and reports afresh, and a rank that offers after the agreement (a worker that
// rejoined) is answered with the agreed plans and the job's latest change of plan.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "net/job_protocol.h"

namespace dynacomm::ps {

class PlanAgreement {
 public:
  // log: one line per decision (which rank's plan each strategy runs, each report).
  PlanAgreement(int workers, std::function<void(const std::string&)> log);

  // Rank `rank`'s offer; the job's plans once it completes everyone's (once per job).
  // InvalidInput: a second offer from the rank before the agreement. After it: the
  // agreed plans again (for a worker that rejoined).
  std::optional<net::AgreedPlans> offer(int rank, net::PlanOffer offer);
  // Rank `rank`'s report made at `iteration`; newest: the highest iteration any pull or
  // push named so far. The job's change of plan once the reports call for one.
  // InvalidInput: before the plans were agreed.
  std::optional<net::JobPlanChange> report(int rank, std::int64_t iteration,
                                           net::ReplanReport report, std::int64_t newest);

  // What a leaving rank completes: the agreement, or a re-planning.
  struct Completed {
    std::optional<net::AgreedPlans> plans;
    std::optional<net::JobPlanChange> change;
  };
  Completed leave(int rank, std::int64_t newest);
  void join(int rank);  // back in the job: its earlier offer and report are forgotten

  bool agreed() const { return agreed_; }
  const net::AgreedPlans& plans() const { return plans_; }  // once agreed
  // The job's latest change of plan (nullopt: none yet).
  const std::optional<net::JobPlanChange>& last_change() const { return last_change_; }
  std::int64_t plan_from() const { return plan_from_; }  // the plan in use runs from here

 private:
  template <typename T>
  bool everyone_in(const std::map<int, T>& from) const;
  net::AgreedPlans agree();
  std::optional<net::JobPlanChange> decide(std::int64_t newest);

  std::set<int> present_;  // the ranks in the job
  std::function<void(const std::string&)> log_;
  std::map<int, net::PlanOffer> offers_;  // until everyone's is in
  bool agreed_ = false;
  net::AgreedPlans plans_;
  std::optional<net::JobPlanChange> last_change_;
  std::map<int, net::ReplanReport> reports_;  // on the plan in use
  std::int64_t plan_from_ = 0;
};

}  // namespace dynacomm::ps
