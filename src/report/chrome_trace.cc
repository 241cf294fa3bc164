#include "report/chrome_trace.h"

#include <fstream>

#include "base/error.h"

namespace dynacomm::report {

void ChromeTrace::add_event(int pid, int tid, const std::string& name, const std::string& category,
                            double start_ms, double end_ms, nlohmann::json args) {
  nlohmann::json e = {{"name", name},
                      {"cat", category},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", start_ms * 1e3},
                      {"dur", (end_ms - start_ms) * 1e3}};
  if (!args.is_null()) e["args"] = std::move(args);
  trace_["traceEvents"].push_back(std::move(e));
}

void ChromeTrace::add_instant(int pid, int tid, const std::string& name,
                              const std::string& category, double at_ms, nlohmann::json args) {
  nlohmann::json e = {{"name", name}, {"cat", category}, {"ph", "i"},        {"s", "p"},
                      {"pid", pid},   {"tid", tid},      {"ts", at_ms * 1e3}};
  if (!args.is_null()) e["args"] = std::move(args);
  trace_["traceEvents"].push_back(std::move(e));
}

void ChromeTrace::name_process(int pid, const std::string& name) {
  trace_["traceEvents"].push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
}

void ChromeTrace::name_track(int pid, int tid, const std::string& name) {
  trace_["traceEvents"].push_back({{"name", "thread_name"},
                                   {"ph", "M"},
                                   {"pid", pid},
                                   {"tid", tid},
                                   {"args", {{"name", name}}}});
  trace_["traceEvents"].push_back({{"name", "thread_sort_index"},
                                   {"ph", "M"},
                                   {"pid", pid},
                                   {"tid", tid},
                                   {"args", {{"sort_index", tid}}}});
}

void ChromeTrace::add_timeline(const plan::Timeline& timeline, const std::string& process_name,
                               int pid, double offset_ms) {
  name_process(pid, process_name);
  name_track(pid, kCompute, "compute");
  name_track(pid, kDownlink, "downlink (pull)");
  name_track(pid, kUplink, "uplink (push)");
  for (const plan::Event& e : timeline.events) {
    int tid = kCompute;
    std::string name;
    switch (e.kind) {
      case plan::EventKind::kPull:
        tid = kDownlink;
        name = "pull " + std::to_string(e.index);
        break;
      case plan::EventKind::kPush:
        tid = kUplink;
        name = "push " + std::to_string(e.index);
        break;
      case plan::EventKind::kForward:
        name = "fwd " + std::to_string(e.index);
        break;
      case plan::EventKind::kBackward:
        name = "bwd " + std::to_string(e.index);
        break;
    }
    add_event(pid, tid, name, plan::to_string(e.kind), offset_ms + e.start_ms,
              offset_ms + e.end_ms);
  }
}

void ChromeTrace::set_ps_clock() { trace_["otherData"] = {{"process", "ps"}}; }

void ChromeTrace::set_clock_offset(int rank, std::optional<double> ps_minus_this_ms) {
  trace_["otherData"] = {{"process", "worker"}, {"rank", rank}};
  if (ps_minus_this_ms) trace_["otherData"][kClockOffsetKey] = *ps_minus_this_ms;
}

void ChromeTrace::write(const std::string& path) const { write_json(path, trace_); }

void ChromeTrace::write_json(const std::string& path, const nlohmann::json& trace) {
  std::ofstream out(path);
  if (!out) throw Error(path + ": cannot write trace file");
  out << trace.dump() << "\n";
  if (!out) throw Error(path + ": write failed");
}

}  // namespace dynacomm::report
