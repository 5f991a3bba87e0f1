// alpha_beta_fit.hpp: least-squares fit of the alpha-beta cost line t(S) = a + b*S.
//
// Collective and copy times are modelled as a fixed cost plus a per-byte cost. Given measured
// (size, time) points, fit_alpha_beta returns the intercept a (seconds), the slope b (seconds
// per byte), the coefficient of determination and per-point residuals. It is used to fit the
// hardware presets to published nccl-tests sweeps (scenarios/hardware/*.json) and by
// calibration to fit measured sweeps.
//
// Sizes of a sweep span 8 B to many GB and times span microseconds to seconds, so an ordinary
// (unweighted) fit would be decided by the few largest points. The default weighting is
// therefore 1/t^2: it minimises the sum of squared *relative* errors, sum(((t_i - p_i)/t_i)^2),
// so every size counts alike.
//
// Units: bytes and seconds in, a in seconds and b in seconds/byte out. To turn the fit into the
// cost-model constants, divide by the algorithm's step count and volume factor, e.g. for a ring
// AllReduce over n ranks a = 2(n-1)*alpha and b = (2(n-1)/n) / (eta*B).
//
//   AlphaBetaFit f = fit_alpha_beta({1024, 1048576, 1073741824}, {45e-6, 51e-6, 8.2e-3});
//   double alpha = f.a;            // seconds
//   double bw = f.bandwidth();     // bytes/s = 1/b
#pragma once

#include <vector>

namespace ddpsim::model {

enum class FitWeighting {
  kRelative,  ///< weights 1/t_i^2: minimises squared relative error (default)
  kUniform,   ///< ordinary least squares on seconds
};

struct FitOptions {
  FitWeighting weighting = FitWeighting::kRelative;
  /// Keep a >= 0 and b >= 0 (a negative latency or a negative cost per byte is unphysical and
  /// would make predictions at small or large sizes negative). When the unconstrained optimum
  /// violates a bound, that parameter is fixed at 0 and the other one refitted alone.
  bool non_negative = true;
};

struct AlphaBetaFit {
  double a = 0;              ///< intercept, seconds (fixed cost of the operation)
  double b = 0;              ///< slope, seconds per byte
  double r_squared = 0;      ///< weighted R^2 = 1 - SS_res/SS_tot, both with the fit's weights
  bool constrained = false;  ///< true when a non-negativity bound was active
  /// Per point, in input order: predicted minus measured, seconds.
  std::vector<double> residuals;
  /// Per point: (predicted - measured) / measured.
  std::vector<double> relative_residuals;

  /// Predicted time for `bytes`, seconds.
  double predict(double bytes) const { return a + b * bytes; }
  /// 1/b, bytes/s (infinite when b == 0).
  double bandwidth() const;
  /// Root mean square of relative_residuals.
  double rms_relative_error() const;
};

/// Fits t = a + b*S to the points (bytes[i], seconds[i]).
/// Preconditions (asserted): bytes.size() == seconds.size().
/// Throws ddpsim::Error when the data cannot determine a line: fewer than two points, fewer than
/// two distinct sizes, or a size < 0, a time <= 0 or a non-finite value.
AlphaBetaFit fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& seconds,
                            const FitOptions& options = {});

}  // namespace ddpsim::model
