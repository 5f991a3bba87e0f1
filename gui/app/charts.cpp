#include "gui/app/charts.hpp"

#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QLineSeries>
#include <QLocale>
#include <QLogValueAxis>
#include <QPen>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QStringList>
#include <QValueAxis>
#include <QXYSeries>
#include <algorithm>
#include <cmath>
#include <iterator>

#include "gui/models/number_format.hpp"
#include "gui/models/series.hpp"
#include "model/units.hpp"

namespace ddpsim::gui {

namespace {

// Colour-blind-safe palette (Okabe-Ito).
const QColor kBlue(0, 114, 178);
const QColor kOrange(230, 159, 0);
const QColor kGreen(0, 158, 115);
const QColor kVermillion(213, 94, 0);
const QColor kSky(86, 180, 233);
const QColor kPurple(204, 121, 167);
const QColor kYellow(240, 228, 66);
const QColor kGrey(150, 150, 150);

QString elide(const std::string& s, int n = 140) {
  QString q = QString::fromStdString(s);
  return q.size() > n ? q.left(n - 1) + QChar(0x2026) : q;
}

// `text` as HTML in lines of at most about `columns` characters, broken between words: Qt elides
// a chart title's lines that are wider than the chart, it does not wrap them.
QString wrapped(const QString& text, int columns) {
  QStringList lines;
  QString line;
  for (const QString& word : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
    if (!line.isEmpty() && line.size() + 1 + word.size() > columns) {
      lines << line.toHtmlEscaped();
      line.clear();
    }
    line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
  }
  if (!line.isEmpty()) lines << line.toHtmlEscaped();
  return lines.join(QStringLiteral("<br>"));
}

QLogValueAxis* gpuAxisFor(const SweepResult& r) {
  auto* x = new QLogValueAxis;
  x->setBase(2);
  x->setLabelFormat(QStringLiteral("%.0f"));  // localized numbers need a precision: "1,024"
  x->setTitleText(QStringLiteral("GPUs"));
  int lo = 1, hi = 2;
  if (!r.points.empty()) {
    lo = r.points.front().gpus;
    hi = std::max(r.points.back().gpus, lo * 2);
  }
  x->setRange(lo / 1.25, hi * 1.25);
  x->setMinorTickCount(0);
  return x;
}

QLineSeries* lineOf(const QList<QPointF>& pts, const QString& name, const QColor& c,
                    Qt::PenStyle style = Qt::SolidLine, qreal width = 2) {
  auto* s = new QLineSeries;
  s->setName(name);
  s->append(pts);
  QPen pen(c);
  pen.setWidthF(width);
  pen.setStyle(style);
  s->setPen(pen);
  return s;
}

// A pinned scenario's line: thinner, dash-dot and half transparent, so it never reads as the
// current scenario's (issue 19 item 7); its legend entry starts with "pinned".
QLineSeries* pinnedLine(const QList<QPointF>& pts, const QString& name, QColor c) {
  c.setAlpha(150);
  return lineOf(pts, QStringLiteral("pinned \u2012 ") + name, c, Qt::DashDotLine, 1.6);
}

void attach(QChart* chart, QAbstractSeries* s, QAbstractAxis* x, QAbstractAxis* y) {
  // A line with no points would still take a legend entry (issue 19 item 7): not drawn.
  if (auto* xy = qobject_cast<QXYSeries*>(s); xy && xy->count() == 0) {
    delete s;
    return;
  }
  chart->addSeries(s);
  s->attachAxis(x);
  s->attachAxis(y);
}

double maxY(const QList<QPointF>& pts) {
  double m = 0;
  for (const QPointF& p : pts) m = std::max(m, p.y());
  return m;
}

QList<QPointF> positive(const QList<QPointF>& pts) {
  QList<QPointF> out;
  for (const QPointF& p : pts) {
    if (p.y() > 0 && std::isfinite(p.y())) out.append(p);
  }
  return out;
}

// A log axis over the positive y of `a` and `b`, labelled in one number format (issue 41 item 3:
// "$1,000,000" on a cost axis, not "1e+06"; the chart's localized numbers add the separators).
QLogValueAxis* logAxis(const QList<QPointF>& a, const QList<QPointF>& b, const QString& title,
                       const QString& prefix = {}) {
  double lo = 1e300, hi = 0;
  for (const auto* l : {&a, &b}) {
    for (const QPointF& p : *l) {
      if (p.y() > 0) {
        lo = std::min(lo, p.y());
        hi = std::max(hi, p.y());
      }
    }
  }
  auto* y = new QLogValueAxis;
  y->setBase(10);
  y->setLabelFormat(QStringLiteral("%.0f"));
  y->setTitleText(title);
  if (hi > 0) {
    const double from = std::pow(10, std::floor(std::log10(lo)));
    const double to = std::pow(10, std::ceil(std::log10(hi)));
    y->setRange(from, to);
    y->setLabelFormat(axisLabelFormat(from, to, prefix));
  }
  y->setMinorTickCount(8);
  return y;
}

QString firstError(const SweepResult& r) {
  if (!r.error.empty()) return elide(r.error);
  for (const StepPoint& p : r.points) {
    if (!p.ok()) return elide(p.error);
  }
  return {};
}

bool anyOk(const SweepResult& r) {
  return std::any_of(r.points.begin(), r.points.end(), [](const StepPoint& p) { return p.ok(); });
}

void setTitle(QChart* chart, const QString& title, const SweepResult& r) {
  QString t = title;
  // The model and hardware being predicted now (the scenario's `name` would keep naming the
  // model it was written for after the model is edited: issue 19 item 5).
  if (!r.subject.empty()) t += QStringLiteral(" \u2014 ") + elide(r.subject, 80);
  const QString err = firstError(r);
  if (!err.isEmpty())
    t += QStringLiteral("<br><font color=\"#c0392b\">") + err.toHtmlEscaped() +
         QStringLiteral("</font>");
  chart->setTitle(t);
}

// The points of `series` (x = GPUs) whose configuration does not fit in GPU memory, marked in
// red on the chart: they are predicted, but no one can run them (issue 19).
void markNotFitting(QChart* chart, const SweepResult& r, const QList<QPointF>& series,
                    QAbstractAxis* x, QAbstractAxis* y) {
  const QList<int> bad = gpusNotFitting(r);
  QList<QPointF> at;
  for (const QPointF& p : series) {
    if (bad.contains(static_cast<int>(std::lround(p.x())))) at.append(p);
  }
  if (at.isEmpty()) return;
  auto* m = new QScatterSeries;
  m->setName(QStringLiteral("does not fit in GPU memory (%1 points)").arg(at.size()));
  m->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  m->setColor(QColor(192, 57, 43));
  m->setBorderColor(Qt::white);
  m->setMarkerSize(11);
  m->append(at);
  attach(chart, m, x, y);
}

// The scenario's other sweep axes (strategy, bucket cap, ...): one total-step-time line each.
double drawVariants(QChart* chart, const SweepResult& r, QAbstractAxis* x, QAbstractAxis* y) {
  static const QColor kVariantColours[] = {kVermillion, kPurple, kSky,    kGreen,
                                           kOrange,     kBlue,   kYellow, kGrey};
  double top = 0;
  std::size_t i = 0;
  for (const VariantSeries& v : r.variants) {
    const QList<QPointF> pts = positive(stepTimeSeries(v.points));
    const QColor c = kVariantColours[i++ % std::size(kVariantColours)];
    QString name = QStringLiteral("sweep: ") + QString::fromStdString(v.label);
    const auto over = std::count_if(v.points.begin(), v.points.end(),
                                    [](const StepPoint& p) { return p.ok() && !p.fitsInMemory; });
    if (over > 0) name += QStringLiteral(" (does not fit at %1 of %2)").arg(over).arg(pts.size());
    attach(chart, lineOf(pts, name, c, Qt::DashLine, 2.5), x, y);
    top = std::max(top, maxY(pts));
  }
  return top;
}

struct StepPart {
  StepComponent c;
  const char* name;
  QColor colour;
};
const StepPart kStepParts[] = {{StepComponent::kCompute, "compute (forward + backward)", kBlue},
                               {StepComponent::kExposedComm, "exposed communication", kOrange},
                               {StepComponent::kOptimizer, "optimizer", kGreen},
                               {StepComponent::kOther, "other", kGrey}};

void buildStep(QChart* chart, const SweepResult& r, const ChartOverlay& o) {
  setTitle(chart,
           QStringLiteral("Step time vs GPUs (%1%2)")
               .arg(QString::fromStdString(r.strategy))
               .arg(o.logStep ? QStringLiteral(", log scale") : QString()),
           r);
  if (!anyOk(r)) return;
  auto* x = gpuAxisFor(r);
  chart->addAxis(x, Qt::AlignBottom);
  QAbstractAxis* yAxis = nullptr;
  QValueAxis* linear = nullptr;
  double top = 0;
  if (o.logStep) {
    // Each component its own line on a log axis (areas cannot stack on one).
    QList<QPointF> all = positive(stepTimeSeries(r));
    for (const StepPart& part : kStepParts) all += positive(stepSeries(r, part.c));
    if (o.pinned && anyOk(*o.pinned)) all += positive(stepTimeSeries(*o.pinned));
    for (const VariantSeries& v : r.variants) all += positive(stepTimeSeries(v.points));
    auto* y = logAxis(all, {}, QStringLiteral("time per step (ms, log scale)"));
    chart->addAxis(y, Qt::AlignLeft);
    yAxis = y;
    attach(chart, lineOf(positive(stepTimeSeries(r)), QStringLiteral("step time"), Qt::black), x,
           y);
    for (const StepPart& part : kStepParts) {
      attach(chart,
             lineOf(positive(stepSeries(r, part.c)), QString::fromLatin1(part.name), part.colour,
                    Qt::SolidLine, 2),
             x, y);
    }
  } else {
    linear = new QValueAxis;
    linear->setTitleText(QStringLiteral("time per step (ms)"));
    linear->setLabelFormat(QStringLiteral("%.0f"));
    chart->addAxis(linear, Qt::AlignLeft);
    yAxis = linear;
    QLineSeries* below = nullptr;
    for (const StepPart& part : kStepParts) {
      // A component that is zero everywhere (no communication on one GPU, no remainder) has no
      // area and no legend entry; compute always has.
      if (part.c != StepComponent::kCompute && maxY(stepSeries(r, part.c)) < 1e-6) continue;
      auto* upper = new QLineSeries;
      upper->append(stackedStepSeries(r, part.c));
      auto* area =
          new QAreaSeries(upper, below ? lineOf(below->points(), {}, part.colour) : nullptr);
      upper->setParent(area);
      if (area->lowerSeries()) area->lowerSeries()->setParent(area);
      area->setName(QString::fromLatin1(part.name));
      area->setColor(part.colour);
      area->setBorderColor(part.colour.darker(120));
      attach(chart, area, x, linear);
      below = upper;
      top = std::max(top, maxY(upper->points()));
    }
  }
  if (o.pinned && anyOk(*o.pinned)) {
    const QList<QPointF> pinned = positive(stepTimeSeries(*o.pinned));
    attach(chart, pinnedLine(pinned, o.pinnedLabel + QStringLiteral(": step time"), Qt::black), x,
           yAxis);
    top = std::max(top, maxY(pinned));
  }
  top = std::max(top, drawVariants(chart, r, x, yAxis));
  if (!o.measured.empty()) {
    auto* m = new QScatterSeries;
    m->setName(QStringLiteral("measured (results/validation-*.json)"));
    m->setColor(kVermillion);
    m->setMarkerSize(9);
    for (const MeasuredPoint& p : o.measured) {
      if (p.stepTimeS <= 0) continue;
      m->append(p.gpus, 1e3 * p.stepTimeS);
      top = std::max(top, 1e3 * p.stepTimeS);
    }
    attach(chart, m, x, yAxis);
  }
  markNotFitting(chart, r, stepTimeSeries(r), x, yAxis);
  if (linear) {
    linear->setRange(0, top * 1.08);
    linear->applyNiceNumbers();
  }
}

void buildScaling(QChart* chart, const SweepResult& r, const ChartOverlay& o) {
  setTitle(chart, QStringLiteral("Scaling efficiency and throughput vs GPUs"), r);
  if (!anyOk(r)) return;
  // Above 100% is explained where it is drawn (the buyer's review, defect 14).
  if (const QString note = superlinearNote(r); !note.isEmpty())
    chart->setTitle(chart->title() + QStringLiteral("<br><small>") + wrapped(note, 100) +
                    QStringLiteral("</small>"));
  auto* x = gpuAxisFor(r);
  auto* y = new QValueAxis;
  y->setTitleText(QStringLiteral("scaling efficiency (%)"));
  y->setLabelFormat(QStringLiteral("%.0f"));
  const QList<QPointF> thr = throughputSeries(r);
  QList<QPointF> pinnedThr;
  if (o.pinned) pinnedThr = positive(throughputSeries(*o.pinned));
  auto* y2 = logAxis(positive(thr), pinnedThr, QStringLiteral("throughput (samples/s)"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  chart->addAxis(y2, Qt::AlignRight);
  const QList<QPointF> weak = weakEfficiencySeries(r);
  const QList<QPointF> strong = strongEfficiencySeries(r);
  attach(chart, lineOf(weak, QStringLiteral("weak scaling (per-GPU batch fixed)"), kBlue), x, y);
  attach(chart, lineOf(strong, QStringLiteral("strong scaling (global batch fixed)"), kPurple), x,
         y);
  attach(chart, lineOf(positive(thr), QStringLiteral("throughput"), kGreen, Qt::SolidLine, 2.5), x,
         y2);
  markNotFitting(chart, r, weak, x, y);
  double top = std::max(maxY(weak), maxY(strong));
  if (o.pinned && anyOk(*o.pinned)) {
    const QList<QPointF> pw = weakEfficiencySeries(*o.pinned);
    attach(chart, pinnedLine(pw, QStringLiteral("weak efficiency"), kBlue), x, y);
    attach(chart, pinnedLine(pinnedThr, QStringLiteral("throughput"), kGreen), x, y2);
    top = std::max(top, maxY(pw));
  }
  // Ticks every 20%: 0..100 (the 1-GPU point is 100% exactly), or 0..120 when a point is
  // superlinear; 0..105 in five ticks read 0/26/53/79/105 (issue 19 item 7).
  const double upper = 20 * std::ceil((std::max(100.0, top) - 1e-9) / 20);
  y->setRange(0, upper);
  y->setTickCount(static_cast<int>(upper / 20) + 1);
}

void buildMemory(QChart* chart, const SweepResult& r, const ChartOverlay&) {
  QString title = QStringLiteral("Memory per GPU by strategy at %1 GPUs").arg(r.currentGpus);
  setTitle(chart, title, r);
  if (!r.error.empty() || r.memory.empty()) return;
  struct Part {
    const char* name;
    double StrategyMemory::*field;
    QColor colour;
  };
  const Part parts[] = {{"parameters", &StrategyMemory::paramsBytes, kBlue},
                        {"gradients", &StrategyMemory::gradsBytes, kSky},
                        {"optimizer states", &StrategyMemory::optimizerBytes, kGreen},
                        {"activations", &StrategyMemory::activationBytes, kOrange},
                        {"buffers", &StrategyMemory::bufferBytes, kPurple},
                        {"CUDA context + NCCL", &StrategyMemory::runtimeBytes, kGrey},
                        {"fragmentation", &StrategyMemory::fragmentationBytes, kYellow}};
  auto* bars = new QStackedBarSeries;
  QStringList categories;
  double top = r.capacityBytes / kGiB;
  for (const StrategyMemory& m : r.memory) {
    QString label = QString::fromStdString(m.strategy);
    if (m.strategy == r.strategy) label += QStringLiteral(" (current)");
    if (!m.error.empty()) label += QStringLiteral(" (n/a)");
    categories << label;
    top = std::max(top, m.totalBytes() / kGiB);
  }
  for (const Part& part : parts) {
    auto* set = new QBarSet(QString::fromLatin1(part.name));
    set->setColor(part.colour);
    set->setBorderColor(part.colour.darker(130));
    for (const StrategyMemory& m : r.memory)
      set->append(m.error.empty() ? m.*part.field / kGiB : 0);
    bars->append(set);
  }
  bars->setBarWidth(0.6);
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  auto* y = new QValueAxis;
  y->setTitleText(QStringLiteral("memory per GPU (GiB)"));
  y->setRange(0, top * 1.1);
  y->applyNiceNumbers();
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  attach(chart, bars, x, y);
  // The capacity line spans the whole category axis: a hidden value axis from -0.5 to n - 0.5.
  auto* xLine = new QValueAxis;
  xLine->setRange(-0.5, static_cast<double>(r.memory.size()) - 0.5);
  xLine->setVisible(false);
  chart->addAxis(xLine, Qt::AlignTop);
  auto* cap = lineOf({QPointF(-0.5, r.capacityBytes / kGiB),
                      QPointF(static_cast<double>(r.memory.size()) - 0.5, r.capacityBytes / kGiB)},
                     QStringLiteral("GPU memory (%1 GiB)").arg(r.capacityBytes / kGiB, 0, 'f', 1),
                     kVermillion, Qt::DashLine, 2.5);
  attach(chart, cap, xLine, y);
}

void buildCost(QChart* chart, const SweepResult& r, const ChartOverlay& o) {
  setTitle(chart, QStringLiteral("Time to train and cost vs GPUs, with the planner's Pareto front"),
           r);
  if (!anyOk(r)) return;
  const bool target = !r.plan.byThroughput;
  const QString timeLabel = timeToTrainLabel(r);
  const QList<QPointF> time = positive(timeToTrainSeries(r));
  const QList<QPointF> ideal = positive(timeWithoutFailuresSeries(r));
  const QList<QPointF> cost = positive(costSeries(r));
  QList<QPointF> front, chosen;
  // Plan metrics are seconds: time to train or, without a target, time per million samples;
  // both charted in hours.
  const double scale = 1.0 / 3600.0;
  for (const PlanPointView& p : r.plan.pareto) front.append(QPointF(p.gpus, p.timeMetric * scale));
  if (r.plan.chosen) chosen.append(QPointF(r.plan.chosen->gpus, r.plan.chosen->timeMetric * scale));
  QList<QPointF> pinned;
  if (o.pinned && anyOk(*o.pinned)) pinned = positive(timeToTrainSeries(*o.pinned));
  // Plan limits drawn as horizontal lines: the deadline on the time axis (hours, with a target)
  // and the budget on the cost axis (USD, when priced and targeted).
  const double lo = r.points.front().gpus / 1.25;
  const double hi = std::max(r.points.back().gpus, r.points.front().gpus * 2) * 1.25;
  QList<QPointF> deadline, budget;
  if (target && r.plan.deadlineHours)
    deadline = {QPointF(lo, *r.plan.deadlineHours), QPointF(hi, *r.plan.deadlineHours)};
  const bool costInUsd = costLabel(r).contains(QStringLiteral("USD"));
  if (costInUsd && r.plan.budgetUsd)
    budget = {QPointF(lo, *r.plan.budgetUsd), QPointF(hi, *r.plan.budgetUsd)};
  auto* x = gpuAxisFor(r);
  chart->addAxis(x, Qt::AlignBottom);
  // An axis with nothing on it would show Qt's default range, a lone "1" (issue 19 item 7).
  QLogValueAxis* y = nullptr;
  if (!(time + front + pinned).isEmpty()) {
    y = logAxis(time, front + pinned + deadline + ideal, timeLabel);
    chart->addAxis(y, Qt::AlignLeft);
  }
  QLogValueAxis* y2 = nullptr;
  if (!cost.isEmpty()) {
    y2 = logAxis(cost, budget, costLabel(r), costInUsd ? QStringLiteral("$") : QString());
    chart->addAxis(y2, Qt::AlignRight);
    attach(chart, lineOf(cost, costLabel(r), kGreen), x, y2);
  }
  if (!y) return;
  // The curve is the panel's configuration, the squares the planner's (the buyer's review,
  // defect 9: the curve's legend did not say which strategy it is).
  attach(
      chart,
      lineOf(time,
             timeLabel + QStringLiteral(", the panel's %1").arg(QString::fromStdString(r.strategy)),
             kBlue),
      x, y);
  // Reliability: the same without failures and checkpoints, and the ETTR that separates them.
  if (!ideal.isEmpty()) {
    attach(chart,
           withDetail(lineOf(ideal, QStringLiteral("without failures (%1)").arg(ettrRangeText(r)),
                             kBlue, Qt::DotLine, 1.5),
                      QStringLiteral("without failures (%1)").arg(ettrText(r))),
           x, y);
  }
  if (!deadline.isEmpty()) {
    attach(chart,
           lineOf(deadline, QStringLiteral("deadline %1 h").arg(*r.plan.deadlineHours), kVermillion,
                  Qt::DashLine, 1.5),
           x, y);
  }
  if (y2 && !budget.isEmpty()) {
    attach(chart,
           lineOf(budget, QStringLiteral("budget %1").arg(formatMoney(*r.plan.budgetUsd)),
                  kGreen.darker(140), Qt::DashLine, 1.5),
           x, y2);
  }
  markNotFitting(chart, r, time, x, y);
  if (!pinned.isEmpty()) {
    attach(chart, pinnedLine(pinned, timeLabel, kBlue), x, y);
  }
  if (!front.isEmpty()) {
    auto* f = new QScatterSeries;
    f->setName(QStringLiteral("planner Pareto front (%1 of %2 feasible)")
                   .arg(r.plan.pareto.size())
                   .arg(r.plan.feasible));
    f->setColor(kOrange);
    f->setMarkerSize(10);
    f->append(front);
    attach(chart, f, x, y);
  }
  if (!chosen.isEmpty()) {
    auto* c = new QScatterSeries;
    c->setName(planPointLegend(*r.plan.chosen, r.plan.byThroughput));
    withDetail(c, planPointLabel(*r.plan.chosen, r.plan.byThroughput));
    c->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    c->setColor(kVermillion);
    c->setMarkerSize(15);
    c->append(chosen);
    attach(chart, c, x, y);
  }
}

}  // namespace

QString chartKindName(ChartKind k) {
  switch (k) {
    case ChartKind::kStep:
      return QStringLiteral("step");
    case ChartKind::kScaling:
      return QStringLiteral("scaling");
    case ChartKind::kMemory:
      return QStringLiteral("memory");
    case ChartKind::kCost:
      return QStringLiteral("cost");
    case ChartKind::kTimeline:
      return QStringLiteral("timeline");
  }
  return {};
}

std::optional<ChartKind> chartKindFromName(const QString& name) {
  for (ChartKind k : {ChartKind::kStep, ChartKind::kScaling, ChartKind::kMemory, ChartKind::kCost,
                      ChartKind::kTimeline}) {
    if (chartKindName(k) == name) return k;
  }
  return std::nullopt;
}

void clearChart(QChart* chart) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) {
    chart->removeAxis(a);
    delete a;
  }
}

void buildChart(ChartKind k, QChart* chart, const SweepResult& r, const ChartOverlay& overlay) {
  clearChart(chart);
  chart->legend()->setAlignment(Qt::AlignBottom);
  // Axis labels in the window's one number format: thousands separators, "$" on money axes.
  chart->setLocale(QLocale(QLocale::English, QLocale::UnitedStates));
  chart->setLocalizeNumbers(true);
  switch (k) {
    case ChartKind::kStep:
      buildStep(chart, r, overlay);
      break;
    case ChartKind::kScaling:
      buildScaling(chart, r, overlay);
      break;
    case ChartKind::kMemory:
      buildMemory(chart, r, overlay);
      break;
    case ChartKind::kCost:
      buildCost(chart, r, overlay);
      break;
    case ChartKind::kTimeline:
      break;
  }
}

}  // namespace ddpsim::gui
