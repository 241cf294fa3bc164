#include "plan/model/json_fields.h"

#include <cmath>

#include "base/error.h"

namespace dynacomm::plan::detail {

namespace {
std::string field(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}
}  // namespace

const nlohmann::json& require(const nlohmann::json& obj, const std::string& key,
                              const std::string& where) {
  if (!obj.is_object()) throw InvalidInput(where + ": expected a JSON object");
  auto it = obj.find(key);
  if (it == obj.end()) throw InvalidInput(field(where, key) + ": missing field");
  return *it;
}

double non_negative_number(const nlohmann::json& obj, const std::string& key,
                           const std::string& where) {
  const auto& v = require(obj, key, where);
  if (!v.is_number())
    throw InvalidInput(field(where, key) + ": expected a number, got " + v.dump());
  double x = v.get<double>();
  if (!std::isfinite(x)) throw InvalidInput(field(where, key) + ": not a finite number");
  if (x < 0) throw InvalidInput(field(where, key) + ": negative value " + v.dump());
  return x;
}

std::int64_t non_negative_integer(const nlohmann::json& obj, const std::string& key,
                                  const std::string& where) {
  double x = non_negative_number(obj, key, where);
  if (x != std::floor(x) || x > 9.0e15)
    throw InvalidInput(field(where, key) + ": expected a whole number, got " + obj.at(key).dump());
  return static_cast<std::int64_t>(x);
}

std::string string_field(const nlohmann::json& obj, const std::string& key,
                         const std::string& where) {
  const auto& v = require(obj, key, where);
  if (!v.is_string())
    throw InvalidInput(field(where, key) + ": expected a string, got " + v.dump());
  return v.get<std::string>();
}

std::string optional_string(const nlohmann::json& obj, const std::string& key,
                            const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) return "";
  return string_field(obj, key, where);
}

}  // namespace dynacomm::plan::detail
