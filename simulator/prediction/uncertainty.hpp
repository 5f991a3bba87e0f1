// uncertainty.hpp: how far to trust a prediction, from how far ddpsim's presets missed published
// training runs of the same class (issue 41 item 2).
//
// `ddpsim fidelity` (results/FIDELITY.md) predicts every published end-to-end training row of
// scenarios/data/published-training.json and writes each row's error with its class to
// scenarios/data/uncertainty.json (`ninja -C build fidelity-update`; the results.FIDELITY.md test
// fails when the committed copy is stale). A row's speed error is e = ddpsim's throughput /
// the published throughput - 1 (e > 0: ddpsim too fast), so the measured step time of a run
// like it is the predicted one x (1 + e). Visible and held-out rows both count: the band is a
// report of past misses, nothing is fitted to it.
//
// The class of a prediction: the GPU family (the preset's GPU name up to its first '-': "h100"),
// the data-parallel strategy and the model size ("<1B", "1-10B", "10-100B", ">=100B"
// parameters). The band is taken from the first of these row sets with at least kMinRows rows:
//   gpu + strategy + size, gpu + size, gpu + strategy, gpu, strategy + size, size, all rows
// and says which one (`matched_on`), so a class with no published run says it borrowed a wider
// one. Statistics: median and max |e|, the median signed e (bias), and the signed min and max,
// which bound the step time as predicted x (1 + min e) .. x (1 + max e).
//
//   auto u = uncertainty_for("h100-sxm", model::Strategy::kFsdp2, 8.03e9);
//   json j = uncertainty_json(*u, step_time_s);
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"

namespace ddpsim::sim {

/// One published training row's miss (scenarios/data/uncertainty.json "rows").
struct PublishedError {
  std::string id;
  std::string gpu;       ///< GPU preset name ("h100-sxm")
  std::string strategy;  ///< strategy_name
  double params = 0;     ///< model parameters
  double speed_error = 0;
  bool held_out = false;
};

/// The error band of a class.
struct Uncertainty {
  std::string gpu_family;  ///< "h100"
  std::string strategy;
  std::string size_class;  ///< "1-10B"
  std::string matched_on;  ///< "gpu, strategy and size", ..., "all rows"
  std::size_t rows = 0;
  double median_abs = 0;  ///< fractions
  double max_abs = 0;
  double median = 0;  ///< signed: > 0, ddpsim usually too fast
  double min = 0;
  double max = 0;
};

/// A class needs this many rows before its own band is used (fewer: the next wider class).
inline constexpr std::size_t kMinRows = 3;

std::string gpu_family(const std::string& gpu_name);
std::string size_class(double params);

/// The band for a class from `rows`; nullopt when `rows` is empty.
std::optional<Uncertainty> uncertainty_from(const std::vector<PublishedError>& rows,
                                            const std::string& gpu_name, model::Strategy strategy,
                                            double params);

/// The rows of data_dir()/data/uncertainty.json, read once (thread-safe); empty when the file is
/// missing (a build without data): every band is then nullopt.
const std::vector<PublishedError>& published_errors();

/// uncertainty_from(published_errors(), ...).
std::optional<Uncertainty> uncertainty_for(const std::string& gpu_name, model::Strategy strategy,
                                           double params);

/// {"class": {"gpu", "strategy", "size"}, "matched_on", "rows", "median_abs_error",
///  "max_abs_error", "median_error", "step_time_s_range": [lo, hi] (when step_time_s > 0),
///  "source"}.
nlohmann::json uncertainty_json(const Uncertainty& u, double step_time_s = 0);

/// One line: "error band (h100, fsdp2, 1-10B; gpu and size, 7 rows): median |error| 4.7%, max
/// 12.0%; ddpsim fast by a median 3.1%".
std::string uncertainty_line(const Uncertainty& u);

/// The generated file's document from the rows (what `ddpsim fidelity` writes).
nlohmann::json published_errors_json(const std::vector<PublishedError>& rows);

}  // namespace ddpsim::sim
