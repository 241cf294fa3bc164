// Parsing and printing the quantities users type: bandwidths and durations.
//
//   parse_bandwidth_bps("100mbit")  -> 1e8     (kbit, mbit, gbit: decimal, bit/s, as tc)
//   parse_duration_ms("250us")      -> 0.25    (us, ms, s, min, h)
//   parse_bandwidth_bps("100MB")    -> throws InvalidInput naming the value and the units
#pragma once

#include <string>

namespace dynacomm::plan {

double parse_bandwidth_bps(const std::string& text);
double parse_duration_ms(const std::string& text);

std::string format_bandwidth(double bps);  // "100 Mbit/s"
std::string format_ms(double ms);          // "123.4 ms", "12.35 s"

}  // namespace dynacomm::plan
