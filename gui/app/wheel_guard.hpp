// wheel_guard.hpp: the mouse wheel scrolls the scenario panel, it does not edit it (issue 41
// item 3). Qt's combo boxes, spin boxes and sliders take the wheel whenever the pointer is over
// them, so scrolling the panel changed the precision (amp_bf16 to fp32) and the recommendation
// with it. Installed on a form, every such field takes focus by click or Tab only
// (Qt::StrongFocus) and ignores the wheel until it has the focus; the ignored event goes on to
// the scroll area around the form.
//
//   WheelGuard::install(panel);   // after the fields are built
#pragma once

#include <QObject>

class QWidget;

namespace ddpsim::gui {

class WheelGuard : public QObject {
  Q_OBJECT

 public:
  /// Guards every QComboBox, QAbstractSpinBox and QSlider under `root` (the guard is a child of
  /// `root`).
  static void install(QWidget* root);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  explicit WheelGuard(QObject* parent) : QObject(parent) {}
};

}  // namespace ddpsim::gui
