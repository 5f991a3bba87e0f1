#include "gui/app/wheel_guard.hpp"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QSlider>
#include <QWidget>

namespace ddpsim::gui {

void WheelGuard::install(QWidget* root) {
  auto* guard = new WheelGuard(root);
  QList<QWidget*> fields;
  for (QWidget* w : root->findChildren<QComboBox*>()) fields << w;
  for (QWidget* w : root->findChildren<QAbstractSpinBox*>()) fields << w;
  for (QWidget* w : root->findChildren<QSlider*>()) fields << w;
  for (QWidget* w : fields) {
    w->setFocusPolicy(Qt::StrongFocus);
    w->installEventFilter(guard);
  }
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Wheel) {
    auto* w = qobject_cast<QWidget*>(watched);
    if (w != nullptr && !w->hasFocus()) {
      // Not for this field: QApplication passes an ignored wheel event on to the parents, so
      // the scroll area scrolls.
      event->ignore();
      return true;
    }
  }
  return QObject::eventFilter(watched, event);
}

}  // namespace ddpsim::gui
