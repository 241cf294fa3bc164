// Private helpers for reading validated fields out of JSON objects. Every error names the
// context (file), the path to the field and what was wrong with it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace dynacomm::plan::detail {

const nlohmann::json& require(const nlohmann::json& obj, const std::string& key,
                              const std::string& where);
// A finite number >= 0.
double non_negative_number(const nlohmann::json& obj, const std::string& key,
                           const std::string& where);
// An integer >= 0 (a float with no fractional part is accepted).
std::int64_t non_negative_integer(const nlohmann::json& obj, const std::string& key,
                                  const std::string& where);
std::string string_field(const nlohmann::json& obj, const std::string& key,
                         const std::string& where);
// Optional string: "" when absent; an error when present with another type.
std::string optional_string(const nlohmann::json& obj, const std::string& key,
                            const std::string& where);

}  // namespace dynacomm::plan::detail
