#include "calibrate/exec/noise_scale.hpp"

#include <fmt/format.h>

#include <cmath>

#include "model/error.hpp"

namespace ddpsim::exec {
namespace {

void check_batches(double b_small, double b_big) {
  if (!(b_small > 0) || !(b_big > b_small) || !std::isfinite(b_big)) {
    throw Error(fmt::format(
        "the noise scale needs 0 < B_small < B_big (samples), got B_small {} and B_big {}; "
        "with one rank the two batches are the same and B_simple is not estimable",
        b_small, b_big));
  }
}

}  // namespace

NoiseEstimate estimate_noise(double g_small_sq, double g_big_sq, double b_small, double b_big) {
  check_batches(b_small, b_big);
  // McCandlish et al. 2018, appendix A.1: solve E|G_B|^2 = |G|^2 + tr(Sigma)/B at the two batch
  // sizes. Subtracting the equations gives tr(Sigma) (1/B_small - 1/B_big) = E|G_small|^2 -
  // E|G_big|^2; weighting them by B and subtracting gives |G|^2 (B_big - B_small) =
  // B_big E|G_big|^2 - B_small E|G_small|^2.
  NoiseEstimate e;
  e.g_sq = (b_big * g_big_sq - b_small * g_small_sq) / (b_big - b_small);
  e.trace_sigma = (g_small_sq - g_big_sq) / (1.0 / b_small - 1.0 / b_big);
  return e;
}

double squared_norm(const float* x, std::size_t n) {
  // Eight independent partial sums: one running sum is a chain of dependent double additions
  // (about 4 cycles each, 0.1 s for the 25M parameters of mlp-measure.json), and without
  // -ffast-math the compiler may not reassociate it; eight chains pipeline and vectorise.
  double acc[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += static_cast<double>(x[i + j]) * x[i + j];
  }
  double s = 0;
  for (; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  for (double a : acc) s += a;
  return s;
}

NoiseScaleTracker::NoiseScaleTracker(double b_small, double b_big, double ema_beta)
    : b_small_(b_small), b_big_(b_big), beta_(ema_beta) {
  check_batches(b_small, b_big);
  if (!(ema_beta >= 0 && ema_beta < 1)) {
    throw Error(fmt::format("the noise-scale EMA factor must be in [0, 1), got {}", ema_beta));
  }
}

NoiseStep NoiseScaleTracker::add(double g_small_sq, double g_big_sq) {
  NoiseStep s;
  s.g_small_sq = g_small_sq;
  s.g_big_sq = g_big_sq;
  s.raw = estimate_noise(g_small_sq, g_big_sq, b_small_, b_big_);
  sum_g_sq_ = beta_ * sum_g_sq_ + (1 - beta_) * s.raw.g_sq;
  sum_trace_ = beta_ * sum_trace_ + (1 - beta_) * s.raw.trace_sigma;
  weight_ = beta_ * weight_ + (1 - beta_);  // = 1 - beta^t
  s.ema = {sum_g_sq_ / weight_, sum_trace_ / weight_};
  if (s.raw.g_sq > 0) s.b_simple_raw = s.raw.trace_sigma / s.raw.g_sq;
  if (s.ema.g_sq > 0) s.b_simple_ema = s.ema.trace_sigma / s.ema.g_sq;
  return s;
}

}  // namespace ddpsim::exec
