#include "report/trace_merge.h"

#include <fstream>

#include "base/error.h"
#include "report/chrome_trace.h"

namespace dynacomm::report {

namespace {

nlohmann::json read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput(path + ": cannot open the trace file");
  nlohmann::json t = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (t.is_discarded()) throw InvalidInput(path + ": not JSON (a Chrome trace was expected)");
  if (!t.is_object() || !t.contains("traceEvents") || !t["traceEvents"].is_array())
    throw InvalidInput(path + ": not a Chrome trace (no traceEvents array)");
  for (const auto& e : t["traceEvents"])
    if (!e.is_object() || (e.contains("ts") && !e["ts"].is_number()))
      throw InvalidInput(path + ": a trace event is not an object with a numeric ts");
  return t;
}

// How many ms to add to this trace's timestamps to put them on the PS's clock.
double shift_to_ps_ms(const nlohmann::json& trace, const std::string& path) {
  const nlohmann::json& clock = trace.value("otherData", nlohmann::json::object());
  if (clock.value("process", "") == "ps") return 0;
  const auto offset = clock.find(ChromeTrace::kClockOffsetKey);
  if (offset == clock.end() || !offset->is_number())
    throw InvalidInput(path +
                       ": the trace records no offset to the PS's clock (a worker's trace "
                       "written before this version, or not a dynacomm trace); merge traces "
                       "of one machine with --shared-clock");
  return offset->get<double>();
}

}  // namespace

nlohmann::json merge_traces(const std::vector<std::string>& paths, Clocks clocks) {
  nlohmann::json events = nlohmann::json::array();
  for (const std::string& path : paths) {
    nlohmann::json part = read_trace(path);
    const double shift_us = clocks == Clocks::kToPs ? shift_to_ps_ms(part, path) * 1e3 : 0;
    for (auto& e : part["traceEvents"]) {
      if (e.contains("ts")) e["ts"] = e["ts"].get<double>() + shift_us;
      events.push_back(std::move(e));
    }
  }
  bool any = false;
  double t0 = 0;
  for (const auto& e : events)
    if (e.contains("ts") && (!any || e["ts"].get<double>() < t0)) {
      t0 = e["ts"].get<double>();
      any = true;
    }
  for (auto& e : events)
    if (e.contains("ts")) e["ts"] = e["ts"].get<double>() - t0;
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace dynacomm::report
