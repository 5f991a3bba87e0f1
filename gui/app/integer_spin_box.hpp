// integer_spin_box.hpp: a spin box for a whole number that refuses a decimal visibly (issue 41
// item 3). QSpinBox drops a typed '.', so "2.5" in the per-GPU batch became 25 without a word.
// Here a decimal stays in the field as typed; on Enter or when the field loses the focus the
// value is kept as it was and refused() says what was refused, for the form to show.
//
//   auto* batch = new IntegerSpinBox;
//   connect(batch, &IntegerSpinBox::refused, ...);   // "2.5"
#pragma once

#include <QSpinBox>

namespace ddpsim::gui {

class IntegerSpinBox : public QSpinBox {
  Q_OBJECT

 public:
  using QSpinBox::QSpinBox;

  /// `text` is a number with a fractional part ("2.5", "3.", ".5").
  static bool isDecimal(const QString& text);

 signals:
  /// A decimal was typed and committed (Enter, focus out): the value did not change.
  void refused(const QString& text);

 protected:
  QValidator::State validate(QString& input, int& pos) const override;
  void keyPressEvent(QKeyEvent* event) override;
  void focusOutEvent(QFocusEvent* event) override;

 private:
  void refuseDecimal();
};

}  // namespace ddpsim::gui
