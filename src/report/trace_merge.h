// One Chrome trace from the traces of one job's processes: every worker's
// (trace-worker<R>.json) and the PS's (`dynacomm ps --trace`), on one time axis, shifted so
// the first event is at 0.
//
// Clocks: each process stamps its events with its own steady clock (ms). On one machine
// those clocks are the same clock, and the traces merge as they are (Clocks::kShared, what
// `dynacomm train` does). On several machines each worker's trace records the offset of
// the PS's clock from its own, measured at its hello (ChromeTrace::set_clock_offset: NTP's
// estimate, off by at most half that round trip), and Clocks::kToPs moves every worker's
// events onto the PS's clock first (`dynacomm trace merge`).
//
//   nlohmann::json t = merge_traces({"w0/trace-worker0.json", "w1/trace-worker1.json",
//                                    "ps-trace.json"}, Clocks::kToPs);
//   ChromeTrace::write_json("trace.json", t);
//
// Throws InvalidInput naming the file that cannot be read, is not a Chrome trace (an object
// with a traceEvents array of objects with numeric "ts"), or, with kToPs, is a worker's
// trace without a recorded offset.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dynacomm::report {

enum class Clocks { kShared, kToPs };

nlohmann::json merge_traces(const std::vector<std::string>& paths, Clocks clocks);

}  // namespace dynacomm::report
