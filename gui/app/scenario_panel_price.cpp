// The system and its price in ScenarioPanel (scenario_panel.hpp): switching the hardware preset
// writes that system's price from the price book (gui/models/price_book.hpp) in the same edit,
// and a price typed is the current system's (issue 41 item 3).
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QStringList>

#include "gui/app/scenario_panel.hpp"
#include "gui/models/number_format.hpp"
#include "gui/models/scenario_document.hpp"

namespace ddpsim::gui {

void ScenarioPanel::setHardwarePreset(const QString& name) {
  if (m_refreshing || m_hardwarePreset->currentIndex() == 0) return;
  // One edit (one undo step): the preset and its own price, or none when none is known yet.
  m_doc->replace(withSystem(m_doc->json(), name.toStdString(), m_prices));
}

void ScenarioPanel::setPrice(double usd) {
  if (m_refreshing) return;
  const std::optional<double> price = usd > 0 ? std::optional<double>(usd) : std::nullopt;
  m_prices.set(currentSystem(m_doc->json()), price);
  m_doc->replace(withPrice(m_doc->json(), price), QStringLiteral("price"));
}

void ScenarioPanel::showPriceNote() {
  const std::string system = currentSystem(m_doc->json());
  QStringList known;
  for (const auto& [name, usd] : m_prices.prices())
    known << QStringLiteral("%1 %2").arg(QString::fromStdString(name), formatMoney(usd));
  QString note;
  if (!system.empty() && !m_prices.price(system)) {
    note = tr("<b>No price for %1 yet:</b> type your quote (costs are GPU-hours until then). ")
               .arg(QString::fromStdString(system).toHtmlEscaped());
  }
  if (!known.isEmpty()) {
    note += tr("Prices per GPU-hour: %1 (a system switch uses its own price).")
                .arg(known.join(QStringLiteral(", ")).toHtmlEscaped());
  }
  m_priceNote->setText(note);
}

}  // namespace ddpsim::gui
