// fit_check.hpp: does a profile's fitted collective model predict an independent sweep?
//
// Issue 5's acceptance test: "the fitted AllReduce model predicts a second, independent sweep
// (sizes not in the first, measured in another run) within 10% at every size above 64 KiB".
// The second sweep is `ddpsim-collectives --size-offset 1.5` (12, 24, 48, ... B: the geometric
// midpoints of the profile's powers of two); check_fit predicts each of its out-of-place rows
// two ways and compares with the measured median:
//   fit     the op's piecewise alpha-beta fit (PiecewiseFit::predict: the segment covering the
//           size), the "fitted model" of the issue: this column decides pass/fail;
//   lookup  Profile::collective_time_s (what the simulator uses: log-log interpolation between
//           the profile's rows inside its sizes, the fit outside), reported beside it.
// error = (predicted - measured) / measured. A size is judged when it is above `above_bytes`
// (64 KiB) and inside the profile's measured sizes (the fit is not asked to extrapolate);
// it fails when |fit error| > tolerance (10%).
//
//   FitCheck r = check_fit(profile, second_sweep_section, CollectiveOp::kAllReduce);
//   std::puts(format_fit_check(r).c_str());   // Markdown table, one row per size
//   return r.failures == 0 ? 0 : 1;
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/profile/profile.hpp"

namespace ddpsim::calib {

struct FitCheckRow {
  double size_bytes = 0;
  double measured_s = 0;  ///< the second sweep's median
  double measured_min_s = 0;
  double measured_max_s = 0;
  int repeats = 0;
  double fit_s = 0;
  double lookup_s = 0;
  bool lookup_extrapolated = false;
  double fit_error = 0;     ///< (fit - measured) / measured
  double lookup_error = 0;  ///< (lookup - measured) / measured
  bool in_profile = false;  ///< the profile has a row at this very size (not independent)
  bool judged = false;      ///< above above_bytes and inside the profile's sizes
  bool ok = true;           ///< not judged, or |fit_error| <= tolerance
};

struct FitCheck {
  std::string op;
  int ranks = 0;
  double above_bytes = 0;
  double tolerance = 0;
  std::vector<FitCheckRow> rows;
  int judged = 0;
  int failures = 0;
  double max_abs_fit_error = 0;  ///< over judged rows
};

/// `sweep` is a "collectives" section (ddpsim-collectives --json) or a whole profile. Throws
/// InputError (naming `sweep_file`) when it lacks the op's table or measured another rank count,
/// Error when the profile has no table for the op.
FitCheck check_fit(const model::Profile& profile, const nlohmann::json& sweep,
                   const std::string& sweep_file, model::CollectiveOp op,
                   double above_bytes = 64.0 * 1024, double tolerance = 0.10);

/// Markdown table (size, measured median and min..max, fit and lookup predictions with their
/// errors, verdict) and a one-line summary.
std::string format_fit_check(const FitCheck& r);

}  // namespace ddpsim::calib
