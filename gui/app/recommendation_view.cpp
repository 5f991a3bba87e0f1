#include "gui/app/recommendation_view.hpp"

#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QLocale>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

#include "gui/app/charts.hpp"
#include "gui/app/hover_chart_view.hpp"
#include "gui/app/legend_fit.hpp"
#include "gui/app/stale_banner.hpp"
#include "gui/app/systems_table.hpp"
#include "gui/models/number_format.hpp"
#include "gui/models/series.hpp"
#include "model/units.hpp"

namespace ddpsim::gui {

namespace {

// The buyer's columns first (the buyer's review, defect 12: at 1280x800 "vs chosen / limited by"
// was the 16th column, off-screen), then the buyer's metrics (defect 14), then the knobs.
constexpr const char* kHeaders[] = {"system",
                                    "GPUs",
                                    "strategy",
                                    "time",
                                    "cost",
                                    "vs chosen / limited by",
                                    "GPU-hours",
                                    "MFU",
                                    "tokens/s/GPU",
                                    "steps to target",
                                    "tokens to target",
                                    "ETTR",
                                    "memory GiB",
                                    "micro-batch",
                                    "accumulation",
                                    "global batch",
                                    "bucket MiB",
                                    "hook",
                                    "error band"};
enum Column { kSteps = 9, kTokens = 10, kEttr = 11 };

bool byCost(const PlanView& p) { return p.objective == "cost" || p.objective == "gpu_hours"; }

// Time metric in words: time to train, or time per million samples without a target, in the
// unit that keeps its digits (never "0.00 h": issue 41 item 3).
QString timeText(const PlanPointView& p, bool byThroughput) {
  return formatHours(p.timeMetric / 3600.0) +
         (byThroughput ? QStringLiteral(" per 1M samples") : QString());
}

QString gpuHoursText(const PlanPointView& p, bool byThroughput) {
  return QStringLiteral("%1 GPU-h%2")
      .arg(formatNumber(p.gpuHoursMetric, 3))
      .arg(byThroughput ? QStringLiteral(" per 1M samples") : QString());
}

QString percent(double fraction) { return formatNumber(100 * fraction, 3) + QLatin1Char('%'); }

// The sizes searched, and whether the choice sits at an edge of them (more or fewer GPUs were
// not tried): "searched 1-1024 GPUs (the panel's max GPUs); the choice is the largest size".
QString searchText(const PlanView& plan) {
  if (plan.searchedGpus.empty()) return {};
  const int lo = plan.searchedGpus.front(), hi = plan.searchedGpus.back();
  QString t = lo == hi ? QStringLiteral("searched %1 GPUs").arg(lo)
                       : QStringLiteral("searched %1-%2 GPUs").arg(lo).arg(hi);
  if (plan.panelMaxGpus) t += QStringLiteral(" (up to the panel's max GPUs)");
  if (plan.chosen && lo != hi) {
    if (plan.chosen->gpus == hi) {
      t += QStringLiteral("; the choice is the largest size searched: raise max GPUs to try more");
    } else if (plan.chosen->gpus == lo) {
      t += QStringLiteral("; the choice is the smallest size searched");
    }
  }
  return t;
}

}  // namespace

RecommendationView::RecommendationView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  m_stale = new StaleBanner;
  layout->addWidget(m_stale);
  m_chosen = new QLabel;
  m_chosen->setObjectName(QStringLiteral("recommendationChosen"));
  m_chosen->setWordWrap(true);
  m_chosen->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_summary = new QLabel;
  m_summary->setObjectName(QStringLiteral("recommendationSummary"));
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // The chosen option's notes, in view (the review: "the notes hide in a tooltip").
  m_notes = new QLabel;
  m_notes->setObjectName(QStringLiteral("recommendationNotes"));
  m_notes->setWordWrap(true);
  m_notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_notes->setTextFormat(Qt::RichText);
  layout->addWidget(m_chosen);
  layout->addWidget(m_summary);
  layout->addWidget(m_notes);
  auto* split = new QSplitter(Qt::Vertical);
  m_systems = new SystemsTable;
  m_table = new QTableWidget(0, static_cast<int>(std::size(kHeaders)));
  m_table->setObjectName(QStringLiteral("recommendationTable"));
  QStringList headers;
  for (const char* h : kHeaders) headers << tr(h);
  m_table->setHorizontalHeaderLabels(headers);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setToolTip(tr("Double-click a row to load its configuration into the scenario"));
  connect(m_table, &QTableWidget::cellDoubleClicked, this,
          [this](int row, int) { requestLoad(row); });
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  m_chart = new HoverChartView(chart);
  m_chart->setObjectName(QStringLiteral("paretoChart"));
  m_chart->setRenderHint(QPainter::Antialiasing);
  m_chart->setMinimumHeight(250);  // the whole view fits at 1280x800 (defect 12)
  m_table->setMinimumHeight(90);
  split->addWidget(m_systems);
  split->addWidget(m_table);
  split->addWidget(m_chart);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 2);
  split->setStretchFactor(2, 3);
  split->setSizes({110, 240, 400});
  layout->addWidget(split, 1);
}

QString RecommendationView::chosenText() const { return m_chosen->text(); }

void RecommendationView::setStale(bool stale, const QString& pointer) {
  m_stale->setStale(stale, pointer);
  // The last valid plan stays readable but greyed; its rows cannot be loaded into a scenario it
  // no longer answers.
  for (QWidget* w : {static_cast<QWidget*>(m_table), static_cast<QWidget*>(m_systems),
                     static_cast<QWidget*>(m_chart)})
    w->setEnabled(!stale);
}

bool RecommendationView::isStale() const { return m_stale->isStale(); }
QString RecommendationView::summaryText() const { return m_summary->text(); }
QString RecommendationView::notesText() const { return m_notes->text(); }

void RecommendationView::setPlan(const PlanView& plan) {
  m_plan = plan;
  m_rows = plan.pareto;
  // Best first for the objective: time, or GPU-hours (cost orders like GPU-hours: one price).
  const bool cost = byCost(plan);
  std::stable_sort(m_rows.begin(), m_rows.end(), [cost](const auto& a, const auto& b) {
    return cost ? a.gpuHoursMetric < b.gpuHoursMetric : a.timeMetric < b.timeMetric;
  });
  if (!plan.error.empty()) {
    m_chosen->setText(tr("<b>No recommendation:</b> ") +
                      QString::fromStdString(plan.error).toHtmlEscaped());
  } else if (!plan.chosen) {
    QString t = tr("<b>Nothing is feasible:</b> ") +
                QString::fromStdString(plan.noneFeasibleReason).toHtmlEscaped();
    if (plan.nearest) {
      t += tr("<br><b>Nearest:</b> %1 GPUs%2, %3, %4")
               .arg(plan.nearest->gpus)
               .arg(plan.nearest->system.empty()
                        ? QString()
                        : QStringLiteral(" of ") +
                              QString::fromStdString(plan.nearest->system).toHtmlEscaped())
               .arg(QString::fromStdString(plan.nearest->strategy))
               .arg(QString::fromStdString(plan.nearestReason).toHtmlEscaped());
    }
    m_chosen->setText(t);
  } else {
    const PlanPointView& c = *plan.chosen;
    QString t = tr("<b>Recommended (minimises %1):</b> %2 GPUs%3, %4, micro-batch %5 x %6 "
                   "accumulation = global batch %7, bucket %8 MiB, hook %9: %10, %11")
                    .arg(QString::fromStdString(plan.objective))
                    .arg(c.gpus)
                    .arg(c.system.empty() ? QString()
                                          : QStringLiteral(" of ") +
                                                QString::fromStdString(c.system).toHtmlEscaped())
                    .arg(QString::fromStdString(c.strategy))
                    .arg(c.perGpuBatch)
                    .arg(c.gradAccumulation)
                    .arg(c.globalBatch)
                    .arg(c.bucketCapMb)
                    .arg(QString::fromStdString(c.commHook))
                    .arg(timeText(c, plan.byThroughput))
                    .arg(gpuHoursText(c, plan.byThroughput));
    if (c.costUsd) t += QStringLiteral(", ") + formatMoney(*c.costUsd);
    t += tr("; %1 GiB per GPU").arg(c.memoryBytes / kGiB, 0, 'f', 1);
    if (c.mfu > 0) t += tr(", MFU %1").arg(percent(c.mfu));
    if (c.tokensPerSPerGpu > 0)
      t += tr(", %1 tokens/s/GPU").arg(formatNumber(c.tokensPerSPerGpu, 4));
    if (!c.limitedBy.empty()) t += tr("; limited by %1").arg(QString::fromStdString(c.limitedBy));
    // The work to the target, so "1.4 h to train" can be checked (the buyer's review, defect
    // 14): steps x global batch x tokens per sample.
    if (c.stepsToTarget) {
      t += tr("<br>To the target: %1 steps x global batch %2")
               .arg(formatCount(*c.stepsToTarget))
               .arg(c.globalBatch);
      if (c.tokensPerSample > 1) {
        t += tr(" x %1 tokens per sample = %2 tokens")
                 .arg(formatNumber(static_cast<double>(c.tokensPerSample)))
                 .arg(formatCount(*c.tokensToTarget()));
      } else {
        t += tr(" = %1 samples").arg(formatCount(*c.tokensToTarget()));
      }
    }
    if (c.ettr) {
      t += tr("; ETTR %1: %2 of the wall-clock time trains, the time and cost include failures "
              "and checkpoints")
               .arg(*c.ettr, 0, 'f', 3)
               .arg(percent(*c.ettr));
    }
    if (c.band) {
      t += tr("<br>Error band of its class (published runs like it): %1")
               .arg(errorBandText(c.band).toHtmlEscaped());
    }
    if (plan.byThroughput)
      t += tr("<br>(no training target: planned by throughput, per million samples)");
    m_chosen->setText(t);
  }
  // The chosen option's notes (the planner keeps only the chosen prediction's), listed under the
  // summary: what the model assumed and why the option costs what it does.
  QString summary = planSummary(plan).toHtmlEscaped();
  if (const QString searched = searchText(plan); !searched.isEmpty())
    summary += QStringLiteral("; ") + searched.toHtmlEscaped();
  m_summary->setText(summary);
  QString notes;
  for (const std::string& w : plan.warnings) {
    notes += QStringLiteral("<li>") + QString::fromStdString(w).toHtmlEscaped() +
             QStringLiteral("</li>");
  }
  m_notes->setText(notes.isEmpty() ? QString()
                                   : tr("<small><b>Notes (%1):</b><ul style=\"margin: 0\">%2</ul>"
                                        "</small>")
                                         .arg(plan.warnings.size())
                                         .arg(notes));
  m_notes->setVisible(!notes.isEmpty());

  m_table->setRowCount(static_cast<int>(m_rows.size()));
  for (int i = 0; i < static_cast<int>(m_rows.size()); ++i) {
    const PlanPointView& p = m_rows[static_cast<std::size_t>(i)];
    QString vs = plan.chosen ? versusChosen(p, *plan.chosen) : QString();
    if (!p.limitedBy.empty())
      vs += QStringLiteral("; limited by ") + QString::fromStdString(p.limitedBy);
    const std::optional<double> tokens = p.tokensToTarget();
    const QStringList cells = {
        QString::fromStdString(p.system),
        QString::number(p.gpus),
        QString::fromStdString(p.strategy),
        timeText(p, plan.byThroughput),
        p.costUsd ? formatMoney(*p.costUsd) : QStringLiteral("-"),
        vs,
        gpuHoursText(p, plan.byThroughput),
        p.mfu > 0 ? percent(p.mfu) : QStringLiteral("-"),
        p.tokensPerSPerGpu > 0 ? formatNumber(p.tokensPerSPerGpu, 4) : QStringLiteral("-"),
        p.stepsToTarget ? formatCount(*p.stepsToTarget) : QStringLiteral("-"),
        tokens ? formatCount(*tokens) : QStringLiteral("-"),
        p.ettr ? QString::number(*p.ettr, 'f', 3) : QStringLiteral("-"),
        QString::number(p.memoryBytes / kGiB, 'f', 1),
        QString::number(p.perGpuBatch),
        QString::number(p.gradAccumulation),
        QString::number(p.globalBatch),
        QString::number(p.bucketCapMb),
        QString::fromStdString(p.commHook),
        errorBandText(p.band)};
    for (int col = 0; col < cells.size(); ++col) {
      auto* item = new QTableWidgetItem(cells[col]);
      if (vs.startsWith(QStringLiteral("chosen"))) {
        QFont f = item->font();
        f.setBold(true);
        item->setFont(f);
      }
      m_table->setItem(i, col, item);
    }
  }
  // Steps and tokens only with a target; ETTR only with a reliability section.
  const bool anyEttr = std::any_of(m_rows.begin(), m_rows.end(),
                                   [](const PlanPointView& p) { return p.ettr.has_value(); });
  m_table->setColumnHidden(kSteps, plan.byThroughput);
  m_table->setColumnHidden(kTokens, plan.byThroughput);
  m_table->setColumnHidden(kEttr, !anyEttr);
  const bool sequence = !m_rows.empty() && m_rows.front().tokensPerSample > 1;
  m_table->horizontalHeaderItem(kTokens)->setText(sequence ? tr("tokens to target")
                                                           : tr("samples to target"));
  m_systems->setPlan(plan);
  m_systems->setVisible(plan.systems.size() > 1);
  buildChart();
}

int RecommendationView::columnOf(const QString& header) const {
  for (int c = 0; c < m_table->columnCount(); ++c) {
    if (m_table->horizontalHeaderItem(c)->text() == header) return c;
  }
  return -1;
}

void RecommendationView::requestLoad(int row) {
  if (isStale() || row < 0 || row >= static_cast<int>(m_rows.size())) return;
  emit loadRequested(m_rows[static_cast<std::size_t>(row)]);
}

void RecommendationView::requestLoadChosen() {
  if (isStale() || !m_plan.chosen) return;
  emit loadRequested(*m_plan.chosen);
}

void RecommendationView::buildChart() {
  QChart* chart = m_chart->chart();
  clearChart(chart);
  chart->legend()->setAlignment(Qt::AlignBottom);
  const bool tp = m_plan.byThroughput;
  const bool usd = m_plan.chosen && m_plan.chosen->costUsd.has_value();
  chart->setTitle(tr("Pareto front: %1 vs %2 (click a point to load it)")
                      .arg(usd ? tr("cost") : tr("GPU-hours"))
                      .arg(tp ? tr("time per million samples") : tr("time to train")));
  if (m_rows.empty()) return;
  const auto xOf = [](const PlanPointView& p) { return p.timeMetric / 3600; };
  const auto yOf = [usd](const PlanPointView& p) {
    return usd && p.costUsd ? *p.costUsd : p.gpuHoursMetric;
  };
  std::vector<PlanPointView> byTime = m_rows;
  std::sort(byTime.begin(), byTime.end(),
            [](const auto& a, const auto& b) { return a.timeMetric < b.timeMetric; });
  auto* line = new QLineSeries;
  line->setName(tr("Pareto front (%1 point%2)")
                    .arg(byTime.size())
                    .arg(byTime.size() == 1 ? QString() : QStringLiteral("s")));
  auto* dots = new QScatterSeries;
  dots->setName(tr("front point: click to load"));
  dots->setColor(QColor(230, 159, 0));
  dots->setMarkerSize(11);
  double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
  for (const PlanPointView& p : byTime) {
    line->append(xOf(p), yOf(p));
    dots->append(xOf(p), yOf(p));
    xlo = std::min(xlo, xOf(p));
    xhi = std::max(xhi, xOf(p));
    ylo = std::min(ylo, yOf(p));
    yhi = std::max(yhi, yOf(p));
  }
  QPen pen(QColor(230, 159, 0));
  pen.setWidthF(1.5);
  line->setPen(pen);
  // One number format (issue 41 item 3): "$1,000,000", never "1e+06" (localized numbers add
  // the thousands separators).
  chart->setLocale(QLocale(QLocale::English, QLocale::UnitedStates));
  chart->setLocalizeNumbers(true);
  const auto logAxisOver = [](double lo, double hi, const QString& title, const QString& prefix) {
    auto* a = new QLogValueAxis;
    a->setBase(10);
    a->setTitleText(title);
    lo = std::max(lo, 1e-12);
    hi = std::max(hi, lo);
    const double from = std::pow(10, std::floor(std::log10(lo)));
    const double to = std::pow(10, std::ceil(std::log10(hi * 1.0001)));
    a->setRange(from, to);
    a->setLabelFormat(axisLabelFormat(from, to, prefix));
    a->setMinorTickCount(8);
    return a;
  };
  if (!tp && m_plan.deadlineHours) xhi = std::max(xhi, *m_plan.deadlineHours);
  if (usd && m_plan.budgetUsd) yhi = std::max(yhi, *m_plan.budgetUsd);
  auto* x =
      logAxisOver(xlo, xhi, tp ? tr("hours per million samples") : tr("time to train (hours)"), {});
  auto* y = logAxisOver(
      ylo, yhi,
      usd ? tr("cost (USD)") : (tp ? tr("GPU-hours per million samples") : tr("GPU-hours")),
      usd ? QStringLiteral("$") : QString());
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (QAbstractSeries* s :
       {static_cast<QAbstractSeries*>(line), static_cast<QAbstractSeries*>(dots)}) {
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  if (m_plan.chosen) {
    auto* c = new QScatterSeries;
    c->setName(planPointLegend(*m_plan.chosen, tp));
    withDetail(c, planPointLabel(*m_plan.chosen, tp));
    c->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    c->setColor(QColor(213, 94, 0));
    c->setMarkerSize(16);
    c->append(xOf(*m_plan.chosen), yOf(*m_plan.chosen));
    chart->addSeries(c);
    c->attachAxis(x);
    c->attachAxis(y);
    // The chosen square sits on top of its front point and takes its clicks: it loads the chosen
    // option as any front point does (the buyer's review, defect 16: the click did nothing).
    connect(c, &QScatterSeries::clicked, this, [this] { requestLoadChosen(); });
  }
  if (!tp && m_plan.deadlineHours) {
    auto* d = new QLineSeries;
    d->setName(tr("deadline %1 h").arg(*m_plan.deadlineHours));
    QPen dp(QColor(192, 57, 43));
    dp.setStyle(Qt::DashLine);
    d->setPen(dp);
    d->append(*m_plan.deadlineHours, y->min());
    d->append(*m_plan.deadlineHours, y->max());
    chart->addSeries(d);
    d->attachAxis(x);
    d->attachAxis(y);
  }
  if (usd && m_plan.budgetUsd) {
    auto* b = new QLineSeries;
    b->setName(tr("budget %1").arg(formatMoney(*m_plan.budgetUsd)));
    QPen bp(QColor(0, 110, 80));
    bp.setStyle(Qt::DashLine);
    b->setPen(bp);
    b->append(x->min(), *m_plan.budgetUsd);
    b->append(x->max(), *m_plan.budgetUsd);
    chart->addSeries(b);
    b->attachAxis(x);
    b->attachAxis(y);
  }
  connect(dots, &QScatterSeries::clicked, this, [this, xOf, yOf](const QPointF& at) {
    for (int i = 0; i < static_cast<int>(m_rows.size()); ++i) {
      const PlanPointView& p = m_rows[static_cast<std::size_t>(i)];
      if (std::abs(xOf(p) - at.x()) <= 1e-9 * std::abs(at.x()) + 1e-12 &&
          std::abs(yOf(p) - at.y()) <= 1e-9 * std::abs(at.y()) + 1e-12) {
        requestLoad(i);
        return;
      }
    }
  });
  fitLegend(chart);
}

}  // namespace ddpsim::gui
