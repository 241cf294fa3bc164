#include "worker/join.h"

#include "base/error.h"
#include "base/stats.h"
#include "net/connection.h"
#include "net/job_protocol.h"
#include "worker/comm.h"

namespace dynacomm::worker {

net::JobConfig ask_job_config(const std::string& ps, int rank, std::chrono::milliseconds timeout,
                              const net::CurveClient* curve) {
  net::Connection c(ps, net::WireLimits{{}, -1, 64 * 1024}, curve);
  c.set_linger(std::chrono::milliseconds(0));
  c.send(net::Header{net::MessageType::kJobConfig, rank, 0, 0, 0}, nullptr, 0);
  const net::Message m = c.receive(
      timeout, "the job's configuration (is `dynacomm ps` of this version running at " + ps +
                   (curve ? "? with CURVE: is --ps-key its public key, and this worker's key on "
                            "its allow-list for rank " +
                                std::to_string(rank) + "?)"
                          : "? does it require CURVE keys?)"));
  if (m.header.type != net::MessageType::kJobConfig)
    throw Error("the PS at " + ps + " answered a " + net::to_string(m.header.type) +
                " to the request for the job's configuration");
  try {
    return net::decode_job_config(m.payload(), m.header.payload_bytes);
  } catch (const InvalidInput& e) {
    throw InvalidInput("the PS at " + ps + ": " + e.what());
  }
}

void tell_ps_failed(const std::string& ps, int rank, const std::string& why,
                    const net::CurveClient* curve) {
  try {
    net::Connection c(ps, net::WireLimits{{}, -1, 64 * 1024}, curve);
    c.set_linger(std::chrono::seconds(1));
    const std::string text = why.substr(0, 2000);
    c.send(net::Header{net::MessageType::kError, rank, 0, 0, 0}, text.data(), text.size());
  } catch (const std::exception&) {  // the PS is gone or unreachable: nobody to tell
  }
}

Joined join_job(net::Transport& conn, const WorkerOptions& o, const JobShape& shape,
                const std::vector<float>& initial_params) {
  // Its job settings go along for the PS to check against the job's.
  const net::Hello h{o.model,          o.workers,         shape.atom_bytes, shape.total_iterations,
                     shape.trace_from, shape.trace_count, o.job_settings};
  const std::string hello = net::encode(h);
  Joined j;
  std::vector<double> ping_ms;
  // The PS took the hello off its socket about half way (NTP's estimate; off by at most
  // half the trip).
  double offset_rtt_ms = 0;
  for (int i = 0; i < 5; ++i) {  // the real per-message cost of this transport, measured
    const auto t0 = Clock::now();
    conn.send(net::Header{net::MessageType::kHello, o.rank, 0, 0, 0}, hello.data(), hello.size());
    net::Message welcome;
    do  // a running job's news of a checkpoint may come before the welcome: not for a joiner
      welcome =
          conn.receive(o.timeout, "the PS's welcome (is `dynacomm ps` running at " + o.ps + "?)");
    while (welcome.header.type == net::MessageType::kCheckpoint);
    const auto t1 = Clock::now();
    ping_ms.push_back(ms_between(t0, t1));
    if (welcome.header.type != net::MessageType::kHello)
      throw Error("worker " + std::to_string(o.rank) + ": the PS at " + o.ps + " answered a " +
                  net::to_string(welcome.header.type) + " to the hello");
    j.job_running = (welcome.header.flags & net::kFlagJobRunning) != 0;
    j.start_iteration = j.job_running ? welcome.header.iteration : 0;
    // A job at its end (the others finished while this worker started again): it trains
    // nothing, and rank 0 fetches the final weights and evaluates them.
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
  if (o.rank == 0 && !j.job_running)
    conn.send(net::Header{net::MessageType::kInit, 0, 0, 0,
                          static_cast<std::uint32_t>(shape.atom_bytes.size() - 1)},
              initial_params.data(), initial_params.size() * sizeof(float));
  return j;
}

}  // namespace dynacomm::worker
