// Joining the job: the hello round trips that measure the transport and the PS's clock,
// and rank 0's initial parameters.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "net/curve.h"
#include "net/job_protocol.h"
#include "net/transport.h"
#include "worker/worker.h"

namespace dynacomm::worker {

struct Joined {
  double rtt_ms = 0;  // the transport's own round trip (median of the hellos)
  // The PS's clock minus this one's, from the welcome with the shortest round trip
  // (nullopt: the PS stamps nothing).
  std::optional<double> ps_clock_offset_ms;
  // The job was already running (this worker started again, or late): it starts at this
  // iteration, the PS's newest version, and sent no initial parameters.
  bool job_running = false;
  std::int64_t start_iteration = 0;
};

struct JobShape {
  std::vector<std::int64_t> atom_bytes;  // the job's atoms, in order
  std::int64_t total_iterations = 0;
  std::int64_t trace_from = 0, trace_count = 0;  // the iterations every process traces
};

// Before joining: the job's settings from the PS at `ps` (Timeout naming it).
net::JobConfig ask_job_config(const std::string& ps, int rank, std::chrono::milliseconds timeout,
                              const net::CurveClient* curve = nullptr);
// This worker cannot go on (it failed, or refused the job's settings): the PS at `ps` hears
// why and tells the others. Best effort: it waits at most a second for the message to leave.
void tell_ps_failed(const std::string& ps, int rank, const std::string& why,
                    const net::CurveClient* curve = nullptr);

// Sends the hello five times (each waits for the welcome, Timeout naming the PS), then,
// on rank 0 of a job not yet running, the initial parameters.
Joined join_job(net::Transport& conn, const WorkerOptions& o, const JobShape& shape,
                const std::vector<float>& initial_params);

}  // namespace dynacomm::worker
