// points.hpp: one sweep point of ddpsim-validate from prediction to comparison. A point is
// predicted on its rank count's profile with both engines through the run API (analytic, and the
// event engine with every knob of the scenario over the measured steps), measured by
// ddpsim-exec (rank 0's non-warm-up steps of every repetition, and with --efficiency every
// rank's steps of N independent processes), and compared per quantity (report.hpp's rows).
//
//   Point p = predict_validation_point(o, base, s, profile.path, steps);
//   measure(o, p, 0, false, steps, sibling("ddpsim-exec"), tmp.path);
//   nlohmann::json j = point_json(p, profile.kept, o.efficiency, repeat, steps);
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/interrupt.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/cli/validate/options.hpp"
#include "simulator/prediction/prediction.hpp"

namespace ddpsim::validate {

/// The quantities compared, in the keys both `ddpsim predict` and ddpsim-exec write.
inline constexpr const char* kQuantities[] = {"step_time_s",      "forward_time_s",
                                              "backward_time_s",  "exposed_comm_s",
                                              "optimizer_time_s", "comm_time_s"};
inline constexpr const char* kCapKey = "parallelism.bucket_cap_mb";

/// One sweep point: the plain scenario the executor runs, its rank count, the predictions and
/// the measurements.
struct Point {
  nlohmann::json label;  ///< the sweep values ({} for an unswept scenario)
  nlohmann::json doc;    ///< plain scenario (no sweep)
  int ranks = 1;
  double cap_mb = 0;
  bool overlap = true;
  sim::Prediction analytic, event;
  nlohmann::json analytic_json, event_json;
  nlohmann::json workload;  ///< --runner torch: ddpsim's workload for the runner (torch_runner.hpp)
  // Measured rows (rank 0's non-warm-up steps of every repetition), per mode.
  std::vector<nlohmann::json> ddp_steps, indep_steps;
  std::vector<double> rep_ddp_median, rep_indep_median;
  /// Per quantity of kQuantities, each DDP run's median (the run-to-run spread, stats.hpp).
  std::map<std::string, std::vector<double>> rep_quantity_median;
  /// --recalibrate-each: per quantity, the prediction on each repetition's own calibration
  /// (analytic and event; empty otherwise).
  std::map<std::string, std::vector<double>> rep_predicted_analytic, rep_predicted_event;
  nlohmann::json measured_buckets_last = nlohmann::json::array();
};

/// Sweep point `s` of `base` as the plain scenario the runner measures: the sweep applied, o.nproc
/// or its cluster.gpus ranks, relative paths made absolute.
nlohmann::json point_scenario(const Options& o, const model::Scenario& base,
                              const model::Scenario& s);

/// Where point i's scenario (and, for --runner torch, its workload) is written in `tmp`.
std::filesystem::path point_file(const std::filesystem::path& tmp, std::size_t i);
std::filesystem::path workload_file(const std::filesystem::path& tmp, std::size_t i);

/// Writes point_file(tmp, i) (and workload_file when p.workload is set) atomically, every
/// write checked (model::FileWriteError: a full disk is an error, never an empty file); each
/// file is added to `outputs` when given (--points-dir: all of the run's files or none).
void write_point_files(const Point& p, std::size_t i, const std::filesystem::path& tmp,
                       model::RunOutputs* outputs = nullptr);

/// Sweep point `s` of `base` as a plain scenario (the sweep applied, o.nproc or its cluster.gpus
/// ranks, apply_runner_defaults) predicted on `profile` with both engines (the event engine over
/// max(steps, 2) steps) through the run API alone: what `ddpsim predict POINT --profile
/// PROFILE` gives. `torch_facts` (--runner torch: torch_check_points' answer) says what the
/// runner's torch does.
Point predict_validation_point(const Options& o, const model::Scenario& base,
                               const model::Scenario& s, const std::string& profile, int steps,
                               const nlohmann::json& torch_facts = nullptr);

/// --recalibrate-each: appends `fresh`'s predictions (the point predicted on another
/// calibration) to `into`'s per-repetition predictions.
void record_prediction(Point& into, const Point& fresh);

/// Runs ddpsim-exec (o.runner "torch": calibrate/torch/ddp_runner.py, `exec` unused) on point `p`
/// (the i-th) once, `steps` steps, as DDP or as N independent processes; appends its non-warm-up
/// step rows and this run's median step.
void measure(const Options& o, Point& p, std::size_t i, bool independent, int steps,
             const std::filesystem::path& exec, const std::filesystem::path& tmp);

/// The point's block of the validation document: "point", "gpus", "bucket_count", "rows" (every
/// quantity and bucket end: predicted by both engines vs the measured median), the measured
/// step's median and 95% CI, per step quantity the run-to-run "spread" (stats.hpp; with
/// --recalibrate-each also "predicted_spread" over the calibrations) and "error_within_noise"
/// (the quantities whose spread exceeds their |error|), the predicted interval and sources,
/// "profile" (`profile_kept`), "warnings", and with `efficiency` the DDP-overhead block.
nlohmann::json point_json(const Point& p, const std::string& profile_kept, bool efficiency,
                          int repeat, int steps);

/// point_json's rows (and efficiency line) as the fixed-width text ddpsim-validate prints.
std::string point_table(const Point& p, const nlohmann::json& pj);

/// Points that differ only in the bucket cap, grouped: per cap the measured median step and its
/// CI, the measured best set, the predicted best (analytic and event) and whether it is in it.
/// Empty when the sweep has no parallelism.bucket_cap_mb axis.
nlohmann::json bucket_choice_json(const std::vector<Point>& points);

}  // namespace ddpsim::validate
