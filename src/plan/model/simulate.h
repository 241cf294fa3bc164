// The exact event simulator of one training iteration on one device (DESIGN.md §2).
//
// Resources: one FIFO downlink, one FIFO uplink, one compute stream. Times in ms from the
// moment the device sends its pull requests.
//  - Pull requests are pipelined: all go out at t = 0, the PS answers them in order, and
//    segment j has fully arrived at A_j = 2*latency + sum_{k<=j} (overhead_down + bytes_k/Bd).
//  - Forward of unit u starts at max(end of forward u-1, A_{segment of u}).
//  - Backward runs L-1..0 straight after the forward pass; E_u = end of backward of u.
//  - Push segments go in send order; one whose lowest unit is a starts at
//    max(E_a, end of the previous push) and takes overhead_up + bytes/Bu.
//  - The iteration ends when the last push has arrived at the PS (+ latency).
//  - Compute under a busy link: a unit's forward runs link.compute_stretch_down times
//    slower while the downlink is carrying pulls, a backward compute_stretch_up times
//    slower while the uplink is carrying pushes (both 1 by default: no effect). Pulls do
//    not depend on compute, and the uplink is busy from where backward stands to the end
//    of the last push queued, so each unit's end is exact piecewise (compute_end).
// Server-side aggregation (link.aggregation_*) is left out: here it delays only the next
// iteration's pulls, after the last push, by about a constant; the full-duplex model, where
// it gates each unit's next pull while the rest still overlaps, charges it (duplex.h).
//
//   Timeline t;
//   double ms = simulate(profile, link, plan, &t);   // t.events: pull/forward/backward/push
#pragma once

#include <string>
#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"

namespace dynacomm::plan {

enum class EventKind { kPull, kForward, kBackward, kPush };
const char* to_string(EventKind k);

struct Event {
  EventKind kind;
  int index;  // segment index for pull/push (plan order), unit index for forward/backward
  double start_ms;
  double end_ms;
};

struct Timeline {
  std::vector<Event> events;  // pulls, forwards, backwards, pushes, each in time order
  double forward_end_ms = 0;
  double backward_end_ms = 0;
  double iteration_ms = 0;
};

// Validates the plan against the profile (throws InvalidInput) and simulates it. Returns
// the iteration time in ms; fills *timeline when given.
double simulate(const ModelProfile& profile, const LinkProfile& link, const Plan& plan,
                Timeline* timeline = nullptr);

// When `work_ms` of compute (at idle-link speed) that starts at `start` ends, if it runs
// `stretch` times slower until `busy_until` (a link carrying this device's data) and at
// full speed after.
double compute_end(double start, double work_ms, double busy_until, double stretch);

// The same without validation, for inner loops (brute force) over plans known valid.
double simulate_unchecked(const ModelProfile& profile, const LinkProfile& link, const Plan& plan,
                          Timeline* timeline = nullptr);

// The figure of merit of any plan: the iteration time of a phase-separated plan
// (simulate), the steady-state period of a full-duplex one (plan/model/duplex.h).
double predict_ms(const ModelProfile& profile, const LinkProfile& link, const Plan& plan);

// The lower bound for a setting: every unit its own transmission, both ways, on the same
// link with zero per-transmission cost. No plan on the real link can be faster.
double ideal_ms(const ModelProfile& profile, const LinkProfile& link);

// The lower bound of the model `plan` runs under: ideal_ms above for a phase-separated
// plan, ideal_duplex_ms (plan/model/duplex.h) for a full-duplex one.
double ideal_ms(const ModelProfile& profile, const LinkProfile& link, const Plan& plan);

}  // namespace dynacomm::plan
