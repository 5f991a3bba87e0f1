// lr_schedule.hpp: learning rate versus global batch and step, and warnings about the batch.
//
// Scaling (training.lr: base rate `base` tuned at global batch `base_batch`, ratio
// k = global_batch / base_batch):
//   linear  peak = base x k          (Goyal et al. 2017, arXiv:1706.02677, §2.1)
//   sqrt    peak = base x sqrt(k)    (their Table 2a compares it; Krizhevsky 2014)
//   none    peak = base
// Warmup (Goyal et al. §2.2, "gradual warmup"): start from the base rate and add a constant
// amount each iteration so that the scaled rate is reached after the warmup (5 epochs there):
//   lr(t) = start + (peak - start) x t / W   for 0 <= t < W,     lr(t) = peak   for t >= W,
// with t the optimizer step counted from 0, W = warmup_steps, start = min(base, peak) (below
// base_batch there is nothing to warm up to: the schedule is flat at peak). W = 0: flat.
//
// Batch-size warnings (batch_size_warnings):
//   - linear scaling past Goyal et al.'s break point: the largest batch whose ResNet-50
//     top-1 error stays within `tolerance_pct` of the kn = 256 baseline in their Figure 3 table
//     (rows goyal-err-kn* of scenarios/data/published-measurements.json): 8,192 (23.74% vs
//     23.60%); the next batch, 16,384, gives 24.79%. Any tolerance in [0.14, 1.19) points gives
//     the same break point; 0.5 is the default.
//   - far past the critical batch: global batch > 10 x B_noise (training.target.critical_batch).
//     With McCandlish et al.'s S = S_min (1 + B_noise / B), at B >= 10 B_noise doubling the
//     batch saves at most 1 / (2 (k + 1)) <= 4.5% of the steps (k = B / B_noise) while doubling
//     the samples processed.
// Not modelled: how warmup changes the steps to a target. Goyal et al. report accuracy with and
// without warmup (Table 1), not steps, and no source in the project's data quantifies it, so
// steps_to_target ignores warmup.
//
//   const model::LrConfig& lr = *scenario.training.lr;
//   double peak = scaled_lr(lr, 8192);                  // 3.2 for base 0.1 at 256, linear
//   double mid  = lr_at_step(lr, 8192, lr.warmup_steps / 2);
//   for (auto& w : batch_size_warnings(8192 * 2, scenario.training)) std::cerr << w << "\n";
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"

namespace ddpsim::sim {

/// The rate after warmup for `global_batch` >= 1 samples (see the file comment).
/// Precondition (asserted): lr.base_batch >= 1.
double scaled_lr(const model::LrConfig& lr, std::int64_t global_batch);

/// The rate at optimizer step `step` >= 0 (0 = the first step) with gradual warmup.
double lr_at_step(const model::LrConfig& lr, std::int64_t global_batch, std::int64_t step);

struct LrPoint {
  std::int64_t step = 0;
  double lr = 0;
};

/// The steps `ddpsim lr` prints: 0, W/4, W/2, 3W/4, W (integer division) and `horizon`, those
/// <= horizon, ascending, without repeats. horizon >= 0.
std::vector<std::int64_t> schedule_steps(std::int64_t warmup_steps, std::int64_t horizon);

/// lr_at_step at schedule_steps(lr.warmup_steps, horizon).
std::vector<LrPoint> lr_schedule(const model::LrConfig& lr, std::int64_t global_batch,
                                 std::int64_t horizon);

/// Goyal et al.'s break point of the linear scaling rule, derived from the published rows.
struct GoyalBreakPoint {
  double tolerance_pct = 0.5;        ///< top-1 error points above the baseline still "flat"
  std::int64_t baseline_batch = 0;   ///< 256 (kn = 256, the paper's reference)
  double baseline_error_pct = 0;     ///< 23.60
  std::string baseline_id;           ///< "goyal-err-kn256"
  std::int64_t last_good_batch = 0;  ///< 8192: the linear rule holds up to here
  double last_good_error_pct = 0;    ///< 23.74
  std::string last_good_id;          ///< "goyal-err-kn8192"
  std::int64_t first_bad_batch = 0;  ///< 16384: the first batch above the tolerance
  double first_bad_error_pct = 0;    ///< 24.79
  std::string first_bad_id;          ///< "goyal-err-kn16384"
};

/// Derives the break point from the rows whose id starts "goyal-err-kn" (global_batch, value in
/// %); the baseline is the row at global batch 256. Throws ddpsim::Error when the rows are
/// missing or no batch exceeds the tolerance.
GoyalBreakPoint goyal_break_point(const nlohmann::json& published_rows, double tolerance_pct = 0.5);

/// The break point from data_dir()/data/published-measurements.json (the presets' scenarios/
/// folder, model/paths.hpp), read once and cached. Throws ddpsim::Error when the file is missing.
const GoyalBreakPoint& default_goyal_break_point();

/// Warnings for training at `global_batch` samples per optimizer step with `training`'s lr and
/// target (either may be absent: no warning then from that rule). One line each, naming the
/// published rows or the scenario keys behind it. Cheap (no I/O after the first call of
/// default_goyal_break_point()), so the analytic model may call it per prediction.
std::vector<std::string> batch_size_warnings(
    std::int64_t global_batch, const model::TrainingConfig& training,
    const GoyalBreakPoint& goyal = default_goyal_break_point());

/// Optimizer steps to training's target at `global_batch` samples per step: with a
/// critical-batch model S_min (1 + B_noise / B) (McCandlish et al. 2018), with a sample target
/// whole steps ceil(samples / B); nullopt without a target. What predictions and the planner's
/// bounds both use.
std::optional<double> steps_to_target(const model::TrainingConfig& training, double global_batch);

/// Above this multiple of B_noise a warning is given (see the file comment).
inline constexpr double kFarPastNoiseScale = 10.0;

}  // namespace ddpsim::sim
