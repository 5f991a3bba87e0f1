// measured.hpp: measured step times to draw beside the predictions (the Step time and Scaling
// charts' "measured" points), read from the validation reports `ddpsim validate` writes
// (results/validation-*.json). No Qt here.
//
//   std::vector<MeasuredPoint> m = readMeasured(defaultResultsDir(), "gpt2-xl on 64 H100");
#pragma once

#include <string>
#include <vector>

namespace ddpsim::gui {

/// A measured step time (results/validation-*.json).
struct MeasuredPoint {
  int gpus = 1;
  double stepTimeS = 0;
  std::string source;  ///< file name
};

/// Measured step times from every results/validation-*.json in `resultsDir`: each JSON object
/// with a numeric "gpus" and a numeric "step_time_s" inside a "measured" object (or a
/// "measured_step_time_s"), else a numeric "step_time_s" of its own when no "measured" or
/// "predicted" key names it otherwise. Files that do not parse are skipped; `scenarioName`,
/// when the file names a scenario ("scenario": {"name"} or "scenario_name"), must match it.
std::vector<MeasuredPoint> readMeasured(const std::string& resultsDir,
                                        const std::string& scenarioName);

/// The results/ folder beside the scenarios/ data folder (model::data_dir()), or "" if none.
std::string defaultResultsDir();

}  // namespace ddpsim::gui
