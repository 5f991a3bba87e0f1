// hover_chart_view.hpp: a QChartView with a hover crosshair (issue 19 item 8). Moving the mouse
// over the plot draws a vertical line at the nearest data point and shows the value of every
// drawn series there (charts.hpp hoverText) as a tooltip; leaving the view hides both. On every
// resize the legend is fitted (legend_fit.hpp): one row under the plot while its entries fit,
// else beside it, so no entry is elided.
//
//   auto* view = new HoverChartView(new QChart);
//   view->hoverAt(QPointF(300, 200));   // what a mouse move does; view->hoverLabel() is the text
#pragma once

#include <QChartView>
#include <QString>

class QGraphicsLineItem;

namespace ddpsim::gui {

class HoverChartView : public QChartView {
  Q_OBJECT

 public:
  explicit HoverChartView(QChart* chart, QWidget* parent = nullptr);

  /// Updates the crosshair and tooltip for a mouse at `pos` (view coordinates); returns the text
  /// shown ("" outside the plot area or when nothing is drawn).
  QString hoverAt(const QPointF& pos);
  QString hoverLabel() const { return m_label; }

 protected:
  void mouseMoveEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void hide();

  QGraphicsLineItem* m_line = nullptr;
  QString m_label;
};

}  // namespace ddpsim::gui
