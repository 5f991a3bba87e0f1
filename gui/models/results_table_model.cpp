#include "gui/models/results_table_model.hpp"

namespace ddpsim::gui {

namespace {

struct Column {
  const char* header;  ///< display header
  const char* csv;     ///< CSV header (unit in the name)
};

constexpr Column kColumns[] = {
    {"GPUs", "gpus"},
    {"nodes", "nodes"},
    {"global batch", "global_batch"},
    {"step (ms)", "step_time_s"},
    {"compute (ms)", "compute_time_s"},
    {"exposed comm (ms)", "exposed_comm_s"},
    {"optimizer (ms)", "optimizer_time_s"},
    {"all comm (ms)", "comm_time_s"},
    {"samples/s", "throughput_samples_per_s"},
    {"weak eff. (%)", "weak_scaling_efficiency"},
    {"strong eff. (%)", "strong_scaling_efficiency"},
    {"memory/GPU (GiB)", "memory_per_gpu_bytes"},
    {"fits", "fits_in_memory"},
    {"time to train (h)", "time_to_train_s"},
    {"cost (USD)", "cost_usd"},
    {"error", "error"},
};
constexpr int kColumnCount = static_cast<int>(std::size(kColumns));

QString csvQuote(const QString& s) {
  if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) &&
      !s.contains(QLatin1Char('\n'))) {
    return s;
  }
  QString q = s;
  q.replace(QLatin1String("\""), QLatin1String("\"\""));
  return QLatin1Char('"') + q + QLatin1Char('"');
}

}  // namespace

ResultsTableModel::ResultsTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void ResultsTableModel::setResult(std::shared_ptr<const SweepResult> result) {
  beginResetModel();
  m_result = std::move(result);
  endResetModel();
}

int ResultsTableModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !m_result) return 0;
  return static_cast<int>(m_result->points.size());
}

int ResultsTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QString ResultsTableModel::cell(int row, int column, bool forCsv) const {
  const StepPoint& p = m_result->points[static_cast<std::size_t>(row)];
  const auto num = [forCsv](double v, double displayScale, int decimals) {
    return forCsv ? QString::number(v, 'g', 17) : QString::number(v * displayScale, 'f', decimals);
  };
  const bool ok = p.ok();
  switch (column) {
    case 0:
      return QString::number(p.gpus);
    case 1:
      return QString::number(p.nodes);
    case 2:
      return QString::number(p.globalBatch);
    case 3:
      return ok ? num(p.stepTimeS, 1e3, 2) : QString();
    case 4:
      return ok ? num(p.computeS, 1e3, 2) : QString();
    case 5:
      return ok ? num(p.exposedCommS, 1e3, 2) : QString();
    case 6:
      return ok ? num(p.optimizerS, 1e3, 2) : QString();
    case 7:
      return ok ? num(p.commS, 1e3, 2) : QString();
    case 8:
      return ok ? num(p.throughputSamplesPerS, 1, 1) : QString();
    case 9:
      return ok ? num(p.weakEfficiency, 100, 1) : QString();
    case 10:
      return ok ? num(p.strongEfficiency, 100, 1) : QString();
    case 11:
      return ok ? num(p.memoryBytes, 1.0 / (1024.0 * 1024 * 1024), 2) : QString();
    case 12:
      return ok ? (p.fitsInMemory ? QStringLiteral("yes") : QStringLiteral("no")) : QString();
    case 13:
      return ok && p.timeToTrainS ? num(*p.timeToTrainS, 1.0 / 3600, 2) : QString();
    case 14:
      return ok && p.costUsd ? num(*p.costUsd, 1, 0) : QString();
    case 15:
      return QString::fromStdString(p.error);
  }
  return {};
}

QVariant ResultsTableModel::data(const QModelIndex& index, int role) const {
  if (!m_result || !index.isValid()) return {};
  if (role == Qt::DisplayRole) return cell(index.row(), index.column(), false);
  if (role == Qt::TextAlignmentRole && index.column() < kColumnCount - 1) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant ResultsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  if (section < 0 || section >= kColumnCount) return {};
  return QString::fromLatin1(kColumns[section].header);
}

QString ResultsTableModel::toCsv() const {
  QStringList lines;
  QStringList header;
  for (const Column& c : kColumns) header << QString::fromLatin1(c.csv);
  lines << header.join(QLatin1Char(','));
  for (int r = 0; r < rowCount(); ++r) {
    QStringList row;
    for (int c = 0; c < kColumnCount; ++c) row << csvQuote(cell(r, c, true));
    lines << row.join(QLatin1Char(','));
  }
  return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

}  // namespace ddpsim::gui
