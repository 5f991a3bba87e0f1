#include "gui/app/undo_guard.hpp"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QKeyEvent>
#include <QLineEdit>
#include <QWidget>

namespace ddpsim::gui {

void UndoGuard::install(QWidget* root) {
  auto* guard = new UndoGuard(root);
  QList<QWidget*> fields;
  for (QWidget* w : root->findChildren<QLineEdit*>()) fields << w;
  for (QWidget* w : root->findChildren<QAbstractSpinBox*>()) fields << w;
  for (QWidget* w : root->findChildren<QComboBox*>()) fields << w;
  for (QWidget* w : fields) w->installEventFilter(guard);
}

bool UndoGuard::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride) {
    auto* key = static_cast<QKeyEvent*>(event);
    if (key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo)) {
      // Not the field's: an ignored override lets the shortcut map find the window's action.
      event->ignore();
      return true;
    }
  }
  return QObject::eventFilter(watched, event);
}

}  // namespace ddpsim::gui
