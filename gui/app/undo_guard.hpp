// undo_guard.hpp: Ctrl+Z is the document's undo even while a field of the form has the focus
// (the buyer's review, defect 16: Ctrl+Z in a focused field undid the field's own text, so the
// document kept the edit while the field showed the old value). Qt's line edits and spin boxes
// claim the Undo and Redo keys for their text (QEvent::ShortcutOverride); installed on a form,
// the guard turns that claim down for every field under it, so the window's Edit > Undo / Redo
// shortcuts fire. What they do with a focused field is the window's: MainWindow::undo reverts
// typing not committed yet (a number before Enter), else undoes the last edit.
//
//   UndoGuard::install(panel);   // after the fields are built
#pragma once

#include <QObject>

class QWidget;

namespace ddpsim::gui {

class UndoGuard : public QObject {
  Q_OBJECT

 public:
  /// Guards every QLineEdit, QAbstractSpinBox and QComboBox under `root` (the guard is a child
  /// of `root`).
  static void install(QWidget* root);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  explicit UndoGuard(QObject* parent) : QObject(parent) {}
};

}  // namespace ddpsim::gui
