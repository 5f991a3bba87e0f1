#include "gui/models/series.hpp"

#include <utility>

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
  return over(r, [](const StepPoint& p) { return p.stepTimeS; });
}

QList<QPointF> costSeries(const SweepResult& r) {
  if (targeted(r) && priced(r)) {
    return over(r, [](const StepPoint& p) { return p.costUsd.value_or(0); });
  }
  if (targeted(r)) return over(r, [](const StepPoint& p) { return p.gpuHours.value_or(0); });
  return over(r, [](const StepPoint& p) { return p.gpuHoursPer1000Steps; });
}

QString timeToTrainLabel(const SweepResult& r) {
  return targeted(r) ? QStringLiteral("time to train (h)") : QStringLiteral("step time (s)");
}

QString costLabel(const SweepResult& r) {
  if (targeted(r) && priced(r)) return QStringLiteral("cost to train (USD)");
  if (targeted(r)) return QStringLiteral("GPU-hours to train");
  return QStringLiteral("GPU-hours per 1,000 steps");
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
    l += QStringLiteral(", $%1").arg(*p.costUsd, 0, 'f', 0);
  } else {
    l += QStringLiteral(", %1 GPU-hours%2")
             .arg(p.gpuHoursMetric, 0, 'f', 1)
             .arg(byThroughput ? QStringLiteral(" per 1,000 steps") : QString());
  }
  return l;
}

}  // namespace ddpsim::gui
