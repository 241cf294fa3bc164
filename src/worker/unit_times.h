// Each unit's compute time, rebuilt from the marks the gates took during one iteration.
// Pure: no torch, no sockets (unit_times_test.cc).
//
// Forward of unit u runs from its gate opening (passed[u]) to the next unit's gate being
// reached (called[u + 1], or the forward pass's end for the last), so waits at the gates
// are left out. Backward runs from the top down: unit u's backward ends when its gradients
// and all those above it are ready (all_ready[u], the latest of ready[u..L-1]), and begins
// at all_ready[u + 1] (the forward pass's end for the top unit). The CPU times follow the
// same marks on the training thread's CPU clock.
#pragma once

#include <chrono>
#include <utility>
#include <vector>

namespace dynacomm::worker {

struct GateMarks {
  using Time = std::chrono::steady_clock::time_point;
  std::vector<Time> called, passed, ready;  // per unit: gate reached, opened, gradients ready
  Time forward_end{};
  std::vector<double> cpu_called, cpu_passed, cpu_ready;  // ms on the CPU clock, likewise
  double cpu_forward_end = 0;
};

struct UnitTimes {
  std::vector<double> forward_ms, backward_ms;    // wall
  std::vector<double> forward_cpu, backward_cpu;  // CPU
  double compute_ms = 0, compute_cpu_ms = 0;      // their sums
  // Per unit, forward then backward: when each ran (the marks above).
  std::vector<std::pair<GateMarks::Time, GateMarks::Time>> forward_span, backward_span;
};

UnitTimes unit_times(const GateMarks& marks);

}  // namespace dynacomm::worker
