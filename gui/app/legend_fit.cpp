#include "gui/app/legend_fit.hpp"

#include <QChart>
#include <QFontMetricsF>
#include <QGraphicsTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QScatterSeries>
#include <QTextDocument>
#include <algorithm>

namespace ddpsim::gui {

namespace {

// What Qt's LegendMarkerItem asks for beside its text (legendmarkeritem.cpp, Qt 6.4): two
// margins of 3, a space of 4, the marker and one pixel; the text item's own document margins.
double entryWidth(QLegendMarker* marker, const QFontMetricsF& fm) {
  double markerWidth = fm.height() / 2;
  if (const auto* s = qobject_cast<const QScatterSeries*>(marker->series()))
    markerWidth = std::max(markerWidth, s->markerSize());
  else
    markerWidth *= 1.5;  // a line's marker
  return fm.horizontalAdvance(marker->label()) + 2 * 3 + 4 + markerWidth + 1 + 2 * 4;
}

// A legend entry drawn: its series is shown and it has a label (a marker's own visibility is
// only set once the legend has been laid out).
bool shown(QLegendMarker* m) {
  return !m->label().isEmpty() && (m->series() == nullptr || m->series()->isVisible());
}

void collectTexts(const QGraphicsItem* item, QStringList& out) {
  for (const QGraphicsItem* child : item->childItems()) {
    if (const auto* t = dynamic_cast<const QGraphicsTextItem*>(child)) {
      if (t->isVisible()) out << t->toPlainText();
    }
    collectTexts(child, out);
  }
}

}  // namespace

void fitLegend(QChart* chart) {
  QLegend* legend = chart->legend();
  const double width = chart->size().width();
  if (width <= 0 || !legend->isVisible()) return;
  legend->setShowToolTips(true);
  const QFontMetricsF fm(legend->font());
  double row = 0;
  for (QLegendMarker* m : legend->markers()) {
    if (shown(m)) row += entryWidth(m, fm);
  }
  const QMarginsF margins = chart->margins();
  const double available = width - margins.left() - margins.right() - 2 * fm.height();
  const Qt::Alignment want = row <= available ? Qt::AlignBottom : Qt::AlignRight;
  if (legend->alignment() != want) legend->setAlignment(want);
}

QStringList elidedLegendEntries(const QChart* chart) {
  QStringList drawn;
  collectTexts(chart->legend(), drawn);
  QStringList out;
  for (QLegendMarker* m : chart->legend()->markers()) {
    if (shown(m) && !drawn.contains(m->label())) out << m->label();
  }
  return out;
}

}  // namespace ddpsim::gui
