// normal_order_stats.hpp: order statistics of per-rank variation. A synchronous step waits for
// the slowest rank, so with normally distributed per-rank compute (coefficient of variation cv)
// the step scales with the maximum of n standard normals: its expectation (1.4236 for n = 8,
// 2.3437 for 64, 3.2482 for 1024; the sqrt(2 ln n) shortcut is 15-43% high, DESIGN.md) and its
// quantiles (the p50 and p99 step of a jittered run).
//
//   double slowest = 1 + cv * expected_max_std_normal(64);
//   double p99 = 1 + cv * max_normal_quantile(64, 0.99);
#pragma once

namespace ddpsim::sim {

/// The standard normal CDF Phi(x).
double normal_cdf(double x);

/// Phi^-1(p) for p in (0, 1), by bisection (monotone, exact to 1e-12).
double normal_quantile(double p);

/// Quantile q of the maximum of n independent standard normals: P(max <= x) = Phi(x)^n, so
/// x = Phi^-1(q^(1/n)).
double max_normal_quantile(int n, double q);

/// Expected maximum of n independent standard normal variables (E[max]), by numerical
/// integration: 1.4236 for n = 8, 2.3437 for 64, 3.2482 for 1024; 0 for n = 1.
double expected_max_std_normal(int n);

}  // namespace ddpsim::sim
