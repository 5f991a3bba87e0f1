#include "model/alpha_beta_fit.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "model/error.hpp"

namespace ddpsim::model {

double AlphaBetaFit::bandwidth() const {
  return b > 0 ? 1.0 / b : std::numeric_limits<double>::infinity();
}

double AlphaBetaFit::rms_relative_error() const {
  if (relative_residuals.empty()) return 0;
  double sum = 0;
  for (double r : relative_residuals) sum += r * r;
  return std::sqrt(sum / static_cast<double>(relative_residuals.size()));
}

AlphaBetaFit fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& seconds,
                            const FitOptions& options) {
  DDPSIM_ASSERT(bytes.size() == seconds.size(), "fit_alpha_beta: sizes and times differ in count");
  const std::size_t n = bytes.size();
  if (n < 2) throw Error("fit_alpha_beta: needs at least two (size, time) points");
  bool distinct = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(bytes[i]) || bytes[i] < 0)
      throw Error("fit_alpha_beta: size #" + std::to_string(i) + " is not a finite value >= 0");
    if (!std::isfinite(seconds[i]) || seconds[i] <= 0)
      throw Error("fit_alpha_beta: time #" + std::to_string(i) + " is not a finite value > 0");
    if (bytes[i] != bytes[0]) distinct = true;
  }
  if (!distinct) throw Error("fit_alpha_beta: needs at least two distinct sizes");

  // Weighted normal equations. Sizes reach 1e10 and S^2 1e20; the sums stay well inside double
  // range, and centring on the weighted mean size keeps the 2x2 solve well conditioned.
  std::vector<double> w(n);
  double sw = 0, sx = 0, sy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    w[i] = options.weighting == FitWeighting::kRelative ? 1.0 / (seconds[i] * seconds[i]) : 1.0;
    sw += w[i];
    sx += w[i] * bytes[i];
    sy += w[i] * seconds[i];
  }
  const double mx = sx / sw;
  const double my = sy / sw;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = bytes[i] - mx;
    const double dy = seconds[i] - my;
    sxx += w[i] * dx * dx;
    sxy += w[i] * dx * dy;
    syy += w[i] * dy * dy;
  }

  AlphaBetaFit fit;
  fit.b = sxy / sxx;
  fit.a = my - fit.b * mx;
  if (options.non_negative && (fit.a < 0 || fit.b < 0)) {
    fit.constrained = true;
    if (fit.b < 0) {
      // Cost independent of size: the weighted mean time.
      fit.b = 0;
      fit.a = my;
    } else {
      // Line through the origin: minimise sum w (t - b S)^2 -> b = sum w S t / sum w S^2.
      double swxy = 0, swxx = 0;
      for (std::size_t i = 0; i < n; ++i) {
        swxy += w[i] * bytes[i] * seconds[i];
        swxx += w[i] * bytes[i] * bytes[i];
      }
      fit.a = 0;
      fit.b = swxy / swxx;
    }
  }

  fit.residuals.resize(n);
  fit.relative_residuals.resize(n);
  double ss_res = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = fit.predict(bytes[i]) - seconds[i];
    fit.residuals[i] = r;
    fit.relative_residuals[i] = r / seconds[i];
    ss_res += w[i] * r * r;
  }
  // syy is the weighted total sum of squares about the weighted mean; with all times equal the
  // line explains everything there is to explain.
  fit.r_squared = syy > 0 ? 1.0 - ss_res / syy : 1.0;
  return fit;
}

}  // namespace ddpsim::model
