#include "gui/app/systems_table.hpp"

#include <QHeaderView>
#include <QScrollBar>
#include <algorithm>

#include "gui/models/number_format.hpp"

namespace ddpsim::gui {

QString errorBandText(const std::optional<ErrorBandView>& band) {
  if (!band) return {};
  return QStringLiteral("median \u00b1%1%, max %2% (%3 runs; %4)")
      .arg(formatNumber(100 * band->medianAbs, 2), formatNumber(100 * band->maxAbs, 2))
      .arg(band->rows)
      .arg(QString::fromStdString(band->matchedOn));
}

SystemsTable::SystemsTable(QWidget* parent) : QTableWidget(0, 13, parent) {
  setObjectName(QStringLiteral("systemsTable"));
  setHorizontalHeaderLabels({tr("system"), tr("USD/GPU-h"), tr("GPUs searched"), tr("best: GPUs"),
                             tr("strategy"), tr("time"), tr("cost"), tr("per 1M tokens"), tr("MFU"),
                             tr("tokens/s/GPU"), tr("memory headroom"), tr("error band"),
                             tr("vs chosen")});
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setStretchLastSection(true);
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionBehavior(QAbstractItemView::SelectRows);
}

void SystemsTable::setPlan(const PlanView& plan) {
  setRowCount(static_cast<int>(plan.systems.size()));
  for (int i = 0; i < static_cast<int>(plan.systems.size()); ++i) {
    const PlanSystemView& s = plan.systems[static_cast<std::size_t>(i)];
    QString searched;
    if (!s.gpus.empty()) {
      searched = s.gpus.size() == 1
                     ? QString::number(s.gpus.front())
                     : QStringLiteral("%1-%2").arg(s.gpus.front()).arg(s.gpus.back());
    }
    QStringList cells = {
        QString::fromStdString(s.label) +
            (s.gpu.empty() ? QString()
                           : QStringLiteral(" (%1)").arg(QString::fromStdString(s.gpu))),
        s.gpuHourUsd ? formatMoney(*s.gpuHourUsd) : QStringLiteral("-"), searched};
    bool chosen = false;
    if (s.best) {
      const PlanPointView& b = *s.best;
      chosen = plan.chosen && plan.chosen->system == b.system && plan.chosen->gpus == b.gpus &&
               plan.chosen->globalBatch == b.globalBatch && plan.chosen->strategy == b.strategy;
      QString vs = chosen ? tr("chosen") : QString();
      if (!chosen && s.withinBandOfChosen) vs = tr("within the error band of the chosen one");
      cells << QString::number(b.gpus) << QString::fromStdString(b.strategy)
            << formatHours(b.timeMetric / 3600.0) +
                   (plan.byThroughput ? tr(" per 1M samples") : QString())
            << (b.costUsd ? formatMoney(*b.costUsd) : QStringLiteral("-"))
            << (b.costPerMillionTokens ? formatMoney(*b.costPerMillionTokens) : QStringLiteral("-"))
            << (b.mfu > 0 ? formatNumber(100 * b.mfu, 3) + QLatin1Char('%') : QStringLiteral("-"))
            << (b.tokensPerSPerGpu > 0 ? formatNumber(b.tokensPerSPerGpu, 4) : QStringLiteral("-"))
            << formatNumber(b.memoryHeadroomBytes / (1024.0 * 1024 * 1024), 3) + tr(" GiB")
            << errorBandText(b.band) << vs;
    } else {
      cells << tr("none feasible (%1 of %2 candidates)").arg(s.feasible).arg(s.candidates);
    }
    for (int col = 0; col < columnCount(); ++col) {
      auto* item = new QTableWidgetItem(col < cells.size() ? cells[col] : QString());
      if (chosen) {
        QFont f = item->font();
        f.setBold(true);
        item->setFont(f);
      }
      setItem(i, col, item);
    }
  }
  // Every system's row in view (up to 6) without scrolling the table: the buyer's comparison.
  int height = horizontalHeader()->sizeHint().height() + 2 * frameWidth() +
               horizontalScrollBar()->sizeHint().height();
  for (int i = 0; i < std::min(rowCount(), 6); ++i) height += verticalHeader()->sectionSize(i);
  setMinimumHeight(height);
}

}  // namespace ddpsim::gui
