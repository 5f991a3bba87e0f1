// run.hpp: the one way a scenario is predicted. Every front-end (`ddpsim predict`, `ddpsim plan`,
// `ddpsim published`, `ddpsim validate`, the GUI's sweep engine and ddpsim-plot, a program that
// links the installed library) calls these functions and never wires an engine itself, so every
// simulation knob of the scenario reaches both engines the same way:
//  - the engine: simulation.engine, or RunOptions::engine;
//  - the analytic model (Predictor): the workload, the hardware (and its calibration profile),
//    simulation.interference (else the profile's measured factor: resolve_interference) and
//    simulation.jitter_cv (its p50/p99 from the straggler statistics);
//  - measured costs (RunOptions::measured) over the model's and the profile's, in both engines;
//  - the event engine additionally: simulation.steps, seed, jitter_distribution, straggler_rank
//    and straggler_slowdown, local_sgd_period, staleness, network "flow" with background_traffic
//    and concurrent_jobs, trace_ranks, and training.target.steps_multiplier (event_options()).
// Interference has one source of truth: the StepPlan the Predictor makes for the point
// (StepPlan::interference), which the analytic timeline and the event engine both read.
//
// Before anything is simulated, every sweep point is checked (a straggler_rank inside the
// cluster, a trace path that can be written, and for the event engine the bounds of
// check_event_bounds and of a recorded timeline's spans, summed over the sweep), so bad input
// fails with exit code 2 before any point runs and no trace of an earlier point is left behind;
// a run that fails later (a full disk) removes the traces it wrote.
//
// A PredictorCache keeps one Predictor (its caches of buckets, layer times and topologies) for
// consecutive points with the same model, hardware, gpus_per_node and file, so a sweep over the
// other knobs costs microseconds per point.
//
//   model::Scenario s = model::load_scenario("scenarios/default.json");
//   sim::Run r = sim::predict(s);                                  // simulation.engine
//   sim::Run e = sim::predict(s, {.engine = model::Engine::kEvent, .trace_path = "t.json"});
//   nlohmann::json doc = sim::run_json(s, e);   // `ddpsim predict --format json`'s document
//   sim::PlanResult p = sim::plan(s);           // `ddpsim plan`
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/event/simulate.hpp"
#include "simulator/planner.hpp"

namespace ddpsim::model {
class RunOutputs;  // model/interrupt.hpp
}  // namespace ddpsim::model

namespace ddpsim::sim {

/// What a front-end asks of a run beyond the scenario. Nothing here changes how a point is
/// modelled except `engine` and `steps`, which override the scenario's own keys.
struct RunOptions {
  /// Overrides simulation.engine (`ddpsim predict --engine`).
  std::optional<model::Engine> engine;
  /// Event engine: overrides simulation.steps (the GUI's one-step timeline, validate's run).
  std::optional<int> steps;
  /// Event engine: write a Chrome trace of every point to this file (a sweep writes
  /// OUT.1.json, OUT.2.json, ... one per point); empty: none.
  std::string trace_path;
  /// Event engine: keep each point's timeline in Run::timelines (the GUI's Timeline view).
  bool keep_timeline = false;
  /// With a trace or a kept timeline: the ranks recorded (plus the slowest one); unset:
  /// simulation.trace_ranks.
  std::optional<int> timeline_ranks;
  /// Measured costs (a profiler trace's compute, optimizer and bucket all-reduces) that replace
  /// the model's in every point's plan, for both engines (step_plan.hpp apply_measured_costs;
  /// `ddpsim validate --trace`'s replay and --extrapolate). nullptr: the model's costs.
  std::shared_ptr<const MeasuredCosts> measured;
  /// The run's files (model/interrupt.hpp): with a trace, each point's file is added to it, and
  /// the caller keep()s them once its whole command is complete (`ddpsim predict` writes --out
  /// after the traces). nullptr: predict() keeps them itself when every point is done. Either
  /// way a SIGINT/SIGTERM or a failure before then removes every trace file of the run.
  model::RunOutputs* outputs = nullptr;
  /// Asked before every sweep point (and before each point's checks): true stops the run with
  /// Cancelled, removing what it wrote. The Python module's Ctrl-C (PyErr_CheckSignals); empty:
  /// never.
  std::function<bool()> cancelled;
};

/// A run stopped because RunOptions::cancelled said so (not an input error: no exit code 2).
struct Cancelled : std::exception {
  const char* what() const noexcept override { return "the run was cancelled"; }
};

/// Every sweep point of one scenario and its prediction, in model::expand_sweep's order.
struct Run {
  model::Engine engine = model::Engine::kAnalytic;
  std::vector<model::Scenario> points;
  std::vector<Prediction> predictions;
  /// Event engine with RunOptions::keep_timeline: per point, its recorded spans (else empty).
  std::vector<std::vector<Span>> timelines;
};

/// "analytic" or "event" (the context block's engine and the report's label).
const char* engine_name(model::Engine e);

/// One Predictor shared by consecutive points with the same workload and hardware: keyed by the
/// scenario's file (relative references), its "model" and "hardware" sections and
/// cluster.gpus_per_node (which the hardware spec takes). get() sets the point's interference
/// (resolve_interference) on it. Thread-safe get(); the Predictor itself is not, so callers run
/// one computation at a time per cache.
class PredictorCache {
 public:
  std::shared_ptr<Predictor> get(const model::Scenario& point);

 private:
  std::mutex mutex_;
  std::string key_;
  std::shared_ptr<Predictor> predictor_;
};

/// The event engine's options for one point: every knob from the scenario (see the file
/// comment), then `o`'s overrides of steps and the recorded timeline. `point` must outlive the
/// returned options (they point at its hardware).
EventOptions event_options(const model::Scenario& point, const RunOptions& o = {});

/// Predicts every sweep point of `s` (see the file comment for the checks made first).
/// Throws InputError (exit code 2) for bad input, UnsupportedError for what is not modelled.
Run predict(const model::Scenario& s, const RunOptions& o = {}, PredictorCache* cache = nullptr);

/// One point as given (no sweep expansion): what front-ends use for points they build
/// themselves (the GUI's GPU axis, validate's points). The straggler rank is checked for the
/// event engine only (the analytic model has no straggler; predict() checks every point, as
/// `ddpsim predict` always has). `timeline` (optional) receives the
/// recorded spans when the event engine runs with a trace or keep_timeline.
/// `sweep_work` (optional) adds up the event engine's work over several calls
/// (check_event_bounds).
Prediction predict_point(const model::Scenario& point, const RunOptions& o, PredictorCache& cache,
                         std::vector<Span>* timeline = nullptr, double* sweep_work = nullptr);
/// Same with a Predictor built for this call.
Prediction predict_point(const model::Scenario& point, const RunOptions& o = {});

/// `ddpsim plan`'s answer for `s` (planner.hpp), with the cache's Predictor when given.
PlanResult plan(const model::Scenario& s, PredictorCache* cache = nullptr);

/// The `ddpsim predict --format json` document of a run of `s` (report.hpp's results_json).
nlohmann::json run_json(const model::Scenario& s, const Run& r);

}  // namespace ddpsim::sim
