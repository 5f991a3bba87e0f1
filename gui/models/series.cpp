#include "gui/models/series.hpp"

#include <QLocale>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <utility>

#include "gui/models/number_format.hpp"

namespace ddpsim::gui {

namespace {

template <typename F>
QList<QPointF> over(const SweepResult& r, F y) {
  QList<QPointF> out;
  for (const StepPoint& p : r.points) {
    if (p.ok()) out.append(QPointF(p.gpus, y(p)));
  }
  return out;
}

double component(const StepPoint& p, StepComponent c) {
  switch (c) {
    case StepComponent::kCompute:
      return p.computeS;
    case StepComponent::kExposedComm:
      return p.exposedCommS;
    case StepComponent::kOptimizer:
      return p.optimizerS;
    case StepComponent::kOther:
      return p.otherS;
  }
  return 0;
}

bool targeted(const SweepResult& r) {
  for (const StepPoint& p : r.points) {
    if (p.ok()) return p.timeToTrainS.has_value();
  }
  return false;
}

bool priced(const SweepResult& r) {
  for (const StepPoint& p : r.points) {
    if (p.ok()) return p.costUsd.has_value();
  }
  return false;
}

}  // namespace

QList<QPointF> stepSeries(const SweepResult& r, StepComponent c) {
  return over(r, [c](const StepPoint& p) { return 1e3 * component(p, c); });
}

QList<QPointF> stackedStepSeries(const SweepResult& r, StepComponent c) {
  return over(r, [c](const StepPoint& p) {
    double sum = 0;
    for (int i = 0; i <= static_cast<int>(c); ++i)
      sum += component(p, static_cast<StepComponent>(i));
    return 1e3 * sum;
  });
}

QList<QPointF> stepTimeSeries(const SweepResult& r) {
  return over(r, [](const StepPoint& p) { return 1e3 * p.stepTimeS; });
}

QList<QPointF> stepTimeSeries(const std::vector<StepPoint>& points) {
  QList<QPointF> out;
  for (const StepPoint& p : points) {
    if (p.ok()) out.append(QPointF(p.gpus, 1e3 * p.stepTimeS));
  }
  return out;
}

QString planSummary(const PlanView& plan) {
  if (!plan.error.empty()) return QString::fromStdString(plan.error);
  QString s = QStringLiteral(
                  "%1 candidates: %2 feasible (%3 on the Pareto front, %4 beaten on both "
                  "metrics by a front point)")
                  .arg(plan.candidates)
                  .arg(plan.feasible)
                  .arg(plan.pareto.size())
                  .arg(plan.dominated);
  const auto count = [&](const char* reason) {
    const auto it = plan.rejected.find(reason);
    return it == plan.rejected.end() ? std::size_t{0} : it->second;
  };
  QStringList why;
  if (const std::size_t n = count("memory"))
    why << QStringLiteral("%1 do not fit in GPU memory").arg(n);
  if (const std::size_t n = count("deadline")) {
    why << (plan.deadlineHours
                ? QStringLiteral("%1 miss the %2 h deadline").arg(n).arg(*plan.deadlineHours)
                : QStringLiteral("%1 miss the deadline").arg(n));
  }
  if (const std::size_t n = count("budget")) {
    why << (plan.budgetUsd ? QStringLiteral("%1 cost more than the %2 budget")
                                 .arg(n)
                                 .arg(formatMoney(*plan.budgetUsd))
                           : QStringLiteral("%1 cost more than the budget").arg(n));
  }
  if (const std::size_t n = count("global_batch"))
    why << QStringLiteral("%1 exceed the largest global batch").arg(n);
  if (!why.isEmpty()) s += QStringLiteral("; rejected: ") + why.join(QStringLiteral(", "));
  return s;
}

QString versusChosen(const PlanPointView& p, const PlanPointView& c) {
  if (p.system == c.system && p.gpus == c.gpus && p.globalBatch == c.globalBatch &&
      p.strategy == c.strategy && p.gradAccumulation == c.gradAccumulation &&
      p.bucketCapMb == c.bucketCapMb && p.commHook == c.commHook) {
    return QStringLiteral("chosen");
  }
  const auto pct = [](double a, double b) {
    if (!(b > 0)) return QStringLiteral("n/a");
    double d = std::round(100.0 * (a - b) / b);
    if (d == 0) d = 0;  // no "-0%"
    return (d >= 0 ? QStringLiteral("+") : QString()) + QString::number(d, 'f', 0) + "%";
  };
  return pct(p.timeMetric, c.timeMetric) + QStringLiteral(" time, ") +
         pct(p.gpuHoursMetric, c.gpuHoursMetric) + QStringLiteral(" GPU-hours");
}

QList<QPointF> weakEfficiencySeries(const SweepResult& r) {
  return over(r, [](const StepPoint& p) { return 100.0 * p.weakEfficiency; });
}

QList<QPointF> strongEfficiencySeries(const SweepResult& r) {
  return over(r, [](const StepPoint& p) { return 100.0 * p.strongEfficiency; });
}

QList<QPointF> throughputSeries(const SweepResult& r) {
  return over(r, [](const StepPoint& p) { return p.throughputSamplesPerS; });
}

QList<QPointF> timeToTrainSeries(const SweepResult& r) {
  if (targeted(r)) {
    return over(r, [](const StepPoint& p) { return p.timeToTrainS.value_or(0) / 3600.0; });
  }
  return over(r, [](const StepPoint& p) { return p.hoursPerMillionSamples; });
}

QList<QPointF> costSeries(const SweepResult& r) {
  if (targeted(r) && priced(r)) {
    return over(r, [](const StepPoint& p) { return p.costUsd.value_or(0); });
  }
  if (targeted(r)) return over(r, [](const StepPoint& p) { return p.gpuHours.value_or(0); });
  return over(r, [](const StepPoint& p) { return p.gpuHoursPerMillionSamples; });
}

namespace {

// A "reliability" section: some predicted point carries an ETTR.
bool withFailures(const SweepResult& r) {
  return std::any_of(r.points.begin(), r.points.end(),
                     [](const StepPoint& p) { return p.ok() && p.ettr.has_value(); });
}

}  // namespace

QList<QPointF> timeWithoutFailuresSeries(const SweepResult& r) {
  if (!withFailures(r)) return {};
  return over(r, [](const StepPoint& p) { return p.hoursWithoutFailures; });
}

QString ettrText(const SweepResult& r) {
  const StepPoint* first = nullptr;
  const StepPoint* last = nullptr;
  for (const StepPoint& p : r.points) {
    if (!p.ok() || !p.ettr) continue;
    if (first == nullptr) first = &p;
    last = &p;
  }
  if (first == nullptr) return {};
  if (first == last) return QStringLiteral("ETTR %1").arg(*first->ettr, 0, 'f', 3);
  return QStringLiteral("ETTR %1 at %2 GPUs to %3 at %4")
      .arg(*first->ettr, 0, 'f', 3)
      .arg(first->gpus)
      .arg(*last->ettr, 0, 'f', 3)
      .arg(last->gpus);
}

QString ettrRangeText(const SweepResult& r) {
  double first = 0, last = 0;
  for (const StepPoint& p : r.points) {
    if (!p.ok() || !p.ettr) continue;
    if (first == 0) first = *p.ettr;
    last = *p.ettr;
  }
  if (first == 0) return {};
  if (first == last) return QStringLiteral("ETTR %1").arg(first, 0, 'f', 3);
  return QStringLiteral("ETTR %1-%2").arg(first, 0, 'f', 3).arg(last, 0, 'f', 3);
}

QString timeToTrainLabel(const SweepResult& r) {
  const bool failures = withFailures(r);
  if (targeted(r)) {
    return failures ? QStringLiteral("time to train with failures (h)")
                    : QStringLiteral("time to train (h)");
  }
  return failures ? QStringLiteral("hours per million samples with failures")
                  : QStringLiteral("hours per million samples");
}

QString costLabel(const SweepResult& r) {
  const QString failures = withFailures(r) ? QStringLiteral(" with failures") : QString();
  if (targeted(r) && priced(r)) return QStringLiteral("cost to train%1 (USD)").arg(failures);
  if (targeted(r)) return QStringLiteral("GPU-hours to train%1").arg(failures);
  return QStringLiteral("GPU-hours per million samples%1").arg(failures);
}

QList<int> gpusNotFitting(const SweepResult& r) {
  QList<int> out;
  for (const StepPoint& p : r.points) {
    if (p.ok() && !p.fitsInMemory) out.append(p.gpus);
  }
  return out;
}

QString memoryWarning(const SweepResult& r) {
  const QList<int> bad = gpusNotFitting(r);
  if (bad.isEmpty()) return {};
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const StepPoint* worst = nullptr;
  int predicted = 0;
  for (const StepPoint& p : r.points) {
    if (!p.ok()) continue;
    ++predicted;
    if (!p.fitsInMemory && (!worst || p.memoryBytes > worst->memoryBytes)) worst = &p;
  }
  const auto gpus = [](int n) {
    return QStringLiteral("%1 GPU%2").arg(n).arg(n == 1 ? QString() : QStringLiteral("s"));
  };
  QString at = bad.size() == 1 ? gpus(bad.front())
                               : QStringLiteral("%1-%2").arg(bad.front()).arg(gpus(bad.back()));
  QString w = QStringLiteral(
                  "does not fit in GPU memory at %1 (%2 of %3 points): %4 GiB per GPU "
                  "at %5, capacity %6 GiB")
                  .arg(at)
                  .arg(bad.size())
                  .arg(predicted)
                  .arg(worst->memoryBytes / kGiB, 0, 'f', 1)
                  .arg(gpus(worst->gpus))
                  .arg(r.capacityBytes / kGiB, 0, 'f', 1);
  for (const StrategyMemory& m : r.memory) {
    if (m.strategy != r.strategy || !m.error.empty()) continue;
    const std::pair<const char*, double> terms[] = {{"parameters", m.paramsBytes},
                                                    {"gradients", m.gradsBytes},
                                                    {"optimizer states", m.optimizerBytes},
                                                    {"activations", m.activationBytes},
                                                    {"buffers", m.bufferBytes},
                                                    {"runtime", m.runtimeBytes},
                                                    {"fragmentation", m.fragmentationBytes}};
    const auto* largest = &terms[0];
    for (const auto& t : terms) {
      if (t.second > largest->second) largest = &t;
    }
    w += QStringLiteral("; largest term at %1: %2 %3 GiB")
             .arg(gpus(r.currentGpus))
             .arg(QString::fromLatin1(largest->first))
             .arg(largest->second / kGiB, 0, 'f', 1);
  }
  return w;
}

QString planPointLabel(const PlanPointView& p, bool byThroughput) {
  QString l = QStringLiteral("chosen: %1 GPU%2, %3, %4 per GPU")
                  .arg(p.gpus)
                  .arg(p.gpus == 1 ? QString() : QStringLiteral("s"))
                  .arg(QString::fromStdString(p.strategy))
                  .arg(p.perGpuBatch);
  if (p.gradAccumulation > 1) l += QStringLiteral(" x %1 micro-batches").arg(p.gradAccumulation);
  l += QStringLiteral(", bucket %1 MiB").arg(p.bucketCapMb, 0, 'g', 4);
  if (p.commHook != "none")
    l += QStringLiteral(", hook %1").arg(QString::fromStdString(p.commHook));
  if (p.costUsd) {
    l += QStringLiteral(", ") + formatMoney(*p.costUsd);  // one money format (issue 41 item 3)
  } else {
    l += QStringLiteral(", %1 GPU-hours%2")
             .arg(formatNumber(p.gpuHoursMetric, 3))
             .arg(byThroughput ? QStringLiteral(" per million samples") : QString());
  }
  return l;
}

QString superlinearNote(const SweepResult& r) {
  const StepPoint* top = nullptr;
  const StepPoint* smallest = nullptr;
  for (const StepPoint& p : r.points) {
    if (!p.ok()) continue;
    if (smallest == nullptr) smallest = &p;
    if (top == nullptr || p.weakEfficiency > top->weakEfficiency) top = &p;
  }
  // Half a tenth of a percent: what the table prints as 100.0.
  if (top == nullptr || top->weakEfficiency <= 1.0005) return {};
  QString note = QStringLiteral(
                     "weak scaling above 100% (%1% at %2 GPU%3): a step there is shorter than one "
                     "GPU's alone with the same per-GPU batch, so this is not extra speed per GPU")
                     .arg(100 * top->weakEfficiency, 0, 'f', 1)
                     .arg(top->gpus)
                     .arg(top->gpus == 1 ? QString() : QStringLiteral("s"));
  // The usual reason, said with its numbers: the sharded optimizer step.
  if (smallest != top && smallest->optimizerS > 1.5 * top->optimizerS) {
    note += QStringLiteral(
                "; %1 splits the optimizer step over the GPUs (%2 ms at %3 GPU%4, %5 "
                "ms at %6)")
                .arg(QString::fromStdString(r.strategy))
                .arg(formatNumber(1e3 * top->optimizerS, 3))
                .arg(top->gpus)
                .arg(top->gpus == 1 ? QString() : QStringLiteral("s"))
                .arg(formatNumber(1e3 * smallest->optimizerS, 3))
                .arg(smallest->gpus);
  }
  return note;
}

QString planPointLegend(const PlanPointView& p, bool byThroughput) {
  QString l = QStringLiteral("chosen: %1 GPU%2, %3, ")
                  .arg(p.gpus)
                  .arg(p.gpus == 1 ? QString() : QStringLiteral("s"))
                  .arg(QString::fromStdString(p.strategy));
  if (p.costUsd) return l + formatMoney(*p.costUsd);
  return l + QStringLiteral("%1 GPU-h%2")
                 .arg(formatNumber(p.gpuHoursMetric, 3))
                 .arg(byThroughput ? QStringLiteral(" per 1M samples") : QString());
}

}  // namespace ddpsim::gui
