// hoverText (charts.hpp): a drawn chart read back under the pointer, the values of its series at
// the data point nearest to the GPU count (or bar) hovered. charts.cpp draws the charts.
#include <QAbstractBarSeries>
#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QLineSeries>
#include <QStringList>
#include <QXYSeries>
#include <algorithm>
#include <cmath>

#include "gui/app/charts.hpp"

namespace ddpsim::gui {

QString hoverText(const QChart* chart, double gpus, double* at) {
  // The nearest x among all points (log distance on the GPU axis, linear for bar indices).
  const QList<QAbstractSeries*> series = chart->series();  // one list: series() returns a copy
  const bool bars = std::any_of(series.begin(), series.end(), [](QAbstractSeries* s) {
    return qobject_cast<QAbstractBarSeries*>(s) != nullptr;
  });
  const auto distance = [&](double a) {
    return bars || a <= 0 || gpus <= 0 ? std::abs(a - gpus) : std::abs(std::log2(a / gpus));
  };
  const auto pointsOf = [](QAbstractSeries* s) -> QList<QPointF> {
    if (auto* a = qobject_cast<QAreaSeries*>(s)) {
      // A stacked area's own height: upper minus lower edge.
      QList<QPointF> pts = a->upperSeries()->points();
      if (a->lowerSeries()) {
        const QList<QPointF> low = a->lowerSeries()->points();
        for (qsizetype i = 0; i < pts.size() && i < low.size(); ++i) pts[i].ry() -= low[i].y();
      }
      return pts;
    }
    if (auto* xy = qobject_cast<QXYSeries*>(s)) return xy->points();
    return {};
  };
  double best = 0, bestD = 1e300;
  for (QAbstractSeries* s : series) {
    for (const QPointF& p : pointsOf(s)) {
      if (distance(p.x()) < bestD) {
        bestD = distance(p.x());
        best = p.x();
      }
    }
  }
  if (at != nullptr) *at = best;
  QStringList lines;
  for (QAbstractSeries* s : series) {
    if (auto* b = qobject_cast<QAbstractBarSeries*>(s)) {
      const int i = static_cast<int>(std::lround(gpus));
      for (QBarSet* set : b->barSets()) {
        if (i >= 0 && i < set->count() && set->at(i) > 0)
          lines << QStringLiteral("%1: %2").arg(set->label()).arg(set->at(i), 0, 'f', 2);
      }
      continue;
    }
    if (s->name().isEmpty() || !s->isVisible()) continue;
    for (const QPointF& p : pointsOf(s)) {
      if (p.x() == best) {
        const QString detail = s->property(kDetailProperty).toString();
        lines << QStringLiteral("%1: %2")
                     .arg(detail.isEmpty() ? s->name() : detail)
                     .arg(p.y(), 0, 'g', 5);
        break;
      }
    }
  }
  if (lines.isEmpty()) return {};
  if (!bars) {
    lines.prepend(QStringLiteral("%1 GPUs").arg(best, 0, 'g', 8));
  } else {
    for (QAbstractAxis* a : chart->axes(Qt::Horizontal)) {
      auto* cat = qobject_cast<QBarCategoryAxis*>(a);
      const int i = static_cast<int>(std::lround(gpus));
      if (cat && i >= 0 && i < cat->count()) lines.prepend(cat->at(i));
    }
  }
  return lines.join(QLatin1Char('\n'));
}

}  // namespace ddpsim::gui
