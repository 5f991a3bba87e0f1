#include "simulator/analytic/normal_order_stats.hpp"

#include <cmath>
#include <map>
#include <mutex>

#include "model/error.hpp"

namespace ddpsim::sim {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double normal_quantile(double p) {
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (normal_cdf(mid) < p)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

double max_normal_quantile(int n, double q) {
  return normal_quantile(std::pow(q, 1.0 / static_cast<double>(n)));
}

double expected_max_std_normal(int n) {
  DDPSIM_ASSERT(n >= 1, "need at least one variable");
  if (n == 1) return 0.0;
  // The integral costs ~1 ms; sweeps ask for the same few n again and again.
  static std::mutex mutex;
  static std::map<int, double> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(n); it != cache.end()) return it->second;
  }
  // E[max] = integral of x * n * phi(x) * Phi(x)^(n-1) dx, Simpson's rule on [-12, 12].
  const int steps = 24000;
  const double a = -12.0, b = 12.0, h = (b - a) / steps;
  double sum = 0;
  for (int i = 0; i <= steps; ++i) {
    const double x = a + i * h;
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    const double f = x * n * phi * std::pow(normal_cdf(x), n - 1);
    sum += f * (i == 0 || i == steps ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0));
  }
  const double value = sum * h / 3.0;
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(n, value);
  return value;
}

}  // namespace ddpsim::sim
