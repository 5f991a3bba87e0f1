// report.hpp: predictions as JSON (the contract in docs/DESIGN.md), tables and CSV.
//
// JSON: {"context": {...}, "scenario": {...}, "results": [ one object per sweep point ]}.
// Each result holds at least the keys of the `ddpsim predict --format json` contract; keys whose
// value this version does not compute are null and a warning in that result says why.
// Results files are written atomically (model/atomic_file.hpp).
//
//   nlohmann::json j = results_json(scenario, points, predictions, "analytic");
//   model::write_file_atomic("results/x.json", j.dump(2) + "\n");
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "simulator/prediction/prediction.hpp"
#include "simulator/prediction/uncertainty.hpp"

namespace ddpsim::sim {

/// The "context" block: tool version, git revision, host, date (UTC), device, library versions.
nlohmann::json context_json(const std::string& engine);

/// The "scenario" block: file, name, model label and name, parameters, tensors, hardware, GPU.
nlohmann::json scenario_json(const model::Scenario& s);

/// The error band of a point's class (GPU family, strategy, model size; uncertainty.hpp), or
/// nullopt without scenarios/data/uncertainty.json.
std::optional<Uncertainty> point_uncertainty(const model::Scenario& point, const Prediction& p);

/// One result object (the contract keys plus first_step_time_s, bucket detail, sweep point,
/// "uncertainty").
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

/// Throws std::logic_error (an internal error, exit code 1) if any number in `j` is NaN or
/// infinite: the report seam guard. Every JSON document the CLI writes passes through it before
/// a byte is written (results_json, plan_json, published_json, `ddpsim lr`); the table and CSV are
/// printed from the same predictions after results_json, so they are covered too.
void check_finite(const nlohmann::json& j, const std::string& where = "");

}  // namespace ddpsim::sim
