// Traces of a changing link or device, replayed while training runs (--link-trace,
// --device-slowdown-trace). CSV with a header; `#` starts a comment line; times are
// seconds from the job's start and must not decrease; `worker` is optional (a rank, or
// empty / "all" for every worker); each row holds until the next row for that worker, and
// before the first one the job's own --down/--up/--latency (or --device-slowdown) hold.
// A link trace may be keyed by iteration instead (first column `iteration`): each worker
// changes its emulated link as that iteration starts, the same on a fast or a busy machine.
//
//   time_s,down,up,latency            time_s,factor,worker       iteration,down,up,latency
//   0,100mbit,100mbit,10ms            0,1,all                    0,2mbit,2mbit,1ms
//   30,10mbit,10mbit,10ms             20,3,1                     8,100mbit,100mbit,1ms
//
//   LinkTrace t = load_link_trace("traces/step-down.csv");   // InvalidInput: file:line: why
//   for (const LinkTracePoint& p : t.for_worker(0)) ...
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace dynacomm::plan {

struct LinkTracePoint {
  double time_s = 0;           // a trace in seconds
  std::int64_t iteration = 0;  // a trace by iteration
  double down_bps = 0, up_bps = 0;
  double latency_ms = 0;
  int worker = -1;  // -1: every worker
};

struct LinkTrace {
  std::string source;
  bool by_iteration = false;           // keyed by iteration (time_s unused), else by time
  std::vector<LinkTracePoint> points;  // file order
  // The rows that apply to `rank` (its own and those for every worker), in time order.
  std::vector<LinkTracePoint> for_worker(int rank) const;
  // Throws InvalidInput when a row names a rank outside 0..workers-1.
  void check_workers(int workers) const;
};

struct SlowdownTracePoint {
  double time_s = 0;
  double factor = 1;  // >= 1: compute stretched by this factor
  int worker = -1;
};

struct SlowdownTrace {
  std::string source;
  std::vector<SlowdownTracePoint> points;
  std::vector<SlowdownTracePoint> for_worker(int rank) const;
  void check_workers(int workers) const;
};

// Parse a trace; InvalidInput naming "source:line" and what is wrong with it.
LinkTrace parse_link_trace(std::istream& in, const std::string& source);
LinkTrace load_link_trace(const std::string& path);
SlowdownTrace parse_slowdown_trace(std::istream& in, const std::string& source);
SlowdownTrace load_slowdown_trace(const std::string& path);

}  // namespace dynacomm::plan
