#include "model/profile/alpha_beta_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
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

std::size_t PiecewiseFit::segment_for(double bytes) const {
  DDPSIM_ASSERT(!segments.empty(), "PiecewiseFit without segments");
  std::size_t i = 0;
  while (i < breakpoints_bytes.size() && bytes >= breakpoints_bytes[i]) ++i;
  return i;
}

double PiecewiseFit::rms_relative_error() const {
  if (relative_residuals.empty()) return 0;
  double sum = 0;
  for (double r : relative_residuals) sum += r * r;
  return std::sqrt(sum / static_cast<double>(relative_residuals.size()));
}

PiecewiseFit fit_piecewise_alpha_beta(const std::vector<double>& bytes,
                                      const std::vector<double>& seconds,
                                      const PiecewiseOptions& options) {
  DDPSIM_ASSERT(bytes.size() == seconds.size(), "fit_piecewise: sizes and times differ in count");
  // One line over everything first: it validates the points and is the k = 1 candidate.
  const AlphaBetaFit whole = fit_alpha_beta(bytes, seconds, options.fit);
  const std::size_t n = bytes.size();

  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bytes[a] < bytes[b]; });
  std::vector<double> xs(n), ts(n), w(n);
  for (std::size_t i = 0; i < n; ++i) {
    xs[i] = bytes[order[i]];
    ts[i] = seconds[order[i]];
    w[i] = options.fit.weighting == FitWeighting::kRelative ? 1.0 / (ts[i] * ts[i]) : 1.0;
  }
  double sw = 0, swt = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sw += w[i];
    swt += w[i] * ts[i];
  }
  double ss_tot = 0;
  for (std::size_t i = 0; i < n; ++i) ss_tot += w[i] * (ts[i] - swt / sw) * (ts[i] - swt / sw);

  // Where a segment may start or end: between two different sizes (equal sizes are never split),
  // and at 0 and n. Past kMaxPiecewiseCuts interior boundaries (a 2,000-size nccl-tests log, a
  // profile of 3,000 rows) an evenly spaced subset of them is searched: every pair of cuts costs
  // one fit over its points, so the search is O(cuts^2 x n) in time and O(cuts^2) in memory
  // (the exact search over every boundary took 98 s and 21 GB for 2,000 sizes).
  std::vector<std::size_t> cuts;
  for (std::size_t j = 0; j <= n; ++j) {
    if (j == 0 || j == n || xs[j] != xs[j - 1]) cuts.push_back(j);
  }
  if (cuts.size() > kMaxPiecewiseCuts + 2) {
    std::vector<std::size_t> thinned{0};
    const std::size_t interior = cuts.size() - 2;
    for (std::size_t q = 1; q <= kMaxPiecewiseCuts; ++q) {
      thinned.push_back(cuts[1 + (q * interior) / (kMaxPiecewiseCuts + 1)]);
    }
    thinned.push_back(n);
    thinned.erase(std::unique(thinned.begin(), thinned.end()), thinned.end());
    cuts = std::move(thinned);
  }
  const std::size_t m = cuts.size();

  // cost[a][b]: weighted residual sum of squares of one line over sorted points
  // [cuts[a], cuts[b]), or infinity when that range may not be a segment (too few points or one
  // size).
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> cost(m, std::vector<double>(m, inf));
  const std::size_t min_pts = std::max<std::size_t>(2, options.min_points);
  std::vector<double> sx, st;
  for (std::size_t a = 0; a + 1 < m; ++a) {
    for (std::size_t b = a + 1; b < m; ++b) {
      const std::size_t i = cuts[a], j = cuts[b];
      if (j - i < min_pts || xs[j - 1] == xs[i]) continue;
      sx.assign(xs.begin() + static_cast<std::ptrdiff_t>(i),
                xs.begin() + static_cast<std::ptrdiff_t>(j));
      st.assign(ts.begin() + static_cast<std::ptrdiff_t>(i),
                ts.begin() + static_cast<std::ptrdiff_t>(j));
      const AlphaBetaFit f = fit_alpha_beta(sx, st, options.fit);
      double ss = 0;
      for (std::size_t q = i; q < j; ++q) {
        const double r = f.predict(xs[q]) - ts[q];
        ss += w[q] * r * r;
      }
      cost[a][b] = ss;
    }
  }

  // best[k][b]: least cost of splitting [0, cuts[b]) into k segments; from[k][b]: the cut where
  // the last one starts.
  const int kmax = std::max(1, options.max_segments);
  std::vector<std::vector<double>> best(kmax + 1, std::vector<double>(m, inf));
  std::vector<std::vector<std::size_t>> from(kmax + 1, std::vector<std::size_t>(m, 0));
  best[0][0] = 0;
  for (int k = 1; k <= kmax; ++k) {
    for (std::size_t b = 1; b < m; ++b) {
      for (std::size_t a = 0; a < b; ++a) {
        if (best[k - 1][a] == inf || cost[a][b] == inf) continue;
        const double c = best[k - 1][a] + cost[a][b];
        if (c < best[k][b]) {
          best[k][b] = c;
          from[k][b] = a;
        }
      }
    }
  }

  // Bayesian information criterion n ln(SS/n) + p ln n with p = 2k + (k - 1) parameters (two
  // per line, one per breakpoint). SS is floored at a relative 1e-16 of the total so that exact
  // fits (SS ~ 1e-30 from rounding) tie and the penalty picks the fewest segments.
  const double nd = static_cast<double>(n);
  const double floor_ss = 1e-16 * ss_tot + 1e-300;
  int chosen = 1;
  double chosen_bic = inf;
  for (int k = 1; k <= kmax; ++k) {
    if (best[k][m - 1] == inf) continue;
    const double bic =
        nd * std::log(std::max(best[k][m - 1], floor_ss) / nd) + (3.0 * k - 1.0) * std::log(nd);
    if (bic < chosen_bic - 1e-9) {
      chosen_bic = bic;
      chosen = k;
    }
  }

  PiecewiseFit p;
  if (chosen == 1 || best[chosen][m - 1] == inf) {
    p.segments.push_back({xs.front(), xs.back(), 0, n, whole});
  } else {
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    std::size_t b = m - 1;
    for (int k = chosen; k >= 1; --k) {
      const std::size_t a = from[k][b];
      ranges.emplace_back(cuts[a], cuts[b]);
      b = a;
    }
    std::reverse(ranges.begin(), ranges.end());
    for (const auto& [i, e] : ranges) {
      sx.assign(xs.begin() + static_cast<std::ptrdiff_t>(i),
                xs.begin() + static_cast<std::ptrdiff_t>(e));
      st.assign(ts.begin() + static_cast<std::ptrdiff_t>(i),
                ts.begin() + static_cast<std::ptrdiff_t>(e));
      p.segments.push_back({xs[i], xs[e - 1], i, e - i, fit_alpha_beta(sx, st, options.fit)});
    }
    for (std::size_t s = 0; s + 1 < p.segments.size(); ++s) {
      p.breakpoints_bytes.push_back(
          std::sqrt(p.segments[s].max_bytes * p.segments[s + 1].min_bytes));
    }
  }

  // Residuals in input order, each from the segment its point was fitted in.
  p.residuals.assign(n, 0);
  p.relative_residuals.assign(n, 0);
  double ss_res = 0;
  for (const FitSegment& seg : p.segments) {
    for (std::size_t q = seg.first_point; q < seg.first_point + seg.point_count; ++q) {
      const double r = seg.fit.predict(xs[q]) - ts[q];
      p.residuals[order[q]] = r;
      p.relative_residuals[order[q]] = r / ts[q];
      ss_res += w[q] * r * r;
    }
  }
  p.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
  return p;
}

}  // namespace ddpsim::model
