// timeline_view.hpp: one simulated step per rank lane (compute: forward and backward layers,
// optimizer; communication: each bucket's collective), from the event simulator. Zoom with the
// mouse wheel (around the cursor) or zoomIn()/zoomOut(), pan by dragging, double-click resets.
//
//   TimelineView v;
//   v.setTimeline(result.timeline);
//   v.setVisibleRange(0.0, 0.010);   // seconds from the step start
#pragma once

#include <QWidget>

#include "gui/models/sweep_engine.hpp"

namespace ddpsim::gui {

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);

  void setTimeline(const TimelineData& timeline);
  const ddpsim::gui::TimelineData& timeline() const { return m_timeline; }
  /// The visible time window in seconds; the full step after setTimeline() or resetZoom().
  double visibleStart() const { return m_start; }
  double visibleEnd() const { return m_end; }
  void setVisibleRange(double startS, double endS);
  /// Paints the view into `rect` of any painter (PNG and SVG export use this).
  void paintTo(QPainter& p, const QRect& rect) const;
  /// The heading painted above the lanes: GPUs, step time and which ranks are shown.
  QString title() const;
  /// Marks the timeline as the last valid result while the document does not validate.
  void setStale(bool stale);
  bool isStale() const { return m_stale; }
  /// The hover text for a point of the widget: the span under it ("bwd h.3: 12.40 - 13.10 ms
  /// (0.70 ms), rank 0 compute"), "" when none (issue 19 item 8).
  QString spanTextAt(const QPointF& pos) const;

  QSize sizeHint() const override { return {900, 420}; }

 public slots:
  void zoomIn();
  void zoomOut();
  void resetZoom();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  void zoomAround(double centreS, double factor);
  double fullEnd() const;

  TimelineData m_timeline;
  double m_start = 0;
  double m_end = 1;
  int m_dragX = -1;
  double m_dragStart = 0;
  bool m_stale = false;
};

}  // namespace ddpsim::gui
