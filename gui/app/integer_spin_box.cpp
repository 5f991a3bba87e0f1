#include "gui/app/integer_spin_box.hpp"

#include <QKeyEvent>
#include <QLineEdit>
#include <QRegularExpression>

namespace ddpsim::gui {

bool IntegerSpinBox::isDecimal(const QString& text) {
  static const QRegularExpression kDecimal(QStringLiteral("^\\s*[+-]?(\\d+\\.\\d*|\\.\\d+)\\s*$"));
  return kDecimal.match(text).hasMatch();
}

QValidator::State IntegerSpinBox::validate(QString& input, int& pos) const {
  // Intermediate keeps the '.' in the field (QSpinBox's Invalid drops the keystroke), so the
  // user sees what was typed; committing it keeps the value (QAbstractSpinBox reverts to the
  // previous value for an Intermediate text) and refused() says why.
  if (isDecimal(input)) return QValidator::Intermediate;
  return QSpinBox::validate(input, pos);
}

void IntegerSpinBox::refuseDecimal() {
  const QString text = lineEdit()->text().trimmed();
  if (isDecimal(text)) emit refused(text);
}

void IntegerSpinBox::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) refuseDecimal();
  QSpinBox::keyPressEvent(event);
}

void IntegerSpinBox::focusOutEvent(QFocusEvent* event) {
  refuseDecimal();
  QSpinBox::focusOutEvent(event);
}

}  // namespace ddpsim::gui
