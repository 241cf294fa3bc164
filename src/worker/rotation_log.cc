#include "worker/rotation_log.h"

#include "base/error.h"

namespace dynacomm::worker {

using json = nlohmann::json;

// Rows as arrays, not objects: a long rotation of a sliced plan logs 10^5 transfers.
//   compute, wall: [iteration, pace, [forward ms per unit], [backward ms per unit]]
//   transfers:     [iteration, up (0/1), bytes, service ms]
//   updates:       [iteration, bytes, ms]
//   iterations:    [iteration, plan id, stretch down, stretch up]
namespace {

json units_json(const std::vector<UnitSample>& units) {
  json a = json::array();
  for (const auto& u : units) a.push_back({u.iteration, u.pace, u.forward, u.backward});
  return a;
}

std::vector<UnitSample> units_of(const json& a) {
  std::vector<UnitSample> units;
  for (const json& r : a.get_ref<const json::array_t&>())
    units.push_back({r.at(0).get<std::int64_t>(), r.at(2).get<std::vector<double>>(),
                     r.at(3).get<std::vector<double>>(), r.at(1).get<double>()});
  return units;
}

}  // namespace

json to_json(const RotationLog& log) {
  json transfers = json::array(), updates = json::array(), iterations = json::array(),
       spread = json::array();
  for (const auto& t : log.transfers)
    transfers.push_back({t.iteration, t.up ? 1 : 0, t.bytes, t.service_ms});
  for (const auto& u : log.updates) updates.push_back({u.iteration, u.bytes, u.ms});
  for (const auto& i : log.iterations)
    iterations.push_back({i.iteration, i.plan_id, i.stretch_down, i.stretch_up});
  for (const auto& f : log.compute_spread)
    spread.push_back({{"forward", f.forward}, {"backward", f.backward}});
  return {{"warmup", log.warmup},
          {"workers", log.workers},
          {"latency_ms", log.latency_ms},
          {"given", plan::to_json(log.given)},
          {"profile", plan::to_json(log.profile)},
          {"compute_spread", spread},
          {"compute", units_json(log.compute)},
          {"wall", units_json(log.wall)},
          {"transfers", transfers},
          {"updates", updates},
          {"iterations", iterations}};
}

RotationLog rotation_log_from_json(const json& j, const std::string& source) {
  RotationLog log;
  try {
    log.warmup = j.at("warmup").get<int>();
    log.workers = j.at("workers").get<int>();
    log.latency_ms = j.at("latency_ms").get<double>();
    log.given = plan::link_profile_from_json(j.at("given"), source + ": given");
    log.profile = plan::model_profile_from_json(j.at("profile"), source + ": profile");
    for (const json& f : j.at("compute_spread").get_ref<const json::array_t&>())
      log.compute_spread.push_back({f.at("forward").get<std::vector<double>>(),
                                    f.at("backward").get<std::vector<double>>()});
    log.compute = units_of(j.at("compute"));
    log.wall = units_of(j.at("wall"));
    for (const json& r : j.at("transfers").get_ref<const json::array_t&>())
      log.transfers.push_back({r.at(0).get<std::int64_t>(), r.at(1).get<int>() != 0,
                               r.at(2).get<double>(), r.at(3).get<double>()});
    for (const json& r : j.at("updates").get_ref<const json::array_t&>())
      log.updates.push_back(
          {r.at(0).get<std::int64_t>(), r.at(1).get<double>(), r.at(2).get<double>()});
    for (const json& r : j.at("iterations").get_ref<const json::array_t&>())
      log.iterations.push_back({r.at(0).get<std::int64_t>(), r.at(1).get<int>(),
                                r.at(2).get<double>(), r.at(3).get<double>()});
  } catch (const json::exception& e) {
    throw Error(source + ": not a rotation log: " + e.what());
  }
  const std::size_t n = log.profile.units.size();
  for (const auto* units : {&log.compute, &log.wall})
    for (const auto& u : *units)
      if (u.forward.size() != n || u.backward.size() != n)
        throw Error(source + ": iteration " + std::to_string(u.iteration) + " has " +
                    std::to_string(u.forward.size()) + " unit times, the profile " +
                    std::to_string(n) + " units");
  return log;
}

}  // namespace dynacomm::worker
