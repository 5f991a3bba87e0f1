// stats.hpp: the statistics of `ddpsim validate` — medians, a distribution-free confidence
// interval for a median, and the "measured best" bucket size set.
//
// Median CI (order statistics; e.g. Conover, Practical Nonparametric Statistics, 3rd ed.,
// sec. 3.2): for n samples sorted x_(1) <= ... <= x_(n), the number of samples below the true
// median is Binomial(n, 1/2), so [x_(l), x_(n-l+1)] covers the median with probability
// 1 - 2 P(B <= l-1), B ~ Bin(n, 1/2). l is the largest rank with P(B <= l-1) <= (1-level)/2, which
// makes the coverage at least `level`: n = 10 gives ranks 2 and 9 (coverage 97.9%), n = 30 ranks
// 10 and 21 (95.7%). No assumption on the distribution of step times (they are skewed: a loaded
// machine adds long steps). Below n = 6 even [min, max] covers less than 95% (n = 5: 93.8%);
// the interval is then [min, max] and `coverage` says what it is.
//
// Run-to-run spread (run_spread): over the medians of K runs of one point (--repeat K), min,
// median, max and the relative half-range (max - min) / 2 / median. The error a point reports is
// within the noise (within_noise) when that half-range exceeds |error|: another run could have
// reported an error of the other sign or none. One run has no spread (runs = 1, half-range 0).
//
// Measured best bucket size (best_set): b* = the size with the smallest median; the set is every
// size whose CI overlaps b*'s (lo_b <= hi_b*), i.e. the sizes the measurement cannot tell apart
// from the best. The predicted best passes when it lies in that set.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace ddpsim::validate {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/// P(B <= k) for B ~ Binomial(n, 1/2).
inline double binomial_half_cdf(int n, int k) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  double term = std::pow(0.5, n);  // P(B = 0)
  double sum = term;
  for (int i = 1; i <= k; ++i) {
    term *= static_cast<double>(n - i + 1) / static_cast<double>(i);
    sum += term;
  }
  return sum;
}

/// 1-based ranks [lower, upper] of the order-statistic CI for the median at `level`, and its
/// exact coverage. n >= 1.
struct MedianRanks {
  int lower = 1, upper = 1;
  double coverage = 0;
};
inline MedianRanks median_ci_ranks(int n, double level = 0.95) {
  MedianRanks r;
  const double tail = (1 - level) / 2;
  int l = 1;
  while (l + 1 <= (n + 1) / 2 && binomial_half_cdf(n, l) <= tail) ++l;
  r.lower = l;
  r.upper = n - l + 1;
  r.coverage = 1 - 2 * binomial_half_cdf(n, l - 1);
  return r;
}

struct MedianCi {
  int n = 0;
  double median = 0, lo = 0, hi = 0, coverage = 0;
};
inline MedianCi median_ci(std::vector<double> v, double level = 0.95) {
  MedianCi c;
  c.n = static_cast<int>(v.size());
  if (v.empty()) return c;
  std::sort(v.begin(), v.end());
  c.median = median(v);
  const MedianRanks r = median_ci_ranks(c.n, level);
  c.lo = v[static_cast<std::size_t>(r.lower - 1)];
  c.hi = v[static_cast<std::size_t>(r.upper - 1)];
  c.coverage = r.coverage;
  return c;
}

struct RunSpread {
  int runs = 0;
  double min = 0, median = 0, max = 0;
  double half_range_relative = 0;  ///< (max - min) / 2 / median; 0 when median is 0
};
inline RunSpread run_spread(const std::vector<double>& per_run) {
  RunSpread s;
  s.runs = static_cast<int>(per_run.size());
  if (per_run.empty()) return s;
  const auto [lo, hi] = std::minmax_element(per_run.begin(), per_run.end());
  s.min = *lo;
  s.max = *hi;
  s.median = median(per_run);
  s.half_range_relative = s.median > 0 ? (s.max - s.min) / 2 / s.median : 0;
  return s;
}
/// The run-to-run spread exceeds |relative_error|: the error is within the noise (needs at
/// least two runs).
inline bool within_noise(const RunSpread& s, double relative_error) {
  return s.runs >= 2 && s.half_range_relative > std::abs(relative_error);
}

/// Indices of the sizes that cannot be told apart from the best (smallest median): their CI's
/// lower end is at most the best's upper end. The best comes first.
inline std::vector<std::size_t> best_set(const std::vector<MedianCi>& cis) {
  std::vector<std::size_t> out;
  if (cis.empty()) return out;
  std::size_t best = 0;
  for (std::size_t i = 1; i < cis.size(); ++i) {
    if (cis[i].median < cis[best].median) best = i;
  }
  out.push_back(best);
  for (std::size_t i = 0; i < cis.size(); ++i) {
    if (i != best && cis[i].lo <= cis[best].hi) out.push_back(i);
  }
  return out;
}

}  // namespace ddpsim::validate
