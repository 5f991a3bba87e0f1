// optional_json.hpp: an optional number as the results' JSON writes it, the value or null (a
// quantity this version did not compute, or one a source did not publish).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace ddpsim::sim {

inline nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace ddpsim::sim
