// report.hpp: predictions as JSON (the contract in docs/DESIGN.md), tables and CSV.
//
// JSON: {"context": {...}, "scenario": {...}, "results": [ one object per sweep point ]}.
// Each result holds at least the keys of the `ddpsim predict --format json` contract; keys whose
// value this version does not compute are null and a warning in that result says why.
// Results files are written atomically (a temporary file in the same folder, then rename).
//
//   nlohmann::json j = results_json(scenario, points, predictions, "analytic");
//   write_file_atomic("results/x.json", j.dump(2) + "\n");
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/scenario.hpp"
#include "simulator/analytic.hpp"

namespace ddpsim::sim {

/// The "context" block: tool version, git revision, host, date (UTC), device, library versions.
nlohmann::json context_json(const std::string& engine);

/// The "scenario" block: file, name, model label and name, parameters, tensors, hardware, GPU.
nlohmann::json scenario_json(const model::Scenario& s);

/// One result object (the contract keys plus first_step_time_s, bucket detail, sweep point).
nlohmann::json prediction_json(const model::Scenario& point, const Prediction& p);

/// The whole document for a scenario's sweep points and their predictions.
nlohmann::json results_json(const model::Scenario& base, const std::vector<model::Scenario>& points,
                            const std::vector<Prediction>& predictions, const std::string& engine);

/// Human-readable table (fixed-width columns) of the predictions.
std::string results_table(const model::Scenario& base, const std::vector<model::Scenario>& points,
                          const std::vector<Prediction>& predictions);

/// CSV with one row per prediction and a header naming units.
std::string results_csv(const std::vector<model::Scenario>& points,
                        const std::vector<Prediction>& predictions);

/// Writes `content` to `path` through a temporary file and rename(2); creates parent folders.
/// Throws Error naming the path when it cannot.
void write_file_atomic(const std::string& path, const std::string& content);

/// Throws std::logic_error (an internal error, exit code 1) if any number in `j` is NaN or
/// infinite: the report seam guard. Every JSON document the CLI writes passes through it before
/// a byte is written (results_json, plan_json, published_json, `ddpsim lr`); the table and CSV are
/// printed from the same predictions after results_json, so they are covered too.
void check_finite(const nlohmann::json& j, const std::string& where = "");

// Input guards in front of the engines (issue 8, numeric safety): inputs that are valid key by
// key but would make an engine produce NaN/inf, overflow its clock or run unbounded are refused
// as InputError (exit code 2) naming the key, before anything runs.

/// A model with neither parameters nor FLOPs (every layer "params": 0, "fwd_flops_per_sample": 0)
/// has no step time: speed-ups and efficiencies would be 0/0. Throws InputError on /model.
void check_has_work(const std::string& file, const model::Scenario& s);

/// Limits of the event engine, checked per sweep point from the analytic step time and the plan:
///  - its clock counts int64 nanoseconds: the simulated span (steps x step time, with room for
///    jitter and a straggler) must stay below 9e9 s and a step must last at least 1 ns;
///  - work: simulation.steps x ranks simulated (cluster.gpus with jitter or a straggler, else 1)
///    x operations per step (micro-batches x (2 x layers + 1) + collectives) <= kEventWorkLimit;
///  - memory: simulation.steps x cluster.gpus per-rank step records <= kEventRecordLimit.
/// Throws InputError naming /simulation/steps (the knob that always helps) with the figures.
inline constexpr double kEventWorkLimit = 2e7;
/// `sweep_work` (optional) adds up the work over a sweep's points, held to the same limit.
inline constexpr double kEventRecordLimit = 6e7;
void check_event_bounds(const std::string& file, const model::Scenario& point, const StepPlan& plan,
                        double analytic_step_s, double* sweep_work = nullptr);

}  // namespace ddpsim::sim
