#include "gui/app/hover_chart_view.hpp"

#include <QAbstractBarSeries>
#include <QGraphicsLineItem>
#include <QMouseEvent>
#include <QPen>
#include <QToolTip>

#include "gui/app/charts.hpp"
#include "gui/app/legend_fit.hpp"

namespace ddpsim::gui {

HoverChartView::HoverChartView(QChart* chart, QWidget* parent) : QChartView(chart, parent) {
  setMouseTracking(true);
}

void HoverChartView::hide() {
  if (m_line) m_line->setVisible(false);
  m_label.clear();
  QToolTip::hideText();
}

QString HoverChartView::hoverAt(const QPointF& pos) {
  QChart* c = chart();
  const QPointF scenePos = mapToScene(pos.toPoint());
  const QPointF chartPos = c->mapFromScene(scenePos);
  if (c->series().isEmpty() || !c->plotArea().contains(chartPos)) {
    hide();
    return {};
  }
  // Map through a series on the bottom axis: the GPU axis (or the memory chart's categories).
  QAbstractSeries* ref = nullptr;
  for (QAbstractSeries* s : c->series()) {
    for (QAbstractAxis* a : s->attachedAxes()) {
      if (a->alignment() == Qt::AlignBottom) ref = s;
    }
    if (ref) break;
  }
  if (!ref) {
    hide();
    return {};
  }
  const double x = c->mapToValue(chartPos, ref).x();
  double nearest = 0;
  m_label = hoverText(c, x, &nearest);
  if (m_label.isEmpty()) {
    hide();
    return {};
  }
  if (!m_line) {
    m_line = new QGraphicsLineItem(c);
    QPen pen(QColor(80, 80, 80));
    pen.setStyle(Qt::DotLine);
    m_line->setPen(pen);
    m_line->setZValue(100);
  }
  // The crosshair sits on the data point the text describes (bars: the mouse position).
  double lineX = chartPos.x();
  const bool bars = qobject_cast<QAbstractBarSeries*>(ref) != nullptr;
  if (!bars) lineX = c->mapToPosition(QPointF(nearest, 0), ref).x();
  const QRectF area = c->plotArea();
  m_line->setLine(lineX, area.top(), lineX, area.bottom());
  m_line->setVisible(true);
  QToolTip::showText(mapToGlobal(pos.toPoint()), m_label, this);
  return m_label;
}

void HoverChartView::mouseMoveEvent(QMouseEvent* event) {
  hoverAt(event->position());
  QChartView::mouseMoveEvent(event);
}

void HoverChartView::leaveEvent(QEvent* event) {
  hide();
  QChartView::leaveEvent(event);
}

void HoverChartView::resizeEvent(QResizeEvent* event) {
  QChartView::resizeEvent(event);  // resizes the chart
  fitLegend(chart());
}

}  // namespace ddpsim::gui
