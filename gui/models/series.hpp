// series.hpp: the (x, y) series the charts draw, taken from a SweepResult (Qt Core only, so the
// tests check exactly what the window and ddpsim-plot draw). x is GPUs; y units are in the names.
//
//   QList<QPointF> exposed = stepSeries(result, StepComponent::kExposedComm);  // ms, stacked
#pragma once

#include <QList>
#include <QPointF>

#include "gui/models/sweep_engine.hpp"

namespace ddpsim::gui {

enum class StepComponent { kCompute, kExposedComm, kOptimizer, kOther };

/// Milliseconds of one component per GPU count, for the points that were predicted.
QList<QPointF> stepSeries(const SweepResult& r, StepComponent c);
/// Cumulative milliseconds up to and including `c` (compute, + exposed, + optimizer, + other):
/// the upper edge of the stacked area of `c`.
QList<QPointF> stackedStepSeries(const SweepResult& r, StepComponent c);
/// Step time in milliseconds.
QList<QPointF> stepTimeSeries(const SweepResult& r);
/// Step time in milliseconds of any predicted points (a VariantSeries' points).
QList<QPointF> stepTimeSeries(const std::vector<StepPoint>& points);
/// Scaling efficiency in percent (weak: per-GPU throughput at N over that at 1 at a fixed
/// per-GPU batch; strong: T_1 / (N T_N) at a fixed global batch).
QList<QPointF> weakEfficiencySeries(const SweepResult& r);
QList<QPointF> strongEfficiencySeries(const SweepResult& r);
QList<QPointF> throughputSeries(const SweepResult& r);  ///< samples/s
/// Time to train in hours when the scenario has a target, else hours per million samples.
QList<QPointF> timeToTrainSeries(const SweepResult& r);
/// Cost in USD when priced and targeted, else GPU-hours (or GPU-hours per million samples).
QList<QPointF> costSeries(const SweepResult& r);
/// With a "reliability" section: the time series of timeToTrainSeries without failures and
/// checkpoints; empty otherwise.
QList<QPointF> timeWithoutFailuresSeries(const SweepResult& r);
/// "ETTR 0.98 at 8 GPUs to 0.81 at 1024" over the drawn points; empty without reliability.
QString ettrText(const SweepResult& r);
/// What timeToTrainSeries and costSeries hold, for axis titles.
QString timeToTrainLabel(const SweepResult& r);
QString costLabel(const SweepResult& r);

/// The planner's chosen point in words: "chosen: 8 GPUs, zero1, 4 per GPU x 2 micro-batches,
/// bucket 25 MiB, hook none, $1,234" (the cost when priced and targeted, else GPU-hours).
QString planPointLabel(const PlanPointView& p, bool byThroughput);
/// The same for a chart legend, which must fit whole at 1280x800 (the buyer's review, defect
/// 12): "chosen: 8 GPUs, zero1, $1,234"; the full label goes to the chart's hover text.
QString planPointLegend(const PlanPointView& p, bool byThroughput);
/// "ETTR 0.98-0.81" over the drawn points (one value for one point), for a legend; empty
/// without reliability.
QString ettrRangeText(const SweepResult& r);

/// One line per planner outcome, for the Recommendation tab: how many candidates were evaluated,
/// feasible, on the front, dominated, and rejected per reason in words ("12 need more memory
/// than the GPU has"), e.g. "312 candidates: 40 feasible (5 on the Pareto front, 35 beaten on
/// both metrics); rejected: 260 do not fit in memory, 12 miss the 240 h deadline".
QString planSummary(const PlanView& plan);
/// How front point `p` compares with the chosen one `c` on the two front metrics, e.g.
/// "+35% time, -20% GPU-hours" ("chosen" for the chosen one itself).
QString versusChosen(const PlanPointView& p, const PlanPointView& c);

/// Why weak scaling efficiency passes 100%, empty when no point does (the buyer's review,
/// defect 14: "105-125%" read as an error). Weak scaling compares a step at N GPUs with one GPU
/// running the same per-GPU batch alone; a sharded strategy splits the optimizer step over the N
/// GPUs, so the step can be shorter than one GPU's. E.g. "weak scaling above 100% (117% at 64
/// GPUs): a step there is shorter than one GPU's alone with the same per-GPU batch; fsdp2
/// splits the optimizer step over the GPUs (3.75 ms at 64 GPUs, 240 ms at 1)".
QString superlinearNote(const SweepResult& r);

/// GPU counts of the predicted points whose memory per GPU passes the GPU's capacity.
QList<int> gpusNotFitting(const SweepResult& r);
/// The status-bar warning when some point does not fit, empty when all fit: the GPU counts, the
/// worst point's memory per GPU against the capacity, and the largest memory term of the current
/// strategy at the scenario's GPU count, e.g. "does not fit in GPU memory at 1-16 GPUs (5 of 11
/// points): 261.6 GiB per GPU at 1 GPU, capacity 80.0 GiB; largest term at 8 GPUs: activations
/// 190.2 GiB".
QString memoryWarning(const SweepResult& r);

}  // namespace ddpsim::gui
