// Chrome-trace (chrome://tracing, Perfetto) timelines.
//
// One process per device, one track ("thread") each for compute, downlink and uplink,
// complete events ("ph": "X") with microsecond timestamps.
//
//   ChromeTrace trace;
//   trace.add_timeline(timeline, "worker 0 (dynacomm, simulated)", 0);
//   trace.write("timeline.json");   // throws Error when the file cannot be written
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "plan/model/simulate.h"

namespace dynacomm::report {

class ChromeTrace {
 public:
  // Adds the events of a simulated iteration as process `pid`, shifted by offset_ms.
  void add_timeline(const plan::Timeline& timeline, const std::string& process_name, int pid,
                    double offset_ms = 0);
  // Adds one complete event on track `tid` of process `pid`.
  void add_event(int pid, int tid, const std::string& name, const std::string& category,
                 double start_ms, double end_ms, nlohmann::json args = nullptr);
  // Adds a moment (a plan change, say) on track `tid` of process `pid`, drawn across it.
  void add_instant(int pid, int tid, const std::string& name, const std::string& category,
                   double at_ms, nlohmann::json args = nullptr);
  void name_process(int pid, const std::string& name);
  void name_track(int pid, int tid, const std::string& name);
  // Whose clock the timestamps are on ("otherData" of the trace, report/trace_merge.h):
  // the PS's own, or a worker's with the PS's clock minus this one's in ms (measured at the
  // hello; absent when not measured).
  void set_ps_clock();
  void set_clock_offset(int rank, std::optional<double> ps_minus_this_ms);
  static constexpr const char* kClockOffsetKey = "ps_clock_offset_ms";

  const nlohmann::json& json() const { return trace_; }
  void write(const std::string& path) const;
  static void write_json(const std::string& path, const nlohmann::json& trace);

  // Track ids used by add_timeline.
  static constexpr int kCompute = 0, kDownlink = 1, kUplink = 2;

 private:
  nlohmann::json trace_ = {{"traceEvents", nlohmann::json::array()}, {"displayTimeUnit", "ms"}};
};

}  // namespace dynacomm::report
