#include "gui/app/stale_banner.hpp"

namespace ddpsim::gui {

StaleBanner::StaleBanner(QWidget* parent) : QLabel(parent) {
  setObjectName(QStringLiteral("staleBanner"));
  setWordWrap(true);
  setTextFormat(Qt::PlainText);
  setStyleSheet(
      QStringLiteral("background: #fdecea; color: #c0392b; font-weight: bold; padding: 4px; "
                     "border: 1px solid #c0392b;"));
  hide();
}

QString StaleBanner::sentence(const QString& pointer) {
  return tr("Not updated: the scenario does not validate (%1); showing the last valid result")
      .arg(pointer.isEmpty() ? tr("see the status bar") : pointer);
}

void StaleBanner::setStale(bool stale, const QString& pointer) {
  m_stale = stale;
  setText(stale ? sentence(pointer) : QString());
  setVisible(stale);
}

}  // namespace ddpsim::gui
