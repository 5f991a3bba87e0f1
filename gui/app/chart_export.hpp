// chart_export.hpp: saves a chart view or the timeline as PNG (raster, 2x) or SVG (vector,
// QSvgGenerator), by the file's suffix; and text files (CSV) atomically.
//
//   QString err;
//   if (!exportView(chartView, "step.svg", &err)) ...;
#pragma once

#include <QString>
#include <QWidget>

namespace ddpsim::gui {

/// True when this build can write SVG (Qt6 Svg found at configure time).
bool svgExportAvailable();
/// Renders `view` (a QChartView or a TimelineView; any other widget is grabbed) to `path`:
/// ".svg" as vector graphics, anything else as PNG. Returns false with a one-line message.
bool exportView(QWidget* view, const QString& path, QString* error);
/// Writes `text` to `path` atomically (temp file + rename).
bool writeTextFile(const QString& path, const QString& text, QString* error);

}  // namespace ddpsim::gui
