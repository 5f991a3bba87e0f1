#include "gui/models/plan_bounds.hpp"

#include <cstdint>

namespace ddpsim::gui {

namespace {

using json = nlohmann::json;

// The integer at `key` of `obj`, or `fallback`.
std::int64_t integerAt(const json& obj, const char* key, std::int64_t fallback) {
  if (!obj.is_object() || !obj.contains(key) || !obj.at(key).is_number_integer()) return fallback;
  return obj.at(key).get<std::int64_t>();
}

}  // namespace

json planDocument(const json& doc, int maxGpus) {
  if (!doc.is_object() || maxGpus < 1) return doc;
  json out = doc;
  const json plan = doc.contains("plan") && doc.at("plan").is_object() ? doc.at("plan") : json();
  if (!doc.contains("plan") || plan.is_object()) {
    const bool bounded = plan.is_object() && (plan.contains("max_gpus") || plan.contains("gpus"));
    if (!bounded && integerAt(plan, "min_gpus", 1) <= maxGpus) out["plan"]["max_gpus"] = maxGpus;
  }
  if (!out.contains("plan") || !out.at("plan").is_object()) return out;
  json& p = out["plan"];
  const std::int64_t bound = integerAt(p, "max_gpus", 0);
  if (bound < 1 || !p.contains("hardware") || !p.at("hardware").is_array()) return out;
  for (json& entry : p["hardware"]) {
    const std::int64_t own = integerAt(entry, "max_gpus", 0);
    const std::int64_t low = integerAt(entry, "min_gpus", integerAt(p, "min_gpus", 1));
    if (own > bound && low <= bound) entry["max_gpus"] = bound;
  }
  return out;
}

}  // namespace ddpsim::gui
