// legend_fit.hpp: a chart legend that shows every entry whole (the buyer's review, defect 12: at
// 1280x800 Qt elided "cost to train (U...", "chosen: 32 GP..."). Qt Charts lays an attached
// legend out in one row under the plot and elides the longest entries first when that row is too
// narrow; fitLegend keeps the legend there while every entry fits in one row and otherwise moves
// it beside the plot, one entry per line (Qt gives a side legend up to 38% of the chart's width,
// so entries stay whole unless one alone is wider than that; its tooltip then has the full text).
//
//   buildChart(kind, chart, result, overlay);
//   fitLegend(chart);                 // after the series change and on every resize
//   elidedLegendEntries(chart);       // the labels drawn shorter than they are (empty: none)
#pragma once

#include <QStringList>

class QChart;

namespace ddpsim::gui {

/// Puts the legend of `chart` under the plot when its entries fit in one row at the chart's
/// width, else on the right. A chart without a size yet (a hidden tab) keeps its alignment.
void fitLegend(QChart* chart);

/// The labels of the visible legend entries of `chart` that are drawn shortened, as laid out
/// now; empty when every entry is drawn whole.
QStringList elidedLegendEntries(const QChart* chart);

}  // namespace ddpsim::gui
