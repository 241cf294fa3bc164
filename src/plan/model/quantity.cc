#include "plan/model/quantity.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/error.h"

namespace dynacomm::plan {

namespace {

// Splits "12.5mbit" into 12.5 and "mbit"; throws when there is no number in front.
double split_number(const std::string& text, std::string* unit, const char* what,
                    const char* units) {
  const char* begin = text.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin || text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    throw InvalidInput(std::string(what) + " '" + text +
                       "': expected a number followed by one of " + units);
  unit->clear();
  for (const char* c = end; *c; ++c) unit->push_back(std::tolower(static_cast<unsigned char>(*c)));
  if (!std::isfinite(v) || v < 0)
    throw InvalidInput(std::string(what) + " '" + text +
                       "': must be a finite, non-negative number");
  return v;
}

}  // namespace

double parse_bandwidth_bps(const std::string& text) {
  static const char* kUnits = "kbit, mbit, gbit (bit/s)";
  std::string unit;
  double v = split_number(text, &unit, "bandwidth", kUnits);
  double scale = 0;
  if (unit == "kbit")
    scale = 1e3;
  else if (unit == "mbit")
    scale = 1e6;
  else if (unit == "gbit")
    scale = 1e9;
  else
    throw InvalidInput("bandwidth '" + text + "': unknown unit '" + unit + "', expected one of " +
                       kUnits);
  if (v <= 0) throw InvalidInput("bandwidth '" + text + "': must be positive");
  return v * scale;
}

double parse_duration_ms(const std::string& text) {
  static const char* kUnits = "us, ms, s, min, h";
  std::string unit;
  double v = split_number(text, &unit, "duration", kUnits);
  if (unit == "us") return v / 1e3;
  if (unit == "ms") return v;
  if (unit == "s") return v * 1e3;
  if (unit == "min") return v * 60e3;
  if (unit == "h") return v * 3600e3;
  throw InvalidInput("duration '" + text + "': unknown unit '" + unit + "', expected one of " +
                     kUnits);
}

std::string format_bandwidth(double bps) {
  char buf[64];
  if (bps >= 1e9)
    std::snprintf(buf, sizeof buf, "%g Gbit/s", bps / 1e9);
  else if (bps >= 1e6)
    std::snprintf(buf, sizeof buf, "%g Mbit/s", bps / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%g kbit/s", bps / 1e3);
  return buf;
}

std::string format_ms(double ms) {
  char buf[64];
  if (ms >= 10000)
    std::snprintf(buf, sizeof buf, "%.2f s", ms / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  return buf;
}

}  // namespace dynacomm::plan
