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
//
// Collective libraries switch protocol or algorithm with the message size (NCCL: LL -> LL128 ->
// Simple; Gloo: one algorithm per size class), so one line rarely fits a whole sweep.
// fit_piecewise_alpha_beta fits up to `max_segments` independent lines over contiguous size
// ranges; the breakpoints are the ones that minimise the total weighted squared residual (exact
// search by dynamic programming over the sorted sizes), and the number of segments is the one
// with the lowest Bayesian information criterion, so a split is kept only when it pays for its
// extra parameters.
//
//   PiecewiseFit p = fit_piecewise_alpha_beta(sizes, times);
//   double t = p.predict(3e6);               // seconds, from the segment that covers 3 MB
//   p.segments.back().fit.bandwidth();       // bytes/s of the largest-size protocol
#pragma once

#include <cstddef>
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

/// One segment of a piecewise fit: the line fitted to the points with sizes in
/// [min_bytes, max_bytes] (the measured extent of the segment).
struct FitSegment {
  double min_bytes = 0;
  double max_bytes = 0;
  std::size_t first_point = 0;  ///< index into the size-sorted points
  std::size_t point_count = 0;
  AlphaBetaFit fit;
};

struct PiecewiseOptions {
  FitOptions fit;
  int max_segments = 3;        ///< 1 gives the plain fit_alpha_beta
  std::size_t min_points = 3;  ///< per segment (and at least two distinct sizes)
};

struct PiecewiseFit {
  std::vector<FitSegment> segments;  ///< in increasing size order
  /// Sizes where the next segment takes over: the geometric mean of the last size of a segment
  /// and the first of the next (segments.size() - 1 values). Sweeps are geometric, so this is
  /// the midpoint on the log axis the sweep is measured on.
  std::vector<double> breakpoints_bytes;
  double r_squared = 0;  ///< over all points, same weights as the segments
  /// Per point in INPUT order: predicted minus measured (seconds) and relative to measured.
  std::vector<double> residuals;
  std::vector<double> relative_residuals;

  /// The segment whose range covers `bytes` (by breakpoints; below/above all: first/last).
  std::size_t segment_for(double bytes) const;
  double predict(double bytes) const { return segments[segment_for(bytes)].fit.predict(bytes); }
  double rms_relative_error() const;
};

/// Breakpoints searched by the piecewise fit: every boundary between distinct sizes up to this
/// many (nccl-tests and calibration sweeps have 20-40 sizes: exact), else this many evenly
/// spaced ones, so time is O(cuts^2 x points) and memory O(cuts^2 + points) whatever the input.
inline constexpr std::size_t kMaxPiecewiseCuts = 126;

/// Piecewise alpha-beta fit (see the file comment). Throws ddpsim::Error as fit_alpha_beta when
/// the points cannot determine one line. Equal sizes are never split across segments.
PiecewiseFit fit_piecewise_alpha_beta(const std::vector<double>& bytes,
                                      const std::vector<double>& seconds,
                                      const PiecewiseOptions& options = {});

}  // namespace ddpsim::model
