// results_table_model.hpp: the sweep as a table (one row per GPU count) for the window's table
// view and the CSV export.
//
//   ResultsTableModel m;
//   m.setResult(result);
//   QString csv = m.toCsv();   // header row + one row per GPU count, RFC 4180 quoting
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <memory>

#include "gui/models/sweep_engine.hpp"

namespace ddpsim::gui {

class ResultsTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit ResultsTableModel(QObject* parent = nullptr);

  void setResult(std::shared_ptr<const SweepResult> result);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  /// Some row has a value in `column` (the window hides a column without any: ETTR without a
  /// reliability section).
  bool hasColumnValues(int column) const;
  /// `column` is shown only when it has values (hasColumnValues): ETTR (a reliability section),
  /// steps and tokens to target (a training target).
  bool isOptionalColumn(int column) const;

  /// Header and rows as CSV (unit-suffixed column names, full-precision numbers).
  QString toCsv() const;

 private:
  QString cell(int row, int column, bool forCsv) const;
  QString header(int column, bool forCsv) const;

  std::shared_ptr<const SweepResult> m_result;
};

}  // namespace ddpsim::gui
