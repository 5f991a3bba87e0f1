#include "gui/app/preset_combo.hpp"

#include <QComboBox>
#include <QHeaderView>
#include <QStandardItemModel>
#include <QTableView>

#include "gui/models/number_format.hpp"
#include "gui/models/preset_catalog.hpp"

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

void addModelPresets(QComboBox* combo) {
  QList<QStringList> models;
  for (const ModelFacts& m : modelCatalog()) {
    models << QStringList{
        QString::fromStdString(m.name),
        m.params > 0 ? formatParams(m.params) : QString::fromStdString(m.error),
        m.seqLen > 1 ? formatNumber(static_cast<double>(m.seqLen), 4) : QStringLiteral("-")};
  }
  setPresetRows(combo,
                {QObject::tr("model"), QObject::tr("parameters"), QObject::tr("tokens per sample")},
                models);
}

void addSystemPresets(QComboBox* combo) {
  QList<QStringList> systems;
  for (const SystemFacts& s : systemCatalog()) {
    if (!s.error.empty()) {
      systems << QStringList{QString::fromStdString(s.name), QString::fromStdString(s.error)};
      continue;
    }
    systems << QStringList{
        QString::fromStdString(s.name),
        QStringLiteral("%1 x %2").arg(s.gpusPerNode).arg(QString::fromStdString(s.gpu)),
        QStringLiteral("%1 GiB").arg(formatNumber(s.memoryGib, 3)),
        QString::fromStdString(s.intraNode),
        s.nicsPerNode > 0 ? QStringLiteral("%1 x %2 Gb/s %3")
                                .arg(s.nicsPerNode)
                                .arg(formatNumber(s.nicGbps, 3))
                                .arg(QString::fromStdString(s.interNode))
                          : QString::fromStdString(s.interNode)};
  }
  setPresetRows(combo,
                {QObject::tr("system"), QObject::tr("GPUs per node"), QObject::tr("memory per GPU"),
                 QObject::tr("in a node"), QObject::tr("between nodes")},
                systems);
}

}  // namespace ddpsim::gui
