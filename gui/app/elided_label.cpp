#include "gui/app/elided_label.hpp"

#include <QFontMetrics>
#include <QResizeEvent>
#include <algorithm>

namespace ddpsim::gui {

ElidedLabel::ElidedLabel(QWidget* parent) : QLabel(parent) {
  setTextFormat(Qt::PlainText);
  setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

void ElidedLabel::setFullText(const QString& text) {
  m_full = text;
  elide();
}

QSize ElidedLabel::minimumSizeHint() const {
  return QSize(fontMetrics().horizontalAdvance(QStringLiteral("M\u2026")),
               QLabel::minimumSizeHint().height());
}

void ElidedLabel::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  elide();
}

void ElidedLabel::elide() {
  const int room = contentsRect().width() - 2 * margin() - 2 * std::max(0, indent());
  const QString shown = fontMetrics().elidedText(m_full, Qt::ElideRight, std::max(0, room));
  setText(shown);
  setToolTip(shown == m_full ? QString() : m_full);
}

}  // namespace ddpsim::gui
