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
  /// Step time on a log scale, each component its own line instead of stacked areas, so a 6 ms
  /// component of a 2,870 ms step is visible (issue 19 item 8).
  bool logStep = false;
};

/// Builds chart `k` (not kTimeline, which is TimelineView's) into `chart`, replacing its series
/// and axes. A result that could not be computed shows its message as the title.
void buildChart(ChartKind k, QChart* chart, const SweepResult& r, const ChartOverlay& overlay);

/// A series' full description when its legend entry is a short form (the legend must fit whole
/// at 1280x800: the buyer's review, defect 12): hoverText shows it in place of the name.
inline constexpr char kDetailProperty[] = "ddpsimDetail";
template <typename S>
S* withDetail(S* series, const QString& detail) {
  series->setProperty(kDetailProperty, detail);
  return series;
}

/// Removes and deletes every series and axis of `chart`.
void clearChart(QChart* chart);

/// The values of every drawn series at the data point nearest to `gpus` on the GPU axis (issue
/// 19 item 8: hover), one line each: "64 GPUs" then "step time: 812.4 ms", ...; "" when no
/// series has points. For the memory chart `gpus` is the bar index (0, 1, ...). `at`, when
/// given, receives the x of the data point described (the crosshair's place). In chart_hover.cpp.
QString hoverText(const QChart* chart, double gpus, double* at = nullptr);

}  // namespace ddpsim::gui
