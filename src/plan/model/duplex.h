// The full-duplex, cross-iteration cost model: the BSP steady state when a worker's
// downlink fetches iteration t+1's parameters while its uplink still pushes iteration t's
// gradients (issue "full-duplex plans"; the phase-separated model is simulate.h).
//
// Per worker, workers alike (under BSP the slowest sets the pace; a homogeneous cluster is
// modelled). Resources: one FIFO downlink, one FIFO uplink, one compute stream. For
// iteration t:
//  - Pull requests for t go out when the backward pass of t-1 starts (at 0 for t = 0) and
//    reach the PS one latency later.
//  - A unit's parameters for t exist at the PS once its gradient for t-1 has arrived (the
//    push segment holding it, + latency) plus the PS's aggregation of that segment
//    (link.aggregation_of its bytes; from 0 for t = 0).
//  - The downlink serves the pull segments in the plan's pull order; a segment starts
//    once its request has arrived, all its units exist and the link is free, and takes
//    overhead_down + bytes/Bd; it arrives one latency later.
//  - Forward of unit u starts at max(end of forward u-1, arrival of u's segment); unit 0
//    also waits for the end of backward t-1 (one compute stream). Backward runs L-1..0
//    straight after the forward pass.
//  - Push segments go in send order: one whose lowest unit is a starts at max(end of
//    backward of a, end of the previous push) and takes overhead_up + bytes/Bu.
//  - A plan scheduled by priority (credit_bytes > 0) instead hands the uplink, a FIFO (the
//    kernel's queue), the ready segment lowest in the model whenever the bytes handed over
//    and unacknowledged stay within credit_bytes with it (or none are); the PS hands each
//    pull reply over as soon as it is ready,
//    the lower first among those ready together. A push's ack leaves the PS when the push
//    arrives and shares the downlink with the pull replies, first come first served (one
//    stream each way, as on the wire): it reaches the worker one latency after the
//    replies handed over before it have gone, so a downlink busy with t+1's parameters
//    holds back t's credit. The ack takes no link time itself.
// The figure of merit is the steady-state period: the time between successive starts of
// forward. It is not assumed: the simulator runs iterations until the schedule repeats
// (every `cycle` iterations, the state advancing by cycle x period), which a max-plus
// system like this one reaches after a finite transient.
//
//   Plan p = make_plan("layerwise", profile, link, {});   // pull ascending
//   DuplexResult r = simulate_duplex(profile, link, p);   // r.period_ms
//   Plan fd = plan_duplex(profile, link);                 // fd.full_duplex, fd.pull_order
#pragma once

#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"

namespace dynacomm::plan {

struct DuplexOptions {
  int max_iterations = 512;  // simulated at most, looking for the steady state
  int max_cycle = 8;         // longest repeat looked for
  // The PS answers this worker's pulls at once, with the newest version it has (--sync
  // asp): simulated by simulate_at_once (below) instead of the rules above.
  bool pulls_answered_at_once = false;
};

struct DuplexResult {
  double period_ms = 0;    // steady-state iteration period
  int cycle = 0;           // the schedule repeats every `cycle` iterations
  int transient = 0;       // iterations simulated before the repeat began
  bool converged = false;  // false: no repeat within max_iterations; period_ms is then the
                           // mean of the last half of the simulated iterations
  std::vector<double> forward_start_ms;  // of every simulated iteration
};

// Any plan: a phase-separated one is simulated as if it were run full duplex (its pull
// order ascending), which is what the search starts from.
DuplexResult simulate_duplex(const ModelProfile& profile, const LinkProfile& link, const Plan& plan,
                             const DuplexOptions& options = {});

// Several workers whose compute differs (the one-worker model above has them alike): the
// same rules for each of `workers` workers, each with its own links, but a unit's
// parameters for t+1 exist at the PS only once *every* worker's gradient of it has
// arrived (plus its aggregation), so the releases follow whichever worker is last for each
// unit. In iteration k worker w computes with samples[(k + w) % samples.size()] (unit
// times measured in different iterations: the other workers taken to be like this one in
// distribution); the compute stretch is not charged (measured times carry it). Runs 16
// iterations, then 24 x samples.size() more, whose mean period of worker 0 it returns
// (a whole number of the samples' cycles). For any plan the one-worker model takes,
// full duplex or not, in pull order or by priority; with one sample its period is
// simulate_duplex's (tested). Sliced plans: pass atom profiles (Slicing::atom_profile).
double simulate_duplex_workers_ms(const std::vector<ModelProfile>& samples, int workers,
                                  const LinkProfile& link, const Plan& plan);
// The same with unit profiles and any plan (sliced plans are run over each sample's atom
// profile, as predict_ms does), and the link's compute stretch charged in the mean as
// predict_duplex_ms charges it: pass unit times at idle-link speed, or a link without a
// stretch for times measured under load.
double predict_duplex_workers_ms(const std::vector<ModelProfile>& samples, int workers,
                                 const LinkProfile& link, const Plan& plan);

// The same model where the PS answers pulls at once (--sync asp; ps/sync_policy.h): a
// unit's parameters never wait for a push, and what paces the worker instead is its own
// rule (worker/worker.cc) that iteration t begins only once the PS has acknowledged every
// push of t-2 (at most one iteration's pushes on their way while it computes). The
// requests for t+1 still leave as t's backward pass starts; the PS hands their replies to
// the downlink at once, in pull order, and each push's ack as the push arrives, behind the
// replies handed over before it (one stream each way; the ack takes no link time). So
// under a push credit (a priority plan) the credit comes back only after the next
// iteration's replies: on a slow symmetric link the uplink stands idle behind them. The
// uplink serves the rounds in order (worker/push_queue.h: the oldest iteration first).
// In iteration t the worker computes with samples[t % samples.size()]; the period is found
// as simulate_duplex finds it, from the repeat, over whole cycles of the samples (or the
// mean over whole cycles of the last half, without one). Sliced plans: pass atom profiles.
DuplexResult simulate_at_once(const std::vector<ModelProfile>& samples, const LinkProfile& link,
                              const Plan& plan, const DuplexOptions& options = {});
// simulate_at_once with unit profiles and any plan (sliced plans over each sample's atom
// profile), the link's compute stretch charged as predict_duplex_ms charges it.
double predict_at_once_ms(const std::vector<ModelProfile>& samples, const LinkProfile& link,
                          const Plan& plan);

// The period with compute under a busy link charged (link.compute_stretch_down/up; the
// same as simulate_duplex's when both are 1). Mean field, not exact: in the steady state
// every unit's compute is stretched by 1 + (s_down - 1) f_down + (s_up - 1) f_up, where f is
// the share of the period that link is busy (its bytes and per-transmission costs over
// the period), iterated to a fixed point (the period grows with the stretch, the shares
// shrink with the period). Both links carry data through most of a full-duplex period,
// so each unit's own overlap is close to the shares; the optimisers plan without it.
double predict_duplex_ms(const ModelProfile& profile, const LinkProfile& link, const Plan& plan,
                         const DuplexOptions& options = {});

// The resource bound of this model (zero per-message cost): no full-duplex plan's period is
// below the compute time, nor below the model's bytes on either link. With a compute
// stretch, the compute as predict_duplex_ms charges it at that period (a fixed point).
double ideal_duplex_ms(const ModelProfile& profile, const LinkProfile& link);

// The plan with the shortest steady-state period (strategy `dynacomm-fd`; full_duplex set,
// pull_order filled), over:
// contiguous pull and push segmentations, pushes in backward order, and pull orders of the
// form "a chosen subset of the segments, top first, then the others bottom-up" (prefetch
// what becomes available early and is needed late; then fetch in the order forward needs
// it). Brute force over every pull order agreed with this family on every random case
// tried (L <= 6, tests). Up to `exact_up_to` units it searches the family exhaustively,
// pruned by resource bounds (a period is never below the compute time, nor below either
// link's busy time); above, it runs a local search (toggle a cut, a prefetch, or a cut
// and its neighbour) from several starts, then from `perturbations` random kicks of the
// best (iterated local search, fixed seed), at most `max_evaluations` simulations.
struct DuplexPlannerOptions {
  DuplexOptions simulation;
  int exact_up_to = 8;
  long max_evaluations = 200000;
  int perturbations = 30;
};
Plan plan_duplex(const ModelProfile& profile, const LinkProfile& link,
                 const DuplexPlannerOptions& options = {});
// The family searched exhaustively at any size, and every pull order (not just the
// family's) for every segmentation: for tests, small L only (throws above 7 units).
Plan plan_duplex_exhaustive(const ModelProfile& profile, const LinkProfile& link,
                            const DuplexPlannerOptions& options = {});
Plan brute_force_duplex(const ModelProfile& profile, const LinkProfile& link,
                        const DuplexOptions& options = {});
// Every point of the family above simulated, no bounds, no pruning (for tests; at most 10
// units: 2^(L-1) push x 2 * 3^(L-1) pull configurations).
Plan brute_force_duplex_family(const ModelProfile& profile, const LinkProfile& link,
                               const DuplexOptions& options = {});

}  // namespace dynacomm::plan
