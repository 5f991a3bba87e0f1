#include "gui/models/results_table_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gui/models/number_format.hpp"
#include "gui/models/series.hpp"

namespace ddpsim::gui {

namespace {

enum class Field {
  kFits,
  kGpus,
  kNodes,
  kGlobalBatch,
  kStep,
  kCompute,
  kExposed,
  kOptimizer,
  kComm,
  kThroughput,
  kTokens,
  kMfu,
  kWeak,
  kStrong,
  kMemory,
  kStepsToTarget,
  kTokensToTarget,
  kTimeToTrain,
  kCost,
  kEttr,
  kError
};

struct Column {
  Field field;
  const char* header;  ///< display header
  const char* csv;     ///< CSV header (unit in the name)
};

// "fits" first (issue 19): a configuration that does not fit in GPU memory must be seen before
// its step time, not scrolled to at the far right.
constexpr Column kColumns[] = {
    {Field::kFits, "fits", "fits_in_memory"},
    {Field::kGpus, "GPUs", "gpus"},
    {Field::kNodes, "nodes", "nodes"},
    {Field::kGlobalBatch, "global batch", "global_batch"},
    {Field::kStep, "step (ms)", "step_time_s"},
    {Field::kCompute, "compute (ms)", "compute_time_s"},
    {Field::kExposed, "exposed comm (ms)", "exposed_comm_s"},
    {Field::kOptimizer, "optimizer (ms)", "optimizer_time_s"},
    {Field::kComm, "all comm (ms)", "comm_time_s"},
    {Field::kThroughput, "samples/s", "throughput_samples_per_s"},
    {Field::kTokens, "tokens/s/GPU", "tokens_per_s_per_gpu"},
    {Field::kMfu, "MFU (%)", "mfu"},
    {Field::kWeak, "weak eff. (%)", "weak_scaling_efficiency"},
    {Field::kStrong, "strong eff. (%)", "strong_scaling_efficiency"},
    {Field::kMemory, "memory/GPU (GiB)", "memory_per_gpu_bytes"},
    {Field::kStepsToTarget, "steps to target", "steps_to_target"},
    // "samples to target" / samples_to_target for a model without a sequence (header()).
    {Field::kTokensToTarget, "tokens to target", "tokens_to_target"},
    {Field::kTimeToTrain, "time to train (h)", "time_to_train_s"},
    {Field::kCost, "cost", "cost_usd"},
    {Field::kEttr, "ETTR", "ettr"},
    {Field::kError, "error", "error"},
};
constexpr int kColumnCount = static_cast<int>(std::size(kColumns));

// Shown only when some row has a value (ResultsTableModel::isOptionalColumn).
bool optional(Field f) {
  return f == Field::kStepsToTarget || f == Field::kTokensToTarget || f == Field::kEttr;
}

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
    if (forCsv) return QString::number(v, 'g', 17);
    // A value that rounds to zero prints as 0, never "-0.00" (a -1e-15 s remainder).
    double shown = v * displayScale;
    if (std::fabs(shown) < 0.5 * std::pow(10.0, -decimals)) shown = 0;
    return QString::number(shown, 'f', decimals);
  };
  if (column < 0 || column >= kColumnCount) return {};
  const bool ok = p.ok();
  switch (kColumns[column].field) {
    case Field::kFits:
      return ok ? (p.fitsInMemory ? QStringLiteral("yes") : QStringLiteral("no")) : QString();
    case Field::kGpus:
      return QString::number(p.gpus);
    case Field::kNodes:
      return QString::number(p.nodes);
    case Field::kGlobalBatch:
      return QString::number(p.globalBatch);
    case Field::kStep:
      return ok ? num(p.stepTimeS, 1e3, 2) : QString();
    case Field::kCompute:
      return ok ? num(p.computeS, 1e3, 2) : QString();
    case Field::kExposed:
      return ok ? num(p.exposedCommS, 1e3, 2) : QString();
    case Field::kOptimizer:
      return ok ? num(p.optimizerS, 1e3, 2) : QString();
    case Field::kComm:
      return ok ? num(p.commS, 1e3, 2) : QString();
    case Field::kThroughput:
      return ok ? num(p.throughputSamplesPerS, 1, 1) : QString();
    case Field::kTokens:
      return ok && p.tokensPerSPerGpu > 0 ? num(p.tokensPerSPerGpu, 1, 0) : QString();
    case Field::kMfu:
      return ok && p.mfu > 0 ? num(p.mfu, 100, 1) : QString();
    case Field::kWeak:
      return ok ? num(p.weakEfficiency, 100, 1) : QString();
    case Field::kStrong:
      return ok ? num(p.strongEfficiency, 100, 1) : QString();
    case Field::kMemory:
      return ok ? num(p.memoryBytes, 1.0 / (1024.0 * 1024 * 1024), 2) : QString();
    case Field::kStepsToTarget:
      // As the Recommendation writes them ("508,281", "2.08 B"); the CSV keeps the number.
      if (!ok || !p.stepsToTarget) return {};
      return forCsv ? num(*p.stepsToTarget, 1, 0) : formatCount(*p.stepsToTarget);
    case Field::kTokensToTarget: {
      if (!ok || !p.stepsToTarget) return {};
      const double tokens = *workToTarget(p.stepsToTarget, p.globalBatch,
                                          std::max<std::int64_t>(1, m_result->seqLen));
      return forCsv ? num(tokens, 1, 0) : formatCount(tokens);
    }
    case Field::kTimeToTrain:
      if (!ok || !p.timeToTrainS) return {};
      return forCsv ? num(*p.timeToTrainS, 1, 0) : formatNumber(*p.timeToTrainS / 3600, 3);
    case Field::kCost:
      // The window's one money format, "$286,807" (issue 41 item 3); the CSV keeps the number.
      if (!ok || !p.costUsd) return {};
      return forCsv ? num(*p.costUsd, 1, 0) : formatMoney(*p.costUsd);
    case Field::kEttr:
      // With a reliability section: time and cost above include failures (time / ETTR).
      if (!ok || !p.ettr) return {};
      return forCsv ? num(*p.ettr, 1, 0) : QString::number(*p.ettr, 'f', 3);
    case Field::kError:
      return QString::fromStdString(p.error);
  }
  return {};
}

bool ResultsTableModel::isOptionalColumn(int column) const {
  return column >= 0 && column < kColumnCount && optional(kColumns[column].field);
}

QString ResultsTableModel::header(int column, bool forCsv) const {
  const Column& c = kColumns[column];
  // Tokens only for a model with a sequence (the Recommendation's header too).
  if (c.field == Field::kTokensToTarget && m_result && m_result->seqLen <= 1)
    return forCsv ? QStringLiteral("samples_to_target") : tr("samples to target");
  return QString::fromLatin1(forCsv ? c.csv : c.header);
}

bool ResultsTableModel::hasColumnValues(int column) const {
  for (int r = 0; r < rowCount(); ++r) {
    if (!cell(r, column, true).isEmpty()) return true;
  }
  return false;
}

QVariant ResultsTableModel::data(const QModelIndex& index, int role) const {
  if (!m_result || !index.isValid()) return {};
  if (role == Qt::DisplayRole) return cell(index.row(), index.column(), false);
  if (role == Qt::ToolTipRole && kColumns[index.column()].field == Field::kWeak) {
    // Above 100% is explained, not left bare (the buyer's review, defect 14).
    const StepPoint& p = m_result->points[static_cast<std::size_t>(index.row())];
    if (p.ok() && p.weakEfficiency > 1.0005) return superlinearNote(*m_result);
  }
  if (role == Qt::TextAlignmentRole && index.column() < kColumnCount - 1) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant ResultsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumnCount) return {};
  if (role == Qt::ToolTipRole) {
    switch (kColumns[section].field) {
      case Field::kWeak:
        return tr(
            "Weak scaling: one GPU's step time alone, with the same per-GPU batch, over the "
            "step time here. Above 100% a step here is shorter than one GPU's (a sharded "
            "strategy splits the optimizer step over the GPUs), not extra speed per GPU.");
      case Field::kStrong:
        return tr(
            "Strong scaling: one GPU's time for the same global batch over N times the "
            "step time here.");
      case Field::kStepsToTarget:
        return tr(
            "Optimizer steps to reach the training target (training.target): with a critical "
            "batch S_min x (1 + B_noise / global batch).");
      case Field::kTokensToTarget:
        return tr(
            "The work to reach the training target: steps to target x global batch x tokens per "
            "sample (samples for a model without a sequence).");
      case Field::kEttr:
        return tr(
            "Effective training time ratio: the share of the wall-clock time that trains, "
            "with failures and checkpoints (a reliability section); time and cost include "
            "them.");
      default:
        return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  return header(section, false);
}

QString ResultsTableModel::toCsv() const {
  QStringList lines;
  QStringList names;
  for (int c = 0; c < kColumnCount; ++c) names << header(c, true);
  lines << names.join(QLatin1Char(','));
  for (int r = 0; r < rowCount(); ++r) {
    QStringList row;
    for (int c = 0; c < kColumnCount; ++c) row << csvQuote(cell(r, c, true));
    lines << row.join(QLatin1Char(','));
  }
  return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

}  // namespace ddpsim::gui
