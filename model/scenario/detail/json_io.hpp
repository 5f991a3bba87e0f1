// detail/json_io.hpp: JSON helpers shared by the scenario loader's translation units.
// Not part of the public API.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/schema.hpp"

namespace ddpsim::model::detail {

/// read_json_file with a process-wide cache: preset files never change while a process runs,
/// and sweeps read them once per point.
nlohmann::json read_cached(const std::string& path);

/// o[key] if present and not null, else `def`: for a key whose row in scenario_keys() has no
/// default (keys with one use get_or_default).
template <typename T>
T get_or(const nlohmann::json& o, const char* key, T def) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return def;
  return it->template get<T>();
}

/// The default scenario_keys() documents at `pointer` ("/simulation/steps"; "*" for an array
/// element, as in the table). The scenario parser takes every default from here, so what
/// `ddpsim schema` and docs/scenario-keys.md publish is what is parsed. Asserts that the row
/// exists and has a default (a parser bug, not bad input).
const nlohmann::json& key_default(const std::string& pointer);

/// o[the last token of `pointer`] if present and not null, else key_default(pointer).
///   s.simulation.steps = get_or_default<int>(sim, "/simulation/steps");  // 5 when left out
template <typename T>
T get_or_default(const nlohmann::json& o, const std::string& pointer) {
  auto it = o.find(pointer.substr(pointer.rfind('/') + 1));
  if (it == o.end() || it->is_null()) return key_default(pointer).template get<T>();
  return it->template get<T>();
}

/// A number that a preset or the scenario must provide; InputError at pointer/key otherwise.
double need_number(const nlohmann::json& o, const char* key, const std::string& file,
                   const std::string& pointer);

/// A file named by a scenario key must exist; the error names the scenario's key, not the path.
/// Returns the path resolved relative to `file`.
std::string require_file(const std::string& file, const std::string& pointer,
                         const std::string& ref);

/// The rows of `t` under `prefix`, re-rooted (the table of a preset file).
KeyTable reroot(const KeyTable& t, const std::string& prefix, std::string name);

}  // namespace ddpsim::model::detail
