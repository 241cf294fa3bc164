// The user-space emulation of the PS's cloud link (--ps-link under --net user): two token
// buckets (into the PS, out of it) that every worker process on this machine shares through
// one small file mapped into each, under a process-shared mutex. A worker's paced frame
// arrives when both its own edge link and the cloud link have carried it (they carry it at
// once, as switches in series pipeline a frame): max(edge, cloud) + latency.
//
//   auto cloud = SharedCloudLink::create(run_dir + "/cloud-link", 200e6, 200e6);  // launcher
//   auto mine = SharedCloudLink::open(run_dir + "/cloud-link");                 // a worker
//   auto t = mine->into_ps(now, 10'000'000);  // queued behind every worker's pushes
//
// The steady clock is the machine's (CLOCK_MONOTONIC), so the processes' times compare.
// A worker killed while it holds the mutex does not wedge the others (a robust mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace dynacomm::net {

class SharedCloudLink {
 public:
  using Clock = std::chrono::steady_clock;

  // Creates (or replaces) the file with idle links of these rates (> 0). Throws
  // InvalidInput for a bad rate, Error naming the path when it cannot be made.
  static std::unique_ptr<SharedCloudLink> create(const std::string& path, double in_bps,
                                                 double out_bps);
  // Maps an existing file; throws Error naming the path when it is missing or not one.
  static std::unique_ptr<SharedCloudLink> open(const std::string& path);
  ~SharedCloudLink();

  // When a frame of `bytes` handed over at `now` has crossed the link into (out of) the PS,
  // FIFO with every process's frames before it; no latency.
  Clock::time_point into_ps(Clock::time_point now, std::int64_t bytes);
  Clock::time_point out_of_ps(Clock::time_point now, std::int64_t bytes);
  double in_bps() const;
  double out_bps() const;

  struct Shared;

 private:
  SharedCloudLink(Shared* shared, std::string path);
  Clock::time_point deliver(bool in, Clock::time_point now, std::int64_t bytes);
  Shared* shared_;
  std::string path_;
};

}  // namespace dynacomm::net
