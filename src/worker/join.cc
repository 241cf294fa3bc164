#include "worker/join.h"

#include <nlohmann/json.hpp>

#include "base/stats.h"
#include "worker/comm.h"

namespace dynacomm::worker {

Joined join_job(net::Transport& conn, const WorkerOptions& o, const JobShape& shape,
                const std::vector<float>& initial_params) {
  const std::string hello = nlohmann::json{
      {"model", o.model},
      {"workers", o.workers},
      {"unit_bytes", shape.atom_bytes},
      {"total_iterations", shape.total_iterations},
      {"trace_from", shape.trace_from},
      {"trace_count",
       shape.trace_count}}.dump();
  Joined j;
  std::vector<double> ping_ms;
  // The PS took the hello off its socket about half way (NTP's estimate; off by at most
  // half the trip).
  double offset_rtt_ms = 0;
  for (int i = 0; i < 5; ++i) {  // the real per-message cost of this transport, measured
    const auto t0 = Clock::now();
    conn.send(net::Header{net::MessageType::kHello, o.rank, 0, 0, 0}, hello.data(), hello.size());
    const net::Message welcome =
        conn.receive(o.timeout, "the PS's welcome (is `dynacomm ps` running at " + o.ps + "?)");
    const auto t1 = Clock::now();
    ping_ms.push_back(ms_between(t0, t1));
    const std::uint64_t at = welcome.header.arrived_us;
    if (at > 0 && (!j.ps_clock_offset_ms || ping_ms.back() < offset_rtt_ms)) {
      const double mid_ms =
          std::chrono::duration<double, std::milli>((t0 + (t1 - t0) / 2).time_since_epoch())
              .count();
      j.ps_clock_offset_ms = static_cast<double>(at) / 1000.0 - mid_ms;
      offset_rtt_ms = ping_ms.back();
    }
  }
  j.rtt_ms = median(ping_ms);
  if (o.rank == 0)
    conn.send(net::Header{net::MessageType::kInit, 0, 0, 0,
                          static_cast<std::uint32_t>(shape.atom_bytes.size() - 1)},
              initial_params.data(), initial_params.size() * sizeof(float));
  return j;
}

}  // namespace dynacomm::worker
