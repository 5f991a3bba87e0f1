// noise_scale.hpp: the simple gradient noise scale B_simple = tr(Sigma) / |G|^2 from the two
// gradients a data-parallel step already has — each rank's own gradient (small batch) and the
// averaged one (big batch) — with the unbiased estimators of McCandlish, Kaplan, Amodei and the
// OpenAI Dota team, "An Empirical Model of Large-Batch Training" (2018, arXiv:1812.06162),
// appendix A.1 ("Unbiased estimate of the simple noise scale with no overhead").
//
// G is the true (full-data) gradient, Sigma the covariance of one sample's gradient. The mean
// gradient G_B of B independent samples satisfies E[|G_B|^2] = |G|^2 + tr(Sigma)/B, so two batch
// sizes B_small < B_big give two equations and
//     |G|^2     ~ (B_big |G_big|^2 - B_small |G_small|^2) / (B_big - B_small)
//     tr(Sigma) ~ (|G_small|^2 - |G_big|^2) / (1/B_small - 1/B_big)
// are unbiased. In a DDP step B_small = samples per rank per step (per_gpu_batch x
// grad_accumulation: the rank's accumulated gradient), B_big = the global batch, |G_small|^2 the
// MEAN over ranks of each rank's squared gradient norm (every rank's gradient is an independent
// B_small-sample mean, so the mean over ranks has the same expectation with less variance) and
// |G_big|^2 the squared norm of the averaged gradient. Single estimates are noisy (the |G|^2 one
// can be negative); the paper smooths numerator and denominator separately with an exponential
// moving average before dividing, which is what NoiseScaleTracker does. B_simple is in the
// units of the batch: samples here (tokens for a language model whose batch counts tokens).
//
//   NoiseScaleTracker t(/*b_small=*/16, /*b_big=*/32, /*ema_beta=*/0.95);
//   NoiseStep s = t.add(g_small_sq, g_big_sq);   // per step
//   if (s.b_simple_ema) use(*s.b_simple_ema);     // samples
#pragma once

#include <cstddef>
#include <optional>

namespace ddpsim::exec {

/// The paper's two raw estimates from one step's squared norms (B in samples, B_big > B_small
/// > 0, else ddpsim::Error). |G|^2 in squared gradient units, tr(Sigma) in squared gradient
/// units x samples.
struct NoiseEstimate {
  double g_sq = 0;         ///< estimate of |G|^2 (may be <= 0 for one step)
  double trace_sigma = 0;  ///< estimate of tr(Sigma)
};
NoiseEstimate estimate_noise(double g_small_sq, double g_big_sq, double b_small, double b_big);

/// Sum of squares of n floats, accumulated in double.
double squared_norm(const float* x, std::size_t n);

/// One step of the tracker: the inputs, the raw estimates, their bias-corrected EMAs and the
/// ratios (nullopt where the denominator is not positive, i.e. B_simple is not defined).
struct NoiseStep {
  double g_small_sq = 0, g_big_sq = 0;
  NoiseEstimate raw, ema;
  std::optional<double> b_simple_raw, b_simple_ema;  ///< samples
};

/// Exponential moving averages of the two estimates, ema_t = beta ema_{t-1} + (1 - beta) x_t
/// from ema_0 = 0, divided by (1 - beta^t) (Adam's bias correction, so the first steps are not
/// pulled towards 0; the ratio B_simple is the same either way).
class NoiseScaleTracker {
 public:
  /// b_big > b_small > 0 (samples); 0 <= ema_beta < 1 (0: no smoothing). Else ddpsim::Error.
  NoiseScaleTracker(double b_small, double b_big, double ema_beta);
  NoiseStep add(double g_small_sq, double g_big_sq);
  double b_small() const { return b_small_; }
  double b_big() const { return b_big_; }
  double ema_beta() const { return beta_; }

 private:
  double b_small_, b_big_, beta_;
  double sum_g_sq_ = 0, sum_trace_ = 0, weight_ = 0;  // EMA accumulators and 1 - beta^t
};

}  // namespace ddpsim::exec
