// charts.hpp: the planner's charts, built from a SweepResult into a QChart. The window and
// ddpsim-plot call the same functions, so what the CLI renders is what the window shows.
//
//   QChart* chart = new QChart;
//   buildChart(ChartKind::kStep, chart, result, overlay);  // replaces series and axes
#pragma once

#include <QChart>
#include <QString>
#include <optional>
#include <vector>

#include "gui/models/measured.hpp"
#include "gui/models/sweep_runner.hpp"

namespace ddpsim::gui {

enum class ChartKind { kStep, kScaling, kMemory, kCost, kTimeline };

/// "step", "scaling", "memory", "cost", "timeline".
QString chartKindName(ChartKind k);
std::optional<ChartKind> chartKindFromName(const QString& name);

/// What is drawn over the predicted curves.
struct ChartOverlay {
  SweepResultPtr pinned;  ///< the pinned scenario's result (compare), or null
  QString pinnedLabel;
  std::vector<MeasuredPoint> measured;  ///< results/validation-*.json step times
};

/// Builds chart `k` (not kTimeline, which is TimelineView's) into `chart`, replacing its series
/// and axes. A result that could not be computed shows its message as the title.
void buildChart(ChartKind k, QChart* chart, const SweepResult& r, const ChartOverlay& overlay);

/// Removes and deletes every series and axis of `chart`.
void clearChart(QChart* chart);

}  // namespace ddpsim::gui
