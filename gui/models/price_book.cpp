#include "gui/models/price_book.hpp"

namespace ddpsim::gui {

namespace {

using json = nlohmann::json;

bool hasHardware(const json& doc) { return doc.is_object() && doc.contains("hardware"); }

// The plan.hardware entries (an empty array when there are none).
const json& planSystems(const json& doc) {
  static const json kNone = json::array();
  if (!doc.is_object() || !doc.contains("plan") || !doc.at("plan").is_object()) return kNone;
  const json& pl = doc.at("plan");
  if (!pl.contains("hardware") || !pl.at("hardware").is_array()) return kNone;
  return pl.at("hardware");
}

std::string presetOf(const json& hw) {
  if (!hw.is_object() || !hw.contains("preset") || !hw.at("preset").is_string()) return {};
  return hw.at("preset").get<std::string>();
}

std::optional<double> numberAt(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj.at(key).is_number()) return std::nullopt;
  return obj.at(key).get<double>();
}

void setOrErase(json& obj, const char* key, std::optional<double> usd) {
  if (usd) {
    obj[key] = *usd;
  } else if (obj.is_object()) {
    obj.erase(key);
  }
}

}  // namespace

std::string currentSystem(const json& doc) {
  if (hasHardware(doc)) return presetOf(doc.at("hardware"));
  const json& systems = planSystems(doc);
  return systems.empty() ? std::string() : presetOf(systems.at(0));
}

std::optional<double> currentPrice(const json& doc) {
  const std::optional<double> pricing = doc.is_object() && doc.contains("pricing")
                                            ? numberAt(doc.at("pricing"), "gpu_hour_usd")
                                            : std::nullopt;
  const json& systems = planSystems(doc);
  if (!hasHardware(doc) && !systems.empty()) {
    if (const auto own = numberAt(systems.at(0), "gpu_hour_usd")) return own;
  }
  return pricing;
}

json withPrice(const json& doc, std::optional<double> usd) {
  json out = doc;
  const bool planned = !planSystems(doc).empty();
  if (!hasHardware(doc) && planned) {
    setOrErase(out["plan"]["hardware"][0], "gpu_hour_usd", usd);
    return out;
  }
  if (usd) {
    out["pricing"]["gpu_hour_usd"] = *usd;
  } else if (out.contains("pricing") && out.at("pricing").is_object()) {
    out["pricing"].erase("gpu_hour_usd");
    if (out.at("pricing").empty()) out.erase("pricing");
  }
  const std::string system = currentSystem(doc);
  if (!system.empty() && planned) {
    for (json& entry : out["plan"]["hardware"]) {
      if (presetOf(entry) == system) setOrErase(entry, "gpu_hour_usd", usd);
    }
  }
  return out;
}

void PriceBook::record(const json& doc) {
  for (const json& entry : planSystems(doc)) {
    const std::string system = presetOf(entry);
    const std::optional<double> usd = numberAt(entry, "gpu_hour_usd");
    if (!system.empty() && usd) m_prices[system] = *usd;
  }
  const std::string system = currentSystem(doc);
  if (const auto usd = currentPrice(doc); !system.empty() && usd) m_prices[system] = *usd;
}

void PriceBook::set(const std::string& system, std::optional<double> usd) {
  if (system.empty()) return;
  if (usd) {
    m_prices[system] = *usd;
  } else {
    m_prices.erase(system);
  }
}

std::optional<double> PriceBook::price(const std::string& system) const {
  const auto it = m_prices.find(system);
  return it == m_prices.end() ? std::nullopt : std::optional<double>(it->second);
}

json withSystem(const json& doc, const std::string& system, const PriceBook& book) {
  json out = doc;
  if (out.contains("hardware") && out.at("hardware").is_object() &&
      out.at("hardware").contains("preset")) {
    out["hardware"]["preset"] = system;  // keeps the overrides beside it
  } else {
    out["hardware"] = json{{"preset", system}};
  }
  return withPrice(out, book.price(system));
}

}  // namespace ddpsim::gui
