// How much slower a device computes while its links carry data, fitted from the runtime's
// own measurements (DESIGN.md, "Compute under a busy link").
//
// Moving bytes costs CPU: the kernel's network stack, the PS and the other workers when
// they share the device's cores (as in the emulated cluster on one machine), or just the
// device's own stack on a real edge device. That CPU is taken from the compute the
// transfers overlap, so a plan that overlaps well computes slower than the same units in
// a quiet iteration. For each unit the runtime knows its wall time, its training thread's
// CPU time (the work), and how long its own downlink and uplink were busy during it:
//
//     wall = cpu * (a * idle + a_down * busy_down + a_up * busy_up)     (fractions of wall)
//
// a: wall per CPU ms with both links idle (the machine's background share); a_down, a_up:
// with one link busy. The fit: a = sum(wall) / sum(cpu) over the spans with (almost) idle
// links; then a_down - a and a_up - a by least squares on what is left of each span's
// wall, wall - a * cpu. The stretches are a_down / a and a_up / a, clamped to [1, 10]; a
// direction with too little busy time to tell keeps 1.
//
//   std::vector<UnitSpan> spans = ...;               // the warm-up's units
//   ComputeStretch s = fit_compute_stretch(spans);
//   link.compute_stretch_down = s.down;  link.compute_stretch_up = s.up;
//   quiet_ms = s.idle_wall_per_cpu * cpu_ms;          // a unit at idle-link speed
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace dynacomm::plan {

struct UnitSpan {
  double wall_ms = 0;       // the unit's compute, start to end
  double cpu_ms = 0;        // the training thread's CPU time in it (its work)
  double busy_down_ms = 0;  // of wall_ms, how long the device's downlink carried its data
  double busy_up_ms = 0;    // ... its uplink
};

// A transfer as the link saw it: busy from start_ms to end_ms (any common time origin).
struct LinkBusy {
  double start_ms = 0, end_ms = 0;
  bool up = false;
};

// Adds to each span's busy_down_ms / busy_up_ms how long each transfer overlapped its
// window [from, to] (windows[k] is spans[k]'s, same origin as the transfers).
void add_busy_times(std::vector<UnitSpan>& spans,
                    const std::vector<std::pair<double, double>>& windows,
                    const std::vector<LinkBusy>& transfers);

struct ComputeStretch {
  double idle_wall_per_cpu = 1;  // a
  double down = 1, up = 1;       // a_down / a, a_up / a
  bool fitted_down = false, fitted_up = false;
  std::size_t spans = 0;  // used in the fit
};

// Spans whose CPU time is under 0.2 ms (clock resolution, hook overhead) or whose figures
// are not finite and positive are left out. With no idle span, a = 1. A positive
// `idle_wall_per_cpu` is taken as a instead of fitted (the refit while training runs keeps
// the warm-up's, which every unit time since was converted with; its plans overlap, so
// idle spans are few).
ComputeStretch fit_compute_stretch(const std::vector<UnitSpan>& spans,
                                   double idle_wall_per_cpu = 0);

}  // namespace dynacomm::plan
