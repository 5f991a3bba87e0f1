#include "gui/models/compare_systems.hpp"

#include <algorithm>

#include "gui/models/price_book.hpp"

namespace ddpsim::gui {

using json = nlohmann::json;

namespace {

const json* planHardware(const json& doc) {
  if (!doc.is_object()) return nullptr;
  const auto plan = doc.find("plan");
  if (plan == doc.end() || !plan->is_object()) return nullptr;
  const auto hw = plan->find("hardware");
  return hw != plan->end() && hw->is_array() ? &*hw : nullptr;
}

std::string presetOfEntry(const json& entry) {
  if (!entry.is_object()) return {};
  const auto p = entry.find("preset");
  return p != entry.end() && p->is_string() ? p->get<std::string>() : std::string();
}

}  // namespace

std::vector<std::string> comparedSystems(const json& doc) {
  std::vector<std::string> out;
  if (const json* hw = planHardware(doc)) {
    for (const json& entry : *hw) {
      if (std::string p = presetOfEntry(entry); !p.empty()) out.push_back(std::move(p));
    }
  }
  return out;
}

json withComparedSystems(const json& doc, const std::vector<std::string>& systems,
                         const std::map<std::string, double>& prices) {
  if (!doc.is_object()) return doc;
  json out = doc;
  std::vector<std::string> unique;
  for (const std::string& s : systems) {
    if (!s.empty() && std::find(unique.begin(), unique.end(), s) == unique.end()) {
      unique.push_back(s);
    }
  }
  if (!out.contains("hardware") && !unique.empty()) {
    // The charts need a system: the current one (a buyer's file's first plan.hardware entry),
    // else the first compared.
    const std::string current = currentSystem(doc);
    out["hardware"] = json{{"preset", current.empty() ? unique.front() : current}};
  }
  if (unique.size() < 2) {
    if (out.contains("plan") && out.at("plan").is_object()) {
      out["plan"].erase("hardware");
      if (out.at("plan").empty()) out.erase("plan");
    }
    return out;
  }
  json entries = json::array();
  const json* before = planHardware(doc);
  for (const std::string& s : unique) {
    json entry = json{{"preset", s}};
    if (before) {
      for (const json& old : *before) {
        if (presetOfEntry(old) == s) {
          entry = old;
          break;
        }
      }
    }
    if (const auto it = prices.find(s); it != prices.end()) {
      entry["gpu_hour_usd"] = it->second;
    } else {
      entry.erase("gpu_hour_usd");
    }
    entries.push_back(std::move(entry));
  }
  out["plan"]["hardware"] = std::move(entries);
  return out;
}

}  // namespace ddpsim::gui
