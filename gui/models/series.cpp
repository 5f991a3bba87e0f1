#include "gui/models/series.hpp"

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

}  // namespace ddpsim::gui
