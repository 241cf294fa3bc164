#include "net/job_protocol.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace dynacomm::net {

namespace {
using nlohmann::json;

// Brackets outside strings, counted without parsing.
void check_depth(const char* p, std::size_t size, const char* what) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = p[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw InvalidInput(std::string(what) + ": JSON nested deeper than " +
                           std::to_string(kMaxJsonDepth));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

json parse(const void* data, std::size_t size, const char* what) {
  const auto* p = static_cast<const char*>(data);
  check_depth(p, size, what);
  json j = json::parse(p, p + size, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw InvalidInput(std::string(what) + ": not a JSON object");
  return j;
}

const json& field(const json& o, const char* key, const char* what) {
  auto it = o.find(key);
  if (it == o.end()) throw InvalidInput(std::string(what) + ": no \"" + key + "\"");
  return *it;
}

double positive(const json& o, const char* key, const char* what) {
  const json& v = field(o, key, what);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0))
    throw InvalidInput(std::string(what) + ": \"" + key + "\" is not a number > 0");
  return v.get<double>();
}

double finite(const json& o, const char* key, const char* what) {
  const json& v = field(o, key, what);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    throw InvalidInput(std::string(what) + ": \"" + key + "\" is not a finite number");
  return v.get<double>();
}

std::int64_t integer(const json& o, const char* key, const char* what, std::int64_t low,
                     std::int64_t high) {
  const json& v = field(o, key, what);
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > 1ull << 62) ||
      v.get<std::int64_t>() < low || v.get<std::int64_t>() > high)
    throw InvalidInput(std::string(what) + ": \"" + key + "\" is not an integer in " +
                       std::to_string(low) + ".." + std::to_string(high));
  return v.get<std::int64_t>();
}

std::string plan_text(const json& o, const char* what) {
  const json& v = field(o, "plan", what);
  if (!v.is_object()) throw InvalidInput(std::string(what) + ": \"plan\" is not an object");
  return v.dump();
}

std::string text(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& array(const json& o, const char* key, const char* what) {
  const json& v = field(o, key, what);
  if (!v.is_array()) throw InvalidInput(std::string(what) + ": \"" + key + "\" is not an array");
  return v;
}

json plan_json(const std::string& plan) {
  json p = json::parse(plan, nullptr, false);
  return p.is_object() ? p : json::object();
}

constexpr std::int64_t kMaxIndex = 1 << 16, kMaxRank = 1 << 20;
}  // namespace

const std::string* JobConfig::find(const std::string& flag) const {
  for (const auto& [f, v] : settings)
    if (f == flag) return &v;
  return nullptr;
}

std::string encode(const JobConfig& m) {
  json s = json::object();
  for (const auto& [flag, value] : m.settings) s[flag] = value;
  return json{{"settings", s}}.dump();
}

// Flags as `--lower-case-words`, values short text: what a command line could hold.
JobConfig decode_job_config(const void* data, std::size_t size) {
  const char* what = "the job's configuration";
  const json j = parse(data, size, what);
  const json& s = field(j, "settings", what);
  if (!s.is_object() || s.size() > 128)
    throw InvalidInput("the job's configuration: \"settings\" is not an object of up to 128");
  JobConfig m;
  for (const auto& [flag, value] : s.items()) {
    const bool flag_ok =
        flag.size() > 2 && flag.size() <= 40 && flag.rfind("--", 0) == 0 &&
        flag.find_first_not_of("abcdefghijklmnopqrstuvwxyz-", 2) == std::string::npos;
    if (!flag_ok)
      throw InvalidInput("the job's configuration: '" + flag.substr(0, 40) + "' is not a flag");
    if (!value.is_string() || value.get_ref<const std::string&>().size() > 4096)
      throw InvalidInput("the job's configuration: " + flag + " is not a text of up to 4096 bytes");
    m.settings.emplace_back(flag, value.get<std::string>());
  }
  return m;
}

std::string encode(const PlanOffer& m) {
  json j = {{"plans", json::array()}};
  for (const auto& e : m.plans)
    j["plans"].push_back(
        {{"index", e.index}, {"predicted_ms", e.predicted_ms}, {"plan", plan_json(e.plan)}});
  return j.dump();
}

std::string encode(const AgreedPlans& m) {
  json j = {{"plans", json::array()}};
  for (const auto& e : m.plans)
    j["plans"].push_back({{"index", e.index},
                          {"rank", e.rank},
                          {"predicted_ms", e.predicted_ms},
                          {"plan", plan_json(e.plan)}});
  return j.dump();
}

std::string encode(const ReplanReport& m) {
  json j = {{"current_ms", m.current_ms}, {"proposal", nullptr}};
  if (m.proposal)
    j["proposal"] = {{"predicted_ms", m.proposal->predicted_ms},
                     {"plan", plan_json(m.proposal->plan)},
                     {"why", m.proposal->why}};
  return j.dump();
}

std::string encode(const JobPlanChange& m) {
  return json{{"plan", plan_json(m.plan)},          {"predicted_ms", m.predicted_ms},
              {"current_ms", m.current_ms},         {"rank", m.rank},
              {"from_iteration", m.from_iteration}, {"why", m.why}}
      .dump();
}

std::string encode(const Hello& m) {
  json j{{"model", m.model},           {"workers", m.workers},
         {"unit_bytes", m.unit_bytes}, {"total_iterations", m.total_iterations},
         {"trace_from", m.trace_from}, {"trace_count", m.trace_count}};
  if (!m.config.empty()) {
    json config = json::object();
    for (const auto& [flag, value] : m.config) config[flag] = value;
    j["config"] = config;
  }
  return j.dump();
}

Hello decode_hello(const void* data, std::size_t size) {
  const char* what = "hello";
  const json j = parse(data, size, what);
  Hello m;
  const json& model = field(j, "model", what);
  if (!model.is_string() || model.get_ref<const std::string&>().size() > 200)
    throw InvalidInput("hello: \"model\" is not a name of at most 200 characters");
  m.model = model.get<std::string>();
  m.workers = static_cast<int>(integer(j, "workers", what, 1, kMaxRank));
  const json& units = array(j, "unit_bytes", what);
  if (units.empty() || static_cast<std::int64_t>(units.size()) > kMaxHelloUnits)
    throw InvalidInput("hello: \"unit_bytes\" must list 1.." + std::to_string(kMaxHelloUnits) +
                       " units");
  std::int64_t total = 0;
  for (const json& b : units) {
    if (!b.is_number_integer() || b.get<std::int64_t>() < 4 || b.get<std::int64_t>() % 4 != 0 ||
        b.get<std::int64_t>() > kMaxModelBytes)
      throw InvalidInput("hello: \"unit_bytes\" holds " + b.dump().substr(0, 40) +
                         ", not a positive multiple of 4 bytes (float32)");
    total += b.get<std::int64_t>();
    if (total > kMaxModelBytes)
      throw InvalidInput("hello: the units add up to more than " + std::to_string(kMaxModelBytes) +
                         " bytes");
    m.unit_bytes.push_back(b.get<std::int64_t>());
  }
  const auto optional_count = [&](const char* key) {
    return j.contains(key) ? integer(j, key, what, 0, std::int64_t{1} << 40) : 0;
  };
  m.total_iterations = optional_count("total_iterations");
  m.trace_from = optional_count("trace_from");
  m.trace_count = optional_count("trace_count");
  if (auto c = j.find("config"); c != j.end()) {
    if (!c->is_object()) throw InvalidInput("hello: \"config\" is not an object");
    for (const auto& [flag, value] : c->items()) {
      if (!value.is_string() || flag.size() > 100 ||
          value.get_ref<const std::string&>().size() > 4096)
        throw InvalidInput("hello: \"config\" entry " + flag.substr(0, 100) +
                           " is not a string of at most 4096 characters");
      m.config.emplace_back(flag, value.get<std::string>());
    }
  }
  return m;
}

PlanOffer decode_plan_offer(const void* data, std::size_t size) {
  const char* what = "plans offer";
  const json j = parse(data, size, what);
  PlanOffer m;
  for (const json& e : array(j, "plans", what)) {
    if (!e.is_object()) throw InvalidInput("plans offer: an entry is not an object");
    m.plans.push_back({static_cast<int>(integer(e, "index", what, 0, kMaxIndex)),
                       finite(e, "predicted_ms", what), plan_text(e, what)});
  }
  return m;
}

AgreedPlans decode_agreed_plans(const void* data, std::size_t size) {
  const char* what = "the job's plans";
  const json j = parse(data, size, what);
  AgreedPlans m;
  for (const json& e : array(j, "plans", what)) {
    if (!e.is_object()) throw InvalidInput("the job's plans: an entry is not an object");
    m.plans.push_back({static_cast<int>(integer(e, "index", what, 0, kMaxIndex)),
                       static_cast<int>(integer(e, "rank", what, 0, kMaxRank)),
                       finite(e, "predicted_ms", what), plan_text(e, what)});
  }
  return m;
}

ReplanReport decode_replan_report(const void* data, std::size_t size) {
  const char* what = "replan report";
  const json j = parse(data, size, what);
  ReplanReport m;
  m.current_ms = positive(j, "current_ms", what);
  if (auto p = j.find("proposal"); p != j.end() && !p->is_null()) {
    if (!p->is_object()) throw InvalidInput("replan report: \"proposal\" is not an object");
    m.proposal = ReplanReport::Proposal{positive(*p, "predicted_ms", what), plan_text(*p, what),
                                        text(*p, "why")};
  }
  return m;
}

JobPlanChange decode_job_plan_change(const void* data, std::size_t size) {
  const char* what = "the job's plan change";
  const json j = parse(data, size, what);
  return {plan_text(j, what),
          finite(j, "predicted_ms", what),
          finite(j, "current_ms", what),
          static_cast<int>(integer(j, "rank", what, 0, kMaxRank)),
          integer(j, "from_iteration", what, 0, std::numeric_limits<std::int64_t>::max()),
          text(j, "why")};
}

}  // namespace dynacomm::net
