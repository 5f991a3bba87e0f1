// price_book.hpp: a price per system (issue 41 item 3). The scenario has one price,
// pricing.gpu_hour_usd, and plan.hardware gives each system searched its own gpu_hour_usd: the
// window keeps what the user gave for each system (hardware preset), so switching the preset
// brings back that system's price instead of keeping the previous GPU's (a B200 at an H100's
// $2.50 looked 2.4x cheaper). A system with no known price gets none: the costs then say
// GPU-hours, or the document asks for a price (the "cost" objective, a budget).
//
//   PriceBook book;
//   book.record(doc);                                   // pricing + plan.hardware prices
//   json next = withSystem(doc, "dgx-b200", book);      // the preset and its price, one edit
//   json priced = withPrice(next, 5.0);                 // the user's quote for it
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ddpsim::gui {

/// The system the document's hardware is: /hardware/preset, else (a buyer's file naming its
/// systems under plan.hardware only) the first plan.hardware entry's preset; "" when neither.
std::string currentSystem(const nlohmann::json& doc);

/// The price of the current system: that plan.hardware entry's gpu_hour_usd when the file has no
/// /hardware, else /pricing/gpu_hour_usd.
std::optional<double> currentPrice(const nlohmann::json& doc);

/// `doc` with the current system's price set (nullopt: removed, and an emptied /pricing with
/// it). Where the price lives: the first plan.hardware entry's gpu_hour_usd for a file without
/// /hardware, else /pricing/gpu_hour_usd, and then also every plan.hardware entry of the same
/// preset (the planner's price for that system), so charts and planner agree.
nlohmann::json withPrice(const nlohmann::json& doc, std::optional<double> usd);

class PriceBook {
 public:
  /// Forgets every price (another file is opened: nothing carries over).
  void clear() { m_prices.clear(); }
  /// Adds the prices `doc` names: each plan.hardware entry's with a preset, and the current
  /// system's (which wins). Keeps the prices of systems the document does not price.
  void record(const nlohmann::json& doc);
  void set(const std::string& system, std::optional<double> usd);
  std::optional<double> price(const std::string& system) const;
  const std::map<std::string, double>& prices() const { return m_prices; }

 private:
  std::map<std::string, double> m_prices;
};

/// `doc` switched to hardware preset `system` (overrides beside /hardware/preset kept) with that
/// system's price from `book` (none when the book has none).
nlohmann::json withSystem(const nlohmann::json& doc, const std::string& system,
                          const PriceBook& book);

}  // namespace ddpsim::gui
