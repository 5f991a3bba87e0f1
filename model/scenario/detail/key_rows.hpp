// detail/key_rows.hpp: the rows of the scenario's key table (scenario_keys.cpp,
// hardware_keys.cpp) as the table writes them, one call per key. Not part of the public API.
//
//   t.push_back(integer("/cluster/gpus", "GPUs", nullptr, 1, "data-parallel GPUs", 1e7));
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/schema.hpp"

namespace ddpsim::model::detail {

inline KeySpec obj(std::string p, std::string help, bool required = false) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kObject;
  k.help = std::move(help);
  k.required = required;
  return k;
}
inline KeySpec integer(std::string p, std::string unit, nlohmann::json def, double min,
                       std::string help, std::optional<double> max = std::nullopt) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kInteger;
  k.unit = std::move(unit);
  k.default_value = std::move(def);
  k.minimum = min;
  k.maximum = max;
  k.help = std::move(help);
  return k;
}
inline KeySpec number(std::string p, std::string unit, nlohmann::json def, double min,
                      bool exclusive, std::string help, std::optional<double> max = std::nullopt) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kNumber;
  k.unit = std::move(unit);
  k.default_value = std::move(def);
  k.minimum = min;
  k.exclusive_minimum = exclusive;
  k.maximum = max;
  k.help = std::move(help);
  return k;
}
inline KeySpec str(std::string p, nlohmann::json def, std::vector<std::string> allowed,
                   std::string help) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kString;
  k.default_value = std::move(def);
  k.allowed = std::move(allowed);
  k.help = std::move(help);
  return k;
}
inline KeySpec pattern_str(std::string p, nlohmann::json def, std::string pattern,
                           std::string help) {
  KeySpec k = str(std::move(p), std::move(def), {}, std::move(help));
  k.pattern = std::move(pattern);
  return k;
}
inline KeySpec boolean(std::string p, bool def, std::string help) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kBoolean;
  k.default_value = def;
  k.help = std::move(help);
  return k;
}
inline KeySpec array(std::string p, double min_items, std::string help) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kArray;
  k.minimum = min_items;
  k.help = std::move(help);
  return k;
}
inline KeySpec boolean_or_integer(std::string p, bool def, double min, std::string help) {
  KeySpec k = boolean(std::move(p), def, std::move(help));
  k.type = KeyType::kBooleanOrInteger;
  k.minimum = min;
  k.maximum = 1 << 20;
  return k;
}
inline KeySpec required(KeySpec k) {
  k.required = true;
  return k;
}

}  // namespace ddpsim::model::detail
