// Order statistics of normal ranks (simulator/analytic/normal_order_stats.hpp) against reference
// values (Python's statistics.NormalDist for the quantiles; the tables DESIGN.md quotes for
// E[max]).
#include "simulator/analytic/normal_order_stats.hpp"

#include <gtest/gtest.h>

namespace ddpsim::sim {
namespace {

TEST(NormalOrderStatsTest, ExpectedMaximumOfNormals) {
  // The exact values DESIGN.md quotes (the sqrt(2 ln N) shortcut is 15-43% high).
  EXPECT_NEAR(expected_max_std_normal(8), 1.4236, 5e-5);
  EXPECT_NEAR(expected_max_std_normal(64), 2.3437, 5e-5);
  EXPECT_NEAR(expected_max_std_normal(1024), 3.2482, 5e-5);
  EXPECT_EQ(expected_max_std_normal(1), 0.0);
}

TEST(NormalOrderStatsTest, CdfAndQuantilesByReference) {
  // Phi(1) = 0.841344746; Phi^-1(0.975) = 1.959963985 (NormalDist().inv_cdf).
  EXPECT_NEAR(normal_cdf(1.0), 0.8413447460685429, 1e-12);
  EXPECT_NEAR(normal_quantile(0.975), 1.9599639845400536, 1e-9);
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-12);
  // Median of the max of 8: Phi^-1(0.5^(1/8)) = 1.385198; p99 of the max of 64:
  // Phi^-1(0.99^(1/64)) = 3.603428; one normal's median is 0.
  EXPECT_NEAR(max_normal_quantile(8, 0.5), 1.3851980605543786, 1e-9);
  EXPECT_NEAR(max_normal_quantile(64, 0.99), 3.603427530500281, 1e-9);
  EXPECT_NEAR(max_normal_quantile(1, 0.5), 0.0, 1e-12);
}

}  // namespace
}  // namespace ddpsim::sim
