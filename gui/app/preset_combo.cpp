#include "gui/app/preset_combo.hpp"

#include <QComboBox>
#include <QHeaderView>
#include <QStandardItemModel>
#include <QTableView>

namespace ddpsim::gui {

void setPresetRows(QComboBox* combo, const QStringList& headers, const QList<QStringList>& rows) {
  auto* model = qobject_cast<QStandardItemModel*>(combo->model());
  if (model == nullptr) return;  // a combo with a model of its own
  model->setColumnCount(static_cast<int>(headers.size()));
  model->setHorizontalHeaderLabels(headers);
  for (const QStringList& row : rows) {
    QList<QStandardItem*> items;
    for (const QString& cell : row) {
      auto* item = new QStandardItem(cell);
      item->setEditable(false);
      items << item;
    }
    model->appendRow(items);
  }
  auto* view = new QTableView;
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setShowGrid(false);
  view->verticalHeader()->setVisible(false);
  view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view->setWordWrap(false);
  combo->setView(view);  // the combo owns it; its model stays
  // The popup as wide as its columns (a combo's popup is at least the combo's width).
  int width = 0;
  view->resizeColumnsToContents();
  for (int c = 0; c < model->columnCount(); ++c) width += view->columnWidth(c);
  view->setMinimumWidth(width + 4);
}

}  // namespace ddpsim::gui
