// simulator/cli/validate/stats.hpp by hand: binomial tails, the order-statistic ranks of the 95% CI
// of a median, the CI of a small sample and the measured-best set.
#include "simulator/cli/validate/stats.hpp"

#include <gtest/gtest.h>

namespace v = ddpsim::validate;

TEST(ValidateStats, BinomialHalfCdf) {
  // n = 10: P(B <= 1) = (1 + 10) / 1024, P(B <= 2) = (1 + 10 + 45) / 1024.
  EXPECT_DOUBLE_EQ(v::binomial_half_cdf(10, 1), 11.0 / 1024);
  EXPECT_DOUBLE_EQ(v::binomial_half_cdf(10, 2), 56.0 / 1024);
  EXPECT_DOUBLE_EQ(v::binomial_half_cdf(10, -1), 0.0);
  EXPECT_DOUBLE_EQ(v::binomial_half_cdf(10, 10), 1.0);
  // n = 30: sum of C(30, i), i = 0..9 = 22964087.
  EXPECT_NEAR(v::binomial_half_cdf(30, 9), 22964087.0 / 1073741824.0, 1e-15);
}

TEST(ValidateStats, MedianCiRanks) {
  // n = 10: P(B <= 1) = 0.0107 <= 0.025 < P(B <= 2) = 0.0547: ranks 2 and 9, coverage
  // 1 - 2 x 11/1024.
  v::MedianRanks r = v::median_ci_ranks(10);
  EXPECT_EQ(r.lower, 2);
  EXPECT_EQ(r.upper, 9);
  EXPECT_DOUBLE_EQ(r.coverage, 1 - 22.0 / 1024);
  // n = 30: ranks 10 and 21 (the textbook table), coverage 1 - 2 x 22964087 / 2^30 = 0.9572.
  r = v::median_ci_ranks(30);
  EXPECT_EQ(r.lower, 10);
  EXPECT_EQ(r.upper, 21);
  EXPECT_NEAR(r.coverage, 0.95722605, 1e-8);
  // n = 6 is the smallest with [min, max] >= 95% (1 - 2/64); n = 5 falls short (1 - 2/32).
  r = v::median_ci_ranks(6);
  EXPECT_EQ(r.lower, 1);
  EXPECT_EQ(r.upper, 6);
  EXPECT_DOUBLE_EQ(r.coverage, 1 - 2.0 / 64);
  r = v::median_ci_ranks(5);
  EXPECT_EQ(r.lower, 1);
  EXPECT_EQ(r.upper, 5);
  EXPECT_DOUBLE_EQ(r.coverage, 0.9375);
  r = v::median_ci_ranks(1);
  EXPECT_EQ(r.lower, 1);
  EXPECT_EQ(r.upper, 1);
}

TEST(ValidateStats, MedianCiOfASample) {
  // 10 values, unsorted: sorted 1..10, median 5.5, CI [x_(2), x_(9)] = [2, 9].
  const v::MedianCi c = v::median_ci({7, 3, 10, 1, 5, 9, 2, 8, 4, 6});
  EXPECT_EQ(c.n, 10);
  EXPECT_DOUBLE_EQ(c.median, 5.5);
  EXPECT_DOUBLE_EQ(c.lo, 2);
  EXPECT_DOUBLE_EQ(c.hi, 9);
  EXPECT_DOUBLE_EQ(v::median({3, 1, 2}), 2);
  EXPECT_EQ(v::median_ci({}).n, 0);
}

TEST(ValidateStats, BestSet) {
  // Medians 10, 8, 12, 9: best is index 1 (CI [7, 9]); index 3 (CI [8.5, 10]) overlaps it,
  // index 0 (CI [9.5, 11]) and index 2 (CI [11, 13]) do not.
  std::vector<v::MedianCi> cis(4);
  cis[0] = {30, 10, 9.5, 11, 0.95};
  cis[1] = {30, 8, 7, 9, 0.95};
  cis[2] = {30, 12, 11, 13, 0.95};
  cis[3] = {30, 9, 8.5, 10, 0.95};
  const std::vector<std::size_t> s = v::best_set(cis);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], 1u);
  EXPECT_EQ(s[1], 3u);
  // Touching intervals count as overlapping (lo == hi of the best).
  cis[0].lo = 9;
  EXPECT_EQ(v::best_set(cis).size(), 3u);
}

// Run-to-run spread of per-run medians, by hand: runs 10, 9, 12 ms -> min 9, median 10, max 12,
// half-range (12 - 9) / 2 / 10 = 0.15. An error of 10% is within that noise, one of 20% is not.
TEST(ValidateStats, RunSpread) {
  const v::RunSpread s = v::run_spread({0.010, 0.009, 0.012});
  EXPECT_EQ(s.runs, 3);
  EXPECT_DOUBLE_EQ(s.min, 0.009);
  EXPECT_DOUBLE_EQ(s.median, 0.010);
  EXPECT_DOUBLE_EQ(s.max, 0.012);
  EXPECT_NEAR(s.half_range_relative, 0.15, 1e-12);
  EXPECT_TRUE(v::within_noise(s, 0.10));
  EXPECT_TRUE(v::within_noise(s, -0.10));  // the sign does not matter
  EXPECT_FALSE(v::within_noise(s, 0.20));
  // Even count: median of 4, 6 -> 5; half-range (6 - 4) / 2 / 5 = 0.2.
  EXPECT_NEAR(v::run_spread({4.0, 6.0}).half_range_relative, 0.2, 1e-12);
  // One run: no spread, never "within the noise"; nothing measured: no division by zero.
  const v::RunSpread one = v::run_spread({0.010});
  EXPECT_EQ(one.half_range_relative, 0);
  EXPECT_FALSE(v::within_noise(one, 0.0));
  EXPECT_EQ(v::run_spread({0.0, 0.0}).half_range_relative, 0);
  EXPECT_EQ(v::run_spread({}).runs, 0);
}
