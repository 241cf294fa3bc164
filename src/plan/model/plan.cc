#include "plan/model/plan.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "plan/model/json_fields.h"

namespace dynacomm::plan {

using nlohmann::json;

namespace {

std::string seg_name(const char* dir, std::size_t i, const Segment& s) {
  std::ostringstream os;
  os << dir << "[" << i << "] [" << s.first << "," << s.last << "]";
  return os.str();
}

void check_range(const char* dir, std::size_t i, const Segment& s, int num_units) {
  if (s.first > s.last) throw InvalidInput(seg_name(dir, i, s) + ": first unit is after last unit");
  if (s.first < 0 || s.last >= num_units)
    throw InvalidInput(seg_name(dir, i, s) + ": unit out of range 0.." +
                       std::to_string(num_units - 1));
}

}  // namespace

void Plan::validate(int num_units) const {
  if (num_units <= 0) throw InvalidInput("plan: model has no units");
  if (pull.empty()) throw InvalidInput("plan: pull: no segments");
  if (push.empty()) throw InvalidInput("plan: push: no segments");
  int expect = 0;  // pull must start at unit 0 and ascend without gap or overlap
  for (std::size_t i = 0; i < pull.size(); ++i) {
    check_range("pull", i, pull[i], num_units);
    if (pull[i].first != expect)
      throw InvalidInput(seg_name("pull", i, pull[i]) + ": starts at unit " +
                         std::to_string(pull[i].first) + ", expected unit " +
                         std::to_string(expect));
    expect = pull[i].last + 1;
  }
  if (expect != num_units)
    throw InvalidInput("plan: pull: units " + std::to_string(expect) + ".." +
                       std::to_string(num_units - 1) + " are not covered");
  expect = num_units - 1;  // push must start at the top unit and descend
  for (std::size_t i = 0; i < push.size(); ++i) {
    check_range("push", i, push[i], num_units);
    if (push[i].last != expect)
      throw InvalidInput(seg_name("push", i, push[i]) + ": ends at unit " +
                         std::to_string(push[i].last) + ", expected unit " +
                         std::to_string(expect) + " (push segments go in send order, top first)");
    expect = push[i].first - 1;
  }
  if (expect != -1)
    throw InvalidInput("plan: push: units 0.." + std::to_string(expect) + " are not covered");
  if (atom_params < 0 || credit_bytes < 0)
    throw InvalidInput("plan: atom_params and credit_bytes must be >= 0");
  if (pull_order.empty()) return;
  if (credit_bytes > 0)
    throw InvalidInput("plan: a pull order is given for a priority-scheduled plan");
  if (!full_duplex)
    throw InvalidInput("plan: a pull order is given for a phase-separated plan (pulls ascend)");
  if (pull_order.size() != pull.size())
    throw InvalidInput("plan: the pull order has " + std::to_string(pull_order.size()) +
                       " entries for " + std::to_string(pull.size()) + " pull segments");
  std::vector<bool> seen(pull.size(), false);
  for (int k : pull_order) {
    if (k < 0 || static_cast<std::size_t>(k) >= pull.size() || seen[static_cast<std::size_t>(k)])
      throw InvalidInput("plan: the pull order is not a permutation of the pull segments (entry " +
                         std::to_string(k) + ")");
    seen[static_cast<std::size_t>(k)] = true;
  }
}

std::vector<int> Plan::pull_sequence() const {
  if (!pull_order.empty()) return pull_order;
  std::vector<int> order(pull.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  return order;
}

std::vector<Segment> reverse_to_send_order(std::vector<Segment> ascending) {
  std::reverse(ascending.begin(), ascending.end());
  return ascending;
}

std::vector<Segment> segments_of_cuts(const std::vector<bool>& cut) {
  std::vector<Segment> s;
  int first = 0;
  const int L = static_cast<int>(cut.size()) + 1;
  for (int u = 0; u + 1 < L; ++u)
    if (cut[static_cast<std::size_t>(u)]) {
      s.push_back({first, u});
      first = u + 1;
    }
  s.push_back({first, L - 1});
  return s;
}

std::vector<bool> cuts_of_segments(const std::vector<Segment>& segments, int num_units) {
  std::vector<bool> cut(static_cast<std::size_t>(std::max(0, num_units - 1)), false);
  for (const Segment& s : segments)
    if (s.last < num_units - 1) cut[static_cast<std::size_t>(s.last)] = true;
  return cut;
}

std::string format_segments(const std::vector<Segment>& segments) {
  std::ostringstream os;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (i) os << ' ';
    if (segments[i].first == segments[i].last)
      os << segments[i].first;
    else
      os << segments[i].first << '-' << segments[i].last;
  }
  return os.str();
}

json to_json(const Plan& p) {
  auto segs = [](const std::vector<Segment>& v) {
    json a = json::array();
    for (const auto& s : v) a.push_back({s.first, s.last});
    return a;
  };
  json j = {{"scheduler", p.scheduler}, {"pull", segs(p.pull)}, {"push", segs(p.push)}};
  if (p.full_duplex) {
    j["full_duplex"] = true;
    if (p.credit_bytes == 0) j["pull_order"] = p.pull_sequence();  // priority: no order
  }
  if (p.atom_params > 0) j["atom_params"] = p.atom_params;
  if (p.credit_bytes > 0) j["credit_bytes"] = p.credit_bytes;
  return j;
}

Plan plan_from_json(const json& j, int num_units, const std::string& context) {
  Plan p;
  p.scheduler = detail::optional_string(j, "scheduler", context);
  auto segs = [&](const char* key) {
    const json& a = detail::require(j, key, context);
    std::string where = context + "." + key;
    if (!a.is_array()) throw InvalidInput(where + ": expected an array of [first,last] pairs");
    std::vector<Segment> out;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const json& s = a[i];
      if (!s.is_array() || s.size() != 2 || !s[0].is_number_integer() || !s[1].is_number_integer())
        throw InvalidInput(where + "[" + std::to_string(i) +
                           "]: expected [first,last] unit indices, got " + s.dump());
      long long f = s[0].get<long long>(), l = s[1].get<long long>();
      if (f < -1 || l < -1 || f > (1 << 30) || l > (1 << 30))
        throw InvalidInput(where + "[" + std::to_string(i) + "]: unit index out of range");
      out.push_back({static_cast<int>(f), static_cast<int>(l)});
    }
    return out;
  };
  p.pull = segs("pull");
  p.push = segs("push");
  if (j.contains("full_duplex")) {
    if (!j["full_duplex"].is_boolean())
      throw InvalidInput(context + ".full_duplex: expected true or false");
    p.full_duplex = j["full_duplex"].get<bool>();
  }
  for (const char* key : {"atom_params", "credit_bytes"}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_number_integer() || j[key].get<long long>() < 0)
      throw InvalidInput(context + "." + key + ": expected an integer >= 0, got " + j[key].dump());
    (std::string(key) == "atom_params" ? p.atom_params : p.credit_bytes) =
        j[key].get<std::int64_t>();
  }
  if (j.contains("pull_order")) {
    const json& a = j["pull_order"];
    if (!a.is_array()) throw InvalidInput(context + ".pull_order: expected an array of indices");
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_number_integer() || a[i].get<long long>() < 0 ||
          a[i].get<long long>() > (1 << 30))
        throw InvalidInput(context + ".pull_order[" + std::to_string(i) +
                           "]: expected a pull segment index, got " + a[i].dump());
      p.pull_order.push_back(static_cast<int>(a[i].get<long long>()));
    }
  }
  try {
    p.validate(num_units);
  } catch (const InvalidInput& e) {
    throw InvalidInput(context + ": " + e.what());
  }
  return p;
}

}  // namespace dynacomm::plan
