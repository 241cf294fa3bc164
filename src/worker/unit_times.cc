#include "worker/unit_times.h"

namespace dynacomm::worker {

namespace {
double ms_of(GateMarks::Time a, GateMarks::Time b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

UnitTimes unit_times(const GateMarks& m) {
  const std::size_t n = m.called.size();
  std::vector<GateMarks::Time> all_ready(n + 1);
  std::vector<double> cpu_all_ready(n + 1);
  all_ready[n] = m.forward_end;
  cpu_all_ready[n] = m.cpu_forward_end;
  for (std::size_t u = n; u-- > 0;) {
    const bool later = m.ready[u] > all_ready[u + 1];
    all_ready[u] = later ? m.ready[u] : all_ready[u + 1];
    cpu_all_ready[u] = later ? m.cpu_ready[u] : cpu_all_ready[u + 1];
  }
  UnitTimes t;
  t.forward_ms.resize(n);
  t.backward_ms.resize(n);
  t.forward_cpu.resize(n);
  t.backward_cpu.resize(n);
  for (std::size_t u = 0; u < n; ++u) {
    const auto next = u + 1 < n ? m.called[u + 1] : m.forward_end;
    t.forward_span.emplace_back(m.passed[u], next);
    t.backward_span.emplace_back(all_ready[u + 1], all_ready[u]);
    t.forward_ms[u] = ms_of(m.passed[u], next);
    t.backward_ms[u] = ms_of(all_ready[u + 1], all_ready[u]);
    t.forward_cpu[u] = (u + 1 < n ? m.cpu_called[u + 1] : m.cpu_forward_end) - m.cpu_passed[u];
    t.backward_cpu[u] = cpu_all_ready[u] - cpu_all_ready[u + 1];
    t.compute_ms += t.forward_ms[u] + t.backward_ms[u];
    t.compute_cpu_ms += t.forward_cpu[u] + t.backward_cpu[u];
  }
  return t;
}

}  // namespace dynacomm::worker
