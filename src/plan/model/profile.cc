#include "plan/model/profile.h"

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "plan/model/json_fields.h"

namespace dynacomm::plan {

using nlohmann::json;

std::int64_t ModelProfile::total_bytes() const {
  std::int64_t s = 0;
  for (const auto& u : units) s += u.bytes;
  return s;
}
std::int64_t ModelProfile::total_pull_bytes() const {
  std::int64_t s = 0;
  for (const auto& u : units) s += u.down_bytes();
  return s;
}
std::int64_t ModelProfile::total_push_bytes() const {
  std::int64_t s = 0;
  for (const auto& u : units) s += u.up_bytes();
  return s;
}
double ModelProfile::total_forward_ms() const {
  double s = 0;
  for (const auto& u : units) s += u.forward_ms;
  return s;
}
double ModelProfile::total_backward_ms() const {
  double s = 0;
  for (const auto& u : units) s += u.backward_ms;
  return s;
}

namespace {
void check_time(double v, const std::string& field) {
  if (!std::isfinite(v)) throw InvalidInput(field + ": not a finite number");
  if (v < 0) throw InvalidInput(field + ": negative value " + std::to_string(v));
}
}  // namespace

ModelProfile scaled(const ModelProfile& profile, const ComputeFactors& factors) {
  if (factors.forward.size() != profile.units.size() ||
      factors.backward.size() != profile.units.size())
    throw InvalidInput("compute factors: " + std::to_string(factors.forward.size()) + " forward, " +
                       std::to_string(factors.backward.size()) + " backward for " +
                       std::to_string(profile.units.size()) + " units");
  ModelProfile m = profile;
  for (std::size_t u = 0; u < m.units.size(); ++u) {
    const double f = factors.forward[u], b = factors.backward[u];
    if (!(f > 0) || !(b > 0) || !std::isfinite(f) || !std::isfinite(b))
      throw InvalidInput("compute factors: unit " + std::to_string(u) +
                         ": must be positive and finite");
    m.units[u].forward_ms *= f;
    m.units[u].backward_ms *= b;
  }
  return m;
}

void ModelProfile::validate() const {
  if (units.empty()) throw InvalidInput("model profile '" + model + "': units: no units");
  if (batch <= 0) throw InvalidInput("model profile '" + model + "': batch: must be positive");
  for (std::size_t i = 0; i < units.size(); ++i) {
    const auto& u = units[i];
    std::string at = "units[" + std::to_string(i) + "] (" + u.name + ")";
    if (u.name.empty()) throw InvalidInput("units[" + std::to_string(i) + "].name: empty");
    if (u.bytes < 0) throw InvalidInput(at + ".bytes: negative value");
    if (u.params < 0) throw InvalidInput(at + ".params: negative value");
    if (u.push_bytes < -1) throw InvalidInput(at + ".push_bytes: negative value");
    if (u.pull_bytes < -1) throw InvalidInput(at + ".pull_bytes: negative value");
    check_time(u.decode_ms, at + ".decode_ms");
    check_time(u.forward_ms, at + ".forward_ms");
    check_time(u.backward_ms, at + ".backward_ms");
  }
}

void LinkProfile::validate() const {
  if (!std::isfinite(down_bps) || down_bps <= 0)
    throw InvalidInput("link: down_bps: bandwidth must be positive and finite");
  if (!std::isfinite(up_bps) || up_bps <= 0)
    throw InvalidInput("link: up_bps: bandwidth must be positive and finite");
  check_time(overhead_down_ms, "link: overhead_down_ms");
  check_time(overhead_up_ms, "link: overhead_up_ms");
  check_time(latency_ms, "link: latency_ms");
  check_time(aggregation_ms, "link: aggregation_ms");
  check_time(aggregation_ms_per_mb, "link: aggregation_ms_per_mb");
  for (auto [x, name] : {std::pair{compute_stretch_down, "compute_stretch_down"},
                         std::pair{compute_stretch_up, "compute_stretch_up"}})
    if (!(x >= 1 && x <= 10))
      throw InvalidInput(std::string("link: ") + name + ": must be within 1..10 (got " +
                         std::to_string(x) + ")");
}

ModelProfile model_profile_from_json(const json& j, const std::string& context) {
  using namespace detail;
  ModelProfile p;
  p.model = string_field(j, "model", context);
  std::int64_t batch = non_negative_integer(j, "batch", context);
  if (batch <= 0 || batch > (1 << 30)) throw InvalidInput(context + ".batch: must be positive");
  p.batch = static_cast<int>(batch);
  p.input = optional_string(j, "input", context);
  p.machine = optional_string(j, "machine", context);
  p.measured_with = optional_string(j, "measured_with", context);
  const json& units = require(j, "units", context);
  if (!units.is_array()) throw InvalidInput(context + ".units: expected an array");
  if (units.empty()) throw InvalidInput(context + ".units: no units");
  for (std::size_t i = 0; i < units.size(); ++i) {
    const json& ju = units[i];
    std::string where = context + ".units[" + std::to_string(i) + "]";
    UnitProfile u;
    u.name = string_field(ju, "name", where);
    if (u.name.empty()) throw InvalidInput(where + ".name: empty");
    where += " (" + u.name + ")";
    u.bytes = non_negative_integer(ju, "bytes", where);
    u.params = ju.contains("params") ? non_negative_integer(ju, "params", where) : u.bytes / 4;
    u.forward_ms = non_negative_number(ju, "forward_ms", where);
    u.backward_ms = non_negative_number(ju, "backward_ms", where);
    if (ju.contains("push_bytes")) u.push_bytes = non_negative_integer(ju, "push_bytes", where);
    if (ju.contains("decode_ms")) u.decode_ms = non_negative_number(ju, "decode_ms", where);
    if (ju.contains("pull_bytes")) u.pull_bytes = non_negative_integer(ju, "pull_bytes", where);
    p.units.push_back(std::move(u));
  }
  return p;
}

json to_json(const ModelProfile& p) {
  json units = json::array();
  for (const auto& u : p.units) {
    json ju = {{"name", u.name},
               {"params", u.params},
               {"bytes", u.bytes},
               {"forward_ms", u.forward_ms},
               {"backward_ms", u.backward_ms}};
    if (u.push_bytes >= 0) ju["push_bytes"] = u.push_bytes;
    if (u.decode_ms > 0) ju["decode_ms"] = u.decode_ms;
    if (u.pull_bytes >= 0) ju["pull_bytes"] = u.pull_bytes;
    units.push_back(std::move(ju));
  }
  json j = {{"model", p.model}, {"batch", p.batch}};
  if (!p.input.empty()) j["input"] = p.input;
  if (!p.measured_with.empty()) j["measured_with"] = p.measured_with;
  if (!p.machine.empty()) j["machine"] = p.machine;
  j["units"] = std::move(units);
  return j;
}

LinkProfile link_profile_from_json(const json& j, const std::string& context) {
  using namespace detail;
  LinkProfile l;
  l.down_bps = non_negative_number(j, "down_bps", context);
  l.up_bps = non_negative_number(j, "up_bps", context);
  l.overhead_down_ms = non_negative_number(j, "overhead_down_ms", context);
  l.overhead_up_ms = non_negative_number(j, "overhead_up_ms", context);
  l.latency_ms = non_negative_number(j, "latency_ms", context);
  // Optional (files from before they were measured): no stretch.
  if (j.contains("compute_stretch_down"))
    l.compute_stretch_down = non_negative_number(j, "compute_stretch_down", context);
  if (j.contains("compute_stretch_up"))
    l.compute_stretch_up = non_negative_number(j, "compute_stretch_up", context);
  if (j.contains("aggregation_ms"))
    l.aggregation_ms = non_negative_number(j, "aggregation_ms", context);
  if (j.contains("aggregation_ms_per_mb"))
    l.aggregation_ms_per_mb = non_negative_number(j, "aggregation_ms_per_mb", context);
  l.validate();
  return l;
}

json to_json(const LinkProfile& l) {
  return {{"down_bps", l.down_bps},
          {"up_bps", l.up_bps},
          {"overhead_down_ms", l.overhead_down_ms},
          {"overhead_up_ms", l.overhead_up_ms},
          {"latency_ms", l.latency_ms},
          {"compute_stretch_down", l.compute_stretch_down},
          {"compute_stretch_up", l.compute_stretch_up},
          {"aggregation_ms", l.aggregation_ms},
          {"aggregation_ms_per_mb", l.aggregation_ms_per_mb}};
}

ModelProfile load_model_profile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw InvalidInput(path + ": not a profile file (a folder or a device); give a JSON file");
  std::ifstream in(path);
  if (!in) throw InvalidInput(path + ": cannot open profile file");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {  // syntax, and numbers out of range (1e400)
    throw InvalidInput(path + ": not valid JSON: " + e.what());
  } catch (const std::exception& e) {  // reading failed
    throw InvalidInput(path + ": cannot read profile file: " + e.what());
  }
  return model_profile_from_json(j, path);
}

void save_model_profile(const ModelProfile& p, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw Error(path + ": cannot write profile file");
  out << to_json(p).dump(1) << "\n";
  if (!out) throw Error(path + ": write failed");
}

}  // namespace dynacomm::plan
