// Tests of the gradient noise scale (calibrate/exec/noise_scale.hpp): McCandlish et al. 2018,
// appendix A.1's two-batch estimators on hand-computed vectors, their convergence on synthetic
// gradients of known covariance, and the executor's end-to-end noise_scale block.
#include "calibrate/exec/noise_scale.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "model/error.hpp"

namespace {

using ddpsim::exec::estimate_noise;
using ddpsim::exec::NoiseScaleTracker;
using ddpsim::exec::squared_norm;
namespace fs = std::filesystem;
using nlohmann::json;

TEST(NoiseScale, TwoRanksByHand) {
  // Rank gradients g1 = (1, 2), g2 = (3, 0), each the mean of B_small = 4 samples; B_big = 8.
  // |g1|^2 = 5, |g2|^2 = 9: |G_small|^2 = 7. Average (2, 1): |G_big|^2 = 5.
  // |G|^2 ~ (8*5 - 4*7) / (8 - 4) = 12/4 = 3; tr(Sigma) ~ (7 - 5) / (1/4 - 1/8) = 16;
  // B_simple = 16/3 samples.
  const std::vector<float> g1{1, 2}, g2{3, 0}, avg{2, 1};
  const double small = 0.5 * (squared_norm(g1.data(), 2) + squared_norm(g2.data(), 2));
  const double big = squared_norm(avg.data(), 2);
  EXPECT_DOUBLE_EQ(small, 7.0);
  EXPECT_DOUBLE_EQ(big, 5.0);
  const auto e = estimate_noise(small, big, 4, 8);
  EXPECT_DOUBLE_EQ(e.g_sq, 3.0);
  EXPECT_DOUBLE_EQ(e.trace_sigma, 16.0);
  NoiseScaleTracker t(4, 8, 0.9);
  const auto s = t.add(small, big);
  ASSERT_TRUE(s.b_simple_raw && s.b_simple_ema);
  EXPECT_DOUBLE_EQ(*s.b_simple_raw, 16.0 / 3.0);
  EXPECT_DOUBLE_EQ(*s.b_simple_ema, 16.0 / 3.0);  // bias-corrected: the first EMA is the value
}

TEST(NoiseScale, ExactExpectationsGiveTheTruth) {
  // E|G_B|^2 = |G|^2 + tr(Sigma)/B: fed the exact expectations, the estimators return |G|^2 = 2
  // and tr(Sigma) = 96 (B_simple 48) for any pair of batches.
  for (const auto& [bs, bb] : {std::pair{1.0, 2.0}, {16.0, 128.0}, {3.0, 5.0}}) {
    const auto e = estimate_noise(2 + 96 / bs, 2 + 96 / bb, bs, bb);
    EXPECT_NEAR(e.g_sq, 2.0, 1e-12) << bs << " " << bb;
    EXPECT_NEAR(e.trace_sigma, 96.0, 1e-10) << bs << " " << bb;
  }
}

TEST(NoiseScale, EmaSmoothsNumeratorAndDenominatorSeparately) {
  // beta 0.5, B_small 1, B_big 2: step 1 (small 3, big 2) gives |G|^2 = (2*2 - 3)/1 = 1,
  // tr = (3 - 2)/(1/2) = 2; step 2 (small 6, big 4) gives |G|^2 = 2, tr = 4. Accumulators
  // 0.5*(0.5*1) + 0.5*2 = 1.25 and 2.5, weight 1 - 0.5^2 = 0.75: EMAs 5/3 and 10/3.
  NoiseScaleTracker t(1, 2, 0.5);
  t.add(3, 2);
  const auto s2 = t.add(6, 4);
  EXPECT_DOUBLE_EQ(s2.ema.g_sq, 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(s2.ema.trace_sigma, 10.0 / 3.0);
  const auto s3 = t.add(2, 1.5);
  EXPECT_DOUBLE_EQ(s3.raw.g_sq, 1.0);
  EXPECT_DOUBLE_EQ(s3.raw.trace_sigma, 1.0);
  // Accumulators: g: 0.5 -> 0.25+1 = 1.25 -> 0.625+0.5 = 1.125; tr: 1 -> 2.5 -> 1.75;
  // weight 1 - 0.5^3 = 0.875. Ratio of EMAs 1.75/1.125 = 14/9, not the EMA of ratios (2, 2, 1).
  EXPECT_DOUBLE_EQ(s3.ema.g_sq, 1.125 / 0.875);
  EXPECT_DOUBLE_EQ(s3.ema.trace_sigma, 1.75 / 0.875);
  ASSERT_TRUE(s3.b_simple_ema);
  EXPECT_DOUBLE_EQ(*s3.b_simple_ema, 14.0 / 9.0);
}

TEST(NoiseScale, NotEstimableWithOneBatchSize) {
  EXPECT_THROW(estimate_noise(1, 1, 16, 16), ddpsim::Error);
  EXPECT_THROW(NoiseScaleTracker(16, 16, 0.9), ddpsim::Error);
  EXPECT_THROW(NoiseScaleTracker(16, 32, 1.0), ddpsim::Error);
  // A non-positive smoothed |G|^2 leaves B_simple undefined rather than negative.
  NoiseScaleTracker t(1, 2, 0.0);
  const auto s = t.add(3, 1);  // |G|^2 = (2 - 3)/1 = -1
  EXPECT_FALSE(s.b_simple_raw);
  EXPECT_FALSE(s.b_simple_ema);
}

TEST(NoiseScale, ConvergesOnSyntheticGradientsOfKnownCovariance) {
  // True gradient G (D = 256, |G|^2 = 1) and per-sample noise covariance Sigma = diag(s_i) with
  // s_i proportional to i + 1 and tr(Sigma) = 64: B_simple = 64 samples. Each of N = 4 ranks
  // sees the mean of B_small = 16 samples, g_r = G + N(0, Sigma/16); the global batch is 64.
  // Per step the |G|^2 estimate has a standard deviation of about 0.1 and tr(Sigma)'s about 4;
  // an EMA with beta 0.995 (effective window ~400 steps) over 4000 steps leaves about 1% on
  // each, so 5% is a safe bound, and the plain means of 4000 raw estimates (unbiased) are held to
  // 2% (|G|^2) and 3% (tr(Sigma)). Seeded: deterministic.
  constexpr int kDim = 256, kRanks = 4, kSteps = 4000;
  constexpr double kBSmall = 16, kTrace = 64;
  std::vector<double> g(kDim), sd(kDim);
  double weight_sum = 0;
  for (int i = 0; i < kDim; ++i) weight_sum += i + 1;
  for (int i = 0; i < kDim; ++i) {
    g[i] = (i % 2 ? 1.0 : -1.0) / std::sqrt(static_cast<double>(kDim));
    sd[i] = std::sqrt(kTrace * (i + 1) / weight_sum / kBSmall);  // of the 16-sample mean
  }
  std::mt19937_64 rng(20181217);
  std::normal_distribution<double> z(0.0, 1.0);
  NoiseScaleTracker t(kBSmall, kBSmall * kRanks, 0.995);
  double mean_g_sq = 0, mean_trace = 0;
  ddpsim::exec::NoiseStep last;
  for (int step = 0; step < kSteps; ++step) {
    std::vector<float> avg(kDim, 0.0f);
    double small = 0;
    for (int r = 0; r < kRanks; ++r) {
      std::vector<float> gr(kDim);
      for (int i = 0; i < kDim; ++i) {
        gr[i] = static_cast<float>(g[i] + sd[i] * z(rng));
        avg[i] += gr[i] / kRanks;
      }
      small += squared_norm(gr.data(), kDim) / kRanks;
    }
    last = t.add(small, squared_norm(avg.data(), kDim));
    mean_g_sq += last.raw.g_sq / kSteps;
    mean_trace += last.raw.trace_sigma / kSteps;
  }
  EXPECT_NEAR(mean_g_sq, 1.0, 0.02);
  EXPECT_NEAR(mean_trace, kTrace, 0.03 * kTrace);
  ASSERT_TRUE(last.b_simple_ema);
  EXPECT_NEAR(*last.b_simple_ema, 64.0, 0.05 * 64.0);
}

// ddpsim-exec end to end: 2 ranks write a finite positive smoothed B_simple.
class NoiseScaleExec : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() / ("ddpsim-noise-test-" + std::to_string(::getpid()) + "-" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    scenario_ = (fs::path(DDPSIM_TEST_DATA_DIR) / "exec" / "mlp-small.json").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  json run(const std::string& args, const std::string& name) {
    const fs::path out = dir_ / name;
    const std::string cmd = std::string(DDPSIM_EXEC_BIN) + " " + scenario_ + " " + args +
                            " --out " + out.string() + " > /dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
    std::ifstream f(out);
    return json::parse(f).at("results").at(0).at("noise_scale");
  }
  fs::path dir_;
  std::string scenario_;
};

TEST_F(NoiseScaleExec, TwoRanksWriteAFinitePositiveBSimple) {
  const json ns = run("--nproc 2 --per-gpu-batch 16 --steps 5", "two.json");
  EXPECT_TRUE(ns.at("estimable").get<bool>());
  EXPECT_EQ(ns.at("unit"), "samples");
  EXPECT_EQ(ns.at("b_small"), 16);
  EXPECT_EQ(ns.at("b_big"), 32);
  ASSERT_TRUE(ns.at("b_simple").is_number());
  const double b = ns.at("b_simple").get<double>();
  EXPECT_TRUE(std::isfinite(b) && b > 0) << b;
  EXPECT_EQ(ns.at("collective").at("bytes_per_rank"), 8);
  const auto& steps = ns.at("steps");
  ASSERT_EQ(steps.size(), 6u);  // 1 warm-up + 5
  for (const json& s : steps) {
    // The mean of squared norms is at least the squared norm of the mean (Jensen), so every
    // tr(Sigma) estimate is >= 0; equality would mean both ranks had the same gradient.
    EXPECT_GT(s.at("g_small_sq").get<double>(), s.at("g_big_sq").get<double>());
    EXPECT_GE(s.at("trace_sigma").get<double>(), 0.0);
    EXPECT_GT(s.at("collective_time_s").get<double>(), 0.0);
  }
  // The smoothed value is the ratio of the last smoothed numerator and denominator.
  EXPECT_DOUBLE_EQ(b, steps.back().at("trace_sigma_ema").get<double>() /
                          steps.back().at("g_sq_ema").get<double>());
}

TEST_F(NoiseScaleExec, AveragedGradientIsTheOneRankGradientOfTheWholeBatch) {
  // DistributedSampler interleaves the samples, so 2 ranks x 16 see the same 32 samples as
  // 1 rank x 32 and start from the same (rank 0's) weights: in step 1 the averaged gradient's
  // squared norm equals the single rank's, up to float summation order. 1 rank is reported as
  // not estimable; ZeRO-1 sums the shards' squares to the same |G_big|^2.
  const json one = run("--nproc 1 --per-gpu-batch 32 --steps 1", "one.json");
  EXPECT_FALSE(one.at("estimable").get<bool>());
  EXPECT_NE(one.at("reason").get<std::string>().find("B_big > B_small"), std::string::npos);
  EXPECT_TRUE(one.at("b_simple").is_null());
  const json two = run("--nproc 2 --per-gpu-batch 16 --steps 1", "two.json");
  const double g1 = one.at("steps")[0].at("g_big_sq").get<double>();
  const double g2 = two.at("steps")[0].at("g_big_sq").get<double>();
  EXPECT_GT(g1, 0.0);
  EXPECT_NEAR(g2, g1, 1e-5 * g1);
  // Accumulation: 2 ranks x 2 micro-batches of 8 — the rank's accumulated gradient is its
  // B_small = 16 gradient, the same samples as 2 x 16.
  const json acc = run("--nproc 2 --per-gpu-batch 8 --grad-accumulation 2 --steps 1", "acc.json");
  EXPECT_EQ(acc.at("b_small"), 16);
  EXPECT_NEAR(acc.at("steps")[0].at("g_small_sq").get<double>(),
              two.at("steps")[0].at("g_small_sq").get<double>(),
              1e-5 * two.at("steps")[0].at("g_small_sq").get<double>());
  json doc;
  {
    std::ifstream f(scenario_);
    doc = json::parse(f);
  }
  doc["parallelism"]["strategy"] = "zero1";
  scenario_ = (dir_ / "zero1-scenario.json").string();
  std::ofstream(scenario_) << doc.dump();
  const json z1 = run("--nproc 2 --per-gpu-batch 16 --steps 1 --noise-ema 0.5", "z1.json");
  EXPECT_EQ(z1.at("ema_beta"), 0.5);
  EXPECT_EQ(z1.at("collective").at("bytes_per_rank"), 16);
  EXPECT_NEAR(z1.at("steps")[0].at("g_big_sq").get<double>(), g1, 1e-5 * g1);
  EXPECT_NEAR(z1.at("steps")[0].at("g_small_sq").get<double>(),
              two.at("steps")[0].at("g_small_sq").get<double>(),
              1e-5 * two.at("steps")[0].at("g_small_sq").get<double>());
}

}  // namespace
