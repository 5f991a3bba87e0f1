// sweep_engine.hpp: everything the charts show, computed from one scenario document.
//
// computeSweep() predicts the scenario at every GPU count of gpuAxis() (or, with
// scenarioSweep, at the scenario's own sweep points) through the simulator's run API
// (simulator/run.hpp) with ONE cached Predictor (its caches make a 64-point sweep take
// milliseconds), and, at the scenario's own cluster.gpus: the memory per GPU of every strategy,
// the planner's Pareto front and the event simulator's timeline of one step (every simulation
// knob of the scenario applies to it, as to `ddpsim predict --engine event`). Every point and view
// catches ddpsim::Error on its own and keeps the message, so a strategy or engine this build does
// not model shows its message instead of failing the sweep (memory falls back to
// simulator/prediction/memory.hpp's estimate, which covers every strategy). No Qt here: the window,
// ddpsim-plot and the tests share it.
//
//   SweepRequest req;
//   req.doc = model::read_json_file("scenarios/default.json");
//   req.file = "scenarios/default.json";
//   req.maxGpus = 512;
//   SweepResult r = computeSweep(req);   // r.points[i].stepTimeS, r.memory, r.plan, ...
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "simulator/analytic/analytic.hpp"
#include "simulator/run.hpp"

namespace ddpsim::gui {

/// One GPU count of the sweep. Times in seconds, memory in bytes.
/// The work to a training target: steps x global batch x tokens per sample (samples for a model
/// without a sequence, tokensPerSample 1); nullopt without a target.
inline std::optional<double> workToTarget(std::optional<double> steps, std::int64_t globalBatch,
                                          std::int64_t tokensPerSample) {
  if (!steps) return std::nullopt;
  return *steps * static_cast<double>(globalBatch) * static_cast<double>(tokensPerSample);
}

struct StepPoint {
  int gpus = 1;
  int nodes = 1;
  std::int64_t globalBatch = 0;
  std::string error;  ///< non-empty: this point could not be predicted (the message)
  double stepTimeS = 0;
  double computeS = 0;      ///< forward + backward, all micro-batches
  double exposedCommS = 0;  ///< communication not hidden behind the backward
  double optimizerS = 0;
  double otherS = 0;  ///< step - (compute + exposed + optimizer), >= 0
  double commS = 0;   ///< all collectives, hidden or not
  double throughputSamplesPerS = 0;
  double mfu = 0;               ///< model FLOPs utilisation, 0..1 (sim::mfu; 0 when unknown)
  double tokensPerSPerGpu = 0;  ///< samples/s x seq_len / gpus (sim::tokens_per_s_per_gpu)
  double weakEfficiency = 0;
  double strongEfficiency = 0;
  double memoryBytes = 0;
  bool fitsInMemory = true;
  /// With a target (training.target): the optimizer steps to reach it (the work is then steps x
  /// global batch samples, x SweepResult::seqLen tokens), as sim::Prediction::steps_to_target.
  std::optional<double> stepsToTarget;
  std::optional<double> timeToTrainS;
  std::optional<double> gpuHours;
  std::optional<double> costUsd;
  double gpuHoursPerMillionSamples = 0;  ///< step x N / global batch x 1e6 / 3600
  double hoursPerMillionSamples = 0;     ///< step / global batch x 1e6 / 3600
  /// With a "reliability" section: the effective training time ratio; the four figures above
  /// then include failures and checkpoints (the planner's metrics), and this is the time
  /// without them (time to train, or hours per million samples without a target).
  std::optional<double> ettr;
  double hoursWithoutFailures = 0;
  /// With SweepRequest::withJson: the point's result object as `ddpsim predict --format json`
  /// writes it (sim::prediction_json); null otherwise.
  nlohmann::json json;
  bool ok() const { return error.empty(); }
};

/// Memory per GPU of one strategy at the scenario's cluster.gpus, bytes per component.
struct StrategyMemory {
  std::string strategy;  ///< "ddp", "zero1", ...
  std::string error;     ///< non-empty: no estimate (the message)
  std::string source;    ///< "predictor" or "memory model" (the step is not modelled yet)
  double paramsBytes = 0, gradsBytes = 0, optimizerBytes = 0, activationBytes = 0, bufferBytes = 0,
         runtimeBytes = 0, fragmentationBytes = 0;
  double totalBytes() const {
    return paramsBytes + gradsBytes + optimizerBytes + activationBytes + bufferBytes +
           runtimeBytes + fragmentationBytes;
  }
};

/// The error band of a planner point's class (simulator/prediction/uncertainty.hpp): how far
/// ddpsim missed published runs like it. Fractions.
struct ErrorBandView {
  double medianAbs = 0;
  double maxAbs = 0;
  std::size_t rows = 0;
  std::string matchedOn;  ///< "gpu, strategy and size", ..., "all rows"
};

struct PlanPointView {
  std::string system;                ///< the system of plan.hardware it runs on (its preset's name)
  std::optional<double> gpuHourUsd;  ///< that system's price
  int gpus = 1;
  std::int64_t perGpuBatch = 1;
  std::int64_t globalBatch = 1;
  double timeMetric = 0;      ///< time to train (s), or time per million samples (s) by throughput
  double gpuHoursMetric = 0;  ///< GPU-hours, or GPU-hours per million samples
  std::optional<double> costUsd;
  std::string strategy = "ddp";  ///< the knobs of the point, for its label
  int gradAccumulation = 1;
  double bucketCapMb = 25;
  std::string commHook = "none";
  double stepTimeS = 0;
  double memoryBytes = 0;
  std::string limitedBy;  ///< the planner's "what limits it" (front points)
  double mfu = 0;         ///< model FLOPs utilisation, 0..1
  double tokensPerSPerGpu = 0;
  std::optional<double> costPerMillionTokens;
  std::optional<ErrorBandView> band;
  double memoryHeadroomBytes = 0;  ///< usable GPU memory left (negative: over)
  /// With a target: the optimizer steps to reach it (the work is then steps x global batch
  /// samples, x tokensPerSample tokens).
  std::optional<double> stepsToTarget;
  std::int64_t tokensPerSample = 1;  ///< the model's sequence length, 1 without one
  /// With a "reliability" section: the effective training time ratio (the time and cost above
  /// include failures and checkpoints: time / ETTR).
  std::optional<double> ettr;
  /// steps x global batch x tokensPerSample, when there is a target.
  std::optional<double> tokensToTarget() const {
    return workToTarget(stepsToTarget, globalBatch, tokensPerSample);
  }
};

/// One system searched (plan.hardware, or the scenario's own hardware): its best option.
struct PlanSystemView {
  std::string label;     ///< preset or hardware name
  std::string hardware;  ///< "DGX H100"
  std::string gpu;
  std::optional<double> gpuHourUsd;
  std::vector<int> gpus;  ///< the cluster sizes searched
  std::size_t candidates = 0, feasible = 0;
  std::optional<PlanPointView> best;
  /// best differs from the chosen option by less than the error band: the model cannot tell
  /// them apart.
  bool withinBandOfChosen = false;
};

struct PlanView {
  std::string error;  ///< non-empty: the planner failed (the message)
  bool byThroughput = false;
  std::size_t candidates = 0, feasible = 0;
  std::map<std::string, std::size_t> rejected;  ///< per reason, as sim::PlanResult
  std::size_t dominated = 0;
  std::string objective = "time";  ///< "time", "cost", "gpu_hours"
  std::optional<double> deadlineHours, budgetUsd;
  std::vector<std::string> warnings;
  std::vector<PlanPointView> pareto;
  std::optional<PlanPointView> chosen;
  std::string noneFeasibleReason;
  /// When nothing is feasible: the rejected option closest to its limit, and why it misses.
  std::optional<PlanPointView> nearest;
  std::string nearestReason;
  std::vector<PlanSystemView> systems;
  bool byCost = false;  ///< every system has a price: the choice compares cost
  /// The cluster sizes searched over every system, increasing (the edge of the search).
  std::vector<int> searchedGpus;
  /// The window bounded the search by the panel's max GPUs (plan_bounds.hpp): that bound.
  std::optional<int> panelMaxGpus;
};

/// One busy interval on a lane of the timeline (times in seconds from the step start).
struct TimelineSpan {
  int lane = 0;  ///< 2 * rank_index + (0 compute, 1 communication)
  double startS = 0, endS = 0;
  std::string name;  ///< "fwd h.3", "allreduce bucket 2", "optimizer", ...
  enum class Kind { kForward, kBackward, kOptimizer, kCollective, kOther } kind = Kind::kOther;
  int bucket = -1;  ///< bucket index for collectives (colour), else -1
};

struct TimelineData {
  std::string error;
  int gpus = 1;
  std::vector<int> ranks;  ///< the ranks shown, lanes 2i (compute) and 2i+1 (communication)
  double stepTimeS = 0;
  std::vector<TimelineSpan> spans;
};

/// The total step time of the scenario at another point of its own sweep's non-GPU axes (e.g.
/// "parallelism.strategy": [...]), along the same GPU axis: one line per combination.
struct VariantSeries {
  std::string label;  ///< "strategy zero2, bucket_cap_mb 50" (the axes' last key segments)
  std::string error;  ///< non-empty: this combination does not validate (the message)
  std::vector<StepPoint> points;
};

struct SweepRequest {
  nlohmann::json doc;  ///< the scenario document (validated or not)
  std::string file;    ///< its path: names it in errors, anchors relative references
  int maxGpus = 64;    ///< the largest GPU count of the sweep (when gpuCounts is empty)
  /// The GPU counts to predict, in place of gpuAxis(maxGpus, ...): the window passes the
  /// scenario's own /sweep/cluster.gpus (scenarioGpuCounts) so it draws what the CLI predicts.
  std::vector<int> gpuCounts;
  /// Also predict the combinations of the scenario's other sweep axes (SweepResult::variants).
  bool withVariants = true;
  int maxVariants = 8;
  int maxPoints = 64;  ///< at most this many GPU counts
  bool withMemory = true;
  bool withPlan = true;
  /// > 0: the planner reads planDocument(doc, planMaxGpus) (gui/models/plan_bounds.hpp): the
  /// window's max GPUs bounds the sizes recommended when the file does not.
  int planMaxGpus = 0;
  bool withTimeline = true;
  int timelineRanks = 4;  ///< ranks drawn on the timeline (plus the slowest one)
  /// The engine of the sweep's points (the Timeline always runs the event engine).
  model::Engine engine = model::Engine::kAnalytic;
  /// Predict the scenario's own sweep points (its "sweep" section, model::expand_sweep) instead
  /// of the GPU axis; a scenario without a sweep is one point.
  bool scenarioSweep = false;
  bool withJson = false;  ///< fill StepPoint::json
  std::uint64_t generation = 0;
};

struct SweepResult {
  std::uint64_t generation = 0;
  std::string error;  ///< non-empty: the scenario itself is invalid (nothing else is filled)
  std::string name;
  /// What is predicted, for chart titles: "preset gpt2-xl on dgx-h100" (the document's current
  /// model and hardware, unlike `name`, which an edit of the model does not change).
  std::string subject;
  std::string strategy;
  /// The model predicted: its name ("llama-3.1-8b", "gpt2" for an HF config), its trainable
  /// parameters and tokens per sample (1 without a sequence), for the panel's model row.
  std::string modelName;
  std::int64_t modelParams = 0;
  std::int64_t seqLen = 1;
  int currentGpus = 1;       ///< the scenario's cluster.gpus (memory, timeline)
  double capacityBytes = 0;  ///< memory of one GPU
  std::vector<StepPoint> points;
  std::vector<VariantSeries> variants;  ///< empty without other sweep axes
  std::size_t variantsLeftOut = 0;      ///< combinations beyond maxVariants, not predicted
  int gpusPerNode = 1;                  ///< as resolved (the hardware preset's when left out)
  std::vector<StrategyMemory> memory;
  PlanView plan;
  TimelineData timeline;
  double computeMs = 0;  ///< wall time of computeSweep
};

/// GPU counts of a sweep up to `maxGpus`: the powers of two below gpus_per_node, then multiples
/// of gpus_per_node (every one when they fit in `maxPoints`, else a geometric selection that
/// keeps the first and the last), in increasing order. maxGpus below 1 gives {1}.
std::vector<int> gpuAxis(int maxGpus, int gpusPerNode, int maxPoints = 64);

/// The document's own GPU counts, /sweep/cluster.gpus: its integers sorted without duplicates,
/// at most `maxPoints` of them (a geometric selection by rank that keeps the first and the last);
/// empty when the document sweeps no GPU counts.
std::vector<int> scenarioGpuCounts(const nlohmann::json& doc, int maxPoints = 64);

/// The sweep's default upper end for a document: the largest cluster.gpus of its sweep or plan
/// section (plan.gpus, plan.max_gpus), else max(64, cluster.gpus).
int defaultMaxGpus(const nlohmann::json& doc);

/// Caches the Predictor between calls for an unchanged model + hardware (+ file): the run API's
/// cache (simulator/run.hpp). One computation at a time per cache.
using PredictorCache = sim::PredictorCache;

/// Computes every view for `req` (see the file comment). Never throws for bad input: a document
/// that does not validate gives a result with `error` set.
SweepResult computeSweep(const SweepRequest& req, PredictorCache* cache = nullptr);

}  // namespace ddpsim::gui
