#include "gui/app/timeline_view.hpp"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace ddpsim::gui {

namespace {

// Which ranks the lanes are (issue 19): "ranks shown: 5 of 64 (the first ones and the slowest)"
// when some are left out, so a 64-GPU timeline of 5 lanes does not read as the whole job.
QString rankNote(const TimelineData& t) {
  const int shown = static_cast<int>(t.ranks.size());
  if (shown == 0 || shown >= t.gpus) return {};
  return QStringLiteral(" \u2014 ranks shown: %1 of %2 (the first ones and the slowest)")
      .arg(shown)
      .arg(t.gpus);
}

constexpr int kLabelWidth = 120;
constexpr int kHeader = 44;
constexpr int kAxis = 26;

QColor spanColour(const TimelineSpan& s) {
  switch (s.kind) {
    case TimelineSpan::Kind::kForward:
      return QColor(86, 180, 233);
    case TimelineSpan::Kind::kBackward:
      return QColor(0, 114, 178);
    case TimelineSpan::Kind::kOptimizer:
      return QColor(0, 158, 115);
    case TimelineSpan::Kind::kCollective: {
      // Alternate two oranges so neighbouring buckets stay distinguishable.
      if (s.bucket < 0) return QColor(204, 121, 167);
      return s.bucket % 2 == 0 ? QColor(230, 159, 0) : QColor(213, 94, 0);
    }
    case TimelineSpan::Kind::kOther:
      break;
  }
  return QColor(150, 150, 150);
}

// A "nice" tick step (1, 2 or 5 x 10^k) for about `ticks` ticks over `span`.
double niceStep(double span, int ticks) {
  const double raw = span / std::max(ticks, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMinimumSize(400, 200);
  setMouseTracking(false);
}

double TimelineView::fullEnd() const {
  double end = m_timeline.stepTimeS;
  for (const TimelineSpan& s : m_timeline.spans) end = std::max(end, s.endS);
  return end > 0 ? end : 1.0;
}

void TimelineView::setTimeline(const TimelineData& timeline) {
  const bool sameLength = std::abs(fullEnd() - [&] {
                            double e = timeline.stepTimeS;
                            for (const TimelineSpan& s : timeline.spans) e = std::max(e, s.endS);
                            return e > 0 ? e : 1.0;
                          }()) < 1e-12;
  const bool zoomed = m_start > 0 || m_end < fullEnd();
  m_timeline = timeline;
  // Keep the user's zoom while the step length is unchanged; else show the whole step.
  if (!(zoomed && sameLength)) resetZoom();
  update();
}

void TimelineView::setVisibleRange(double startS, double endS) {
  const double full = fullEnd();
  const double minSpan = full * 1e-5;
  startS = std::clamp(startS, 0.0, full);
  endS = std::clamp(endS, 0.0, full);
  if (endS - startS < minSpan) endS = std::min(full, startS + minSpan);
  m_start = startS;
  m_end = endS;
  update();
}

void TimelineView::resetZoom() {
  m_start = 0;
  m_end = fullEnd();
  update();
}

void TimelineView::zoomIn() { zoomAround(0.5 * (m_start + m_end), 0.5); }
void TimelineView::zoomOut() { zoomAround(0.5 * (m_start + m_end), 2.0); }

void TimelineView::zoomAround(double centreS, double factor) {
  const double a = centreS - (centreS - m_start) * factor;
  const double b = centreS + (m_end - centreS) * factor;
  const double full = fullEnd();
  if (b - a >= full) {
    resetZoom();
    return;
  }
  double shift = 0;
  if (a < 0) shift = -a;
  if (b > full) shift = full - b;
  setVisibleRange(a + shift, b + shift);
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  paintTo(p, rect());
}

void TimelineView::setStale(bool stale) {
  if (stale == m_stale) return;
  m_stale = stale;
  update();
}

QString TimelineView::spanTextAt(const QPointF& pos) const {
  const int lanes = static_cast<int>(2 * m_timeline.ranks.size());
  const QRect r = rect();
  const QRectF plot(r.left() + kLabelWidth, r.top() + kHeader, r.width() - kLabelWidth - 12,
                    r.height() - kHeader - kAxis);
  if (lanes == 0 || !plot.contains(pos) || plot.width() <= 0) return {};
  const double laneH = plot.height() / lanes;
  const int lane = std::clamp(static_cast<int>((pos.y() - plot.top()) / laneH), 0, lanes - 1);
  const double t = m_start + (pos.x() - plot.left()) / plot.width() * (m_end - m_start);
  // Within a pixel of the cursor: a span narrower than a pixel is still drawn one pixel wide.
  const double slack = (m_end - m_start) / plot.width();
  for (const TimelineSpan& s : m_timeline.spans) {
    if (s.lane != lane || t < s.startS - slack || t > s.endS + slack) continue;
    return QStringLiteral("%1: %2 - %3 ms (%4 ms), rank %5 %6")
        .arg(QString::fromStdString(s.name))
        .arg(1e3 * s.startS, 0, 'f', 3)
        .arg(1e3 * s.endS, 0, 'f', 3)
        .arg(1e3 * (s.endS - s.startS), 0, 'f', 3)
        .arg(m_timeline.ranks[static_cast<std::size_t>(lane / 2)])
        .arg(lane % 2 == 0 ? QStringLiteral("compute") : QStringLiteral("comm"));
  }
  return {};
}

bool TimelineView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const QString text = spanTextAt(help->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(e);
}

QString TimelineView::title() const {
  QString t =
      QStringLiteral("Timeline of one step at %1 GPUs (event simulator)").arg(m_timeline.gpus);
  if (m_stale) t = QStringLiteral("Not updated (the scenario does not validate): ") + t;
  if (m_timeline.error.empty()) {
    t += QStringLiteral(": %1 ms").arg(1e3 * m_timeline.stepTimeS, 0, 'f', 2);
    t += rankNote(m_timeline);
  }
  return t;
}

void TimelineView::paintTo(QPainter& p, const QRect& rect) const {
  p.save();
  p.setRenderHint(QPainter::Antialiasing, false);
  p.fillRect(rect, Qt::white);
  QFont font = p.font();
  font.setPointSizeF(std::max(7.0, font.pointSizeF()));
  p.setFont(font);
  const QFontMetrics fm(font);

  QFont titleFont = font;
  titleFont.setBold(true);
  p.setFont(titleFont);
  if (m_stale) p.setPen(QColor(192, 57, 43));
  const QString title = this->title();
  p.drawText(QRect(rect.left() + 8, rect.top() + 4, rect.width() - 16, 20),
             Qt::AlignLeft | Qt::AlignVCenter, title);
  p.setPen(Qt::black);
  p.setFont(font);
  if (!m_timeline.error.empty()) {
    p.setPen(QColor(192, 57, 43));
    p.drawText(QRect(rect.left() + 8, rect.top() + 28, rect.width() - 16, rect.height() - 36),
               Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
               QString::fromStdString(m_timeline.error));
    p.restore();
    return;
  }
  const int lanes = static_cast<int>(2 * m_timeline.ranks.size());
  if (lanes == 0) {
    p.restore();
    return;
  }
  const QRect plot(rect.left() + kLabelWidth, rect.top() + kHeader, rect.width() - kLabelWidth - 12,
                   rect.height() - kHeader - kAxis);
  const double laneH = static_cast<double>(plot.height()) / lanes;
  const double span = m_end - m_start;
  const auto xOf = [&](double t) { return plot.left() + (t - m_start) / span * plot.width(); };

  // Legend.
  int lx = rect.left() + 8;
  const int ly = rect.top() + 26;
  std::vector<std::pair<QString, QColor>> legend = {{"forward", QColor(86, 180, 233)},
                                                    {"backward", QColor(0, 114, 178)},
                                                    {"optimizer", QColor(0, 158, 115)},
                                                    {"bucket all-reduce", QColor(230, 159, 0)},
                                                    {"other collective", QColor(204, 121, 167)}};
  // The grey spans (DDP's gradient copies into and out of the buckets, ...) get an entry when
  // drawn (issue 19 item 7), named by the first of them.
  for (const TimelineSpan& s : m_timeline.spans) {
    if (s.kind == TimelineSpan::Kind::kOther) {
      legend.emplace_back(QStringLiteral("other (e.g. ") + QString::fromStdString(s.name) + ")",
                          spanColour(s));
      break;
    }
  }
  for (const auto& [name, colour] : legend) {
    p.fillRect(lx, ly + 3, 12, 10, colour);
    p.setPen(Qt::black);
    p.drawText(lx + 16, ly + 12, name);
    lx += 16 + fm.horizontalAdvance(name) + 14;
  }

  // Lanes.
  for (int l = 0; l < lanes; ++l) {
    const QRectF lane(plot.left(), plot.top() + l * laneH, plot.width(), laneH);
    if (l % 4 < 2) p.fillRect(lane, QColor(246, 246, 246));
    const int rank = m_timeline.ranks[static_cast<std::size_t>(l / 2)];
    p.setPen(Qt::black);
    p.drawText(QRectF(rect.left() + 4, lane.top(), kLabelWidth - 8, laneH),
               Qt::AlignRight | Qt::AlignVCenter,
               QStringLiteral("rank %1 %2")
                   .arg(rank)
                   .arg(l % 2 == 0 ? QStringLiteral("compute") : QStringLiteral("comm")));
  }
  p.setClipRect(plot);
  for (const TimelineSpan& s : m_timeline.spans) {
    if (s.endS < m_start || s.startS > m_end) continue;
    const double x0 = xOf(s.startS);
    const double x1 = std::max(xOf(s.endS), x0 + 1.0);
    const QRectF box(x0, plot.top() + s.lane * laneH + 2, x1 - x0, laneH - 4);
    const QColor c = spanColour(s);
    p.fillRect(box, c);
    if (box.width() > 6) {
      p.setPen(c.darker(140));
      p.drawRect(box);
    }
    const QString label = QString::fromStdString(s.name);
    if (box.width() > fm.horizontalAdvance(label) + 6) {
      p.setPen(s.kind == TimelineSpan::Kind::kBackward ? Qt::white : Qt::black);
      p.drawText(box, Qt::AlignCenter, label);
    }
  }
  p.setClipping(false);

  // Time axis (ms).
  p.setPen(Qt::black);
  p.drawLine(plot.bottomLeft(), plot.bottomRight());
  const double stepMs = niceStep(1e3 * span, std::max(2, plot.width() / 110));
  for (double t = std::ceil(1e3 * m_start / stepMs) * stepMs; t <= 1e3 * m_end + 1e-12;
       t += stepMs) {
    const double x = xOf(t * 1e-3);
    p.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 4));
    p.drawText(QRectF(x - 50, plot.bottom() + 5, 100, kAxis - 6), Qt::AlignHCenter | Qt::AlignTop,
               QString::number(t, 'g', 6) + QStringLiteral(" ms"));
  }
  p.restore();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const int plotW = width() - kLabelWidth - 12;
  if (plotW <= 0) return;
  const double frac = std::clamp((event->position().x() - kLabelWidth) / plotW, 0.0, 1.0);
  const double centre = m_start + frac * (m_end - m_start);
  zoomAround(centre, event->angleDelta().y() > 0 ? 0.8 : 1.25);
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  m_dragX = static_cast<int>(event->position().x());
  m_dragStart = m_start;
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (m_dragX < 0 || !(event->buttons() & Qt::LeftButton)) return;
  const int plotW = width() - kLabelWidth - 12;
  if (plotW <= 0) return;
  const double span = m_end - m_start;
  double a = m_dragStart - (event->position().x() - m_dragX) / plotW * span;
  a = std::clamp(a, 0.0, fullEnd() - span);
  setVisibleRange(a, a + span);
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent*) { resetZoom(); }

}  // namespace ddpsim::gui
