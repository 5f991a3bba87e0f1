// The analytic model on a calibration profile: measured GEMM, all-reduce and optimizer times
// replace the model's, the prediction says which did, and the step interval comes from the
// profile's spread. tests/data/profile/tiny-profile.json is written by hand for
// tiny-mlp.json (a 64-128-32 MLP, no bias, no activation, batch 8, 2 ranks, bucket cap 0.015 MB):
//   GEMMs (median / p10 / p90 = x1 / x0.8 / x1.5): fc0.fwd 1 ms, fc0.wgrad 2 ms, fc1.fwd 3 ms,
//   fc1.wgrad 4 ms; fc1.dgrad is absent (roofline at the best measured rate).
//   all_reduce (median / min / max = x1 / x0.9 / x1.2): 16384 B 100 us, 32768 B 150 us,
//   49152 B 180 us. adam_fp32: 2 ms / 1.5 ms / 3 ms per 1e6 elements. triad: 10 GB/s.
#include <gtest/gtest.h>

#include <string>

#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/event/simulate.hpp"
#include "simulator/run.hpp"
#include "tests/test_data_dir.hpp"

namespace ddpsim::sim {
namespace {

using test_data::kProfileDir;

model::Scenario tiny() { return model::load_scenario(kProfileDir + "tiny-mlp.json"); }

// fc1.dgrad (M 8, N 128, K 32): 2*8*128*32 = 65536 FLOPs on the roofline whose peak is the best
// measured rate, fc0.fwd's 2*8*128*64 FLOPs in 1 ms = 1.31072e8 FLOP/s: 0.5 ms (its
// 4*(8*32 + 32*128 + 8*128) = 21504 bytes at 10 GB/s take 2.15 us, less).
constexpr double kDgradS = 65536.0 / (131072.0 / 1e-3);
constexpr double kParams = 128.0 * 64 + 32.0 * 128;  // 12288 weights
// The Reducer's copies of a layer's gradients into (and back out of) their bucket: read + write
// of its fp32 gradient bytes at the profile's triad bandwidth, 10 GB/s.
constexpr double kCopy1 = 2.0 * 16384 / 10e9;  // fc1.weight, 3.2768 us
constexpr double kCopy0 = 2.0 * 32768 / 10e9;  // fc0.weight, 6.5536 us

TEST(ProfilePredict, MeasuredGemmsCollectivesAndOptimizerGiveExactTimes) {
  const model::Scenario s = tiny();
  ASSERT_NE(s.hardware.profile, nullptr);
  const Prediction p = predict_point(s);
  // Forward: fc0.fwd + fc1.fwd.
  EXPECT_DOUBLE_EQ(p.forward_time_s, 1e-3 + 3e-3);
  // Backward: fc0.wgrad + fc1.wgrad (measured) + fc1.dgrad (roofline), + the copies into the
  // buckets and back.
  EXPECT_NEAR(p.backward_time_s, 2e-3 + 4e-3 + kDgradS + 2 * (kCopy0 + kCopy1), 1e-15);
  // Optimizer: 12288 parameters at the adam_fp32 kernel's 2 ms per 1e6 elements (the scenario
  // runs Adam fused, as the kernel does).
  EXPECT_DOUBLE_EQ(p.optimizer_time_s, kParams * 2e-3 / 1e6);
  // PyTorch's foreach Adam moves 72 bytes per parameter where the fused kernel moves 28 (both
  // memory-bound): the measured time scales by 72 / 28.
  model::Scenario f = s;
  f.training.optimizer_impl = model::OptimizerImpl::kForeach;
  EXPECT_DOUBLE_EQ(predict_point(f).optimizer_time_s, kParams * 2e-3 / 1e6 * 72 / 28);
  // Buckets (reverse order): fc1.weight (16384 B) ready after layer 1's backward
  // (4 ms + fc1.wgrad 4 ms + dgrad 0.5 ms + its copy), fc0.weight (32768 B) after layer 0's
  // (+ 2 ms + its copy), the end of the backward.
  ASSERT_EQ(p.buckets.size(), 2u);
  EXPECT_EQ(p.buckets[0].bytes, 16384);
  EXPECT_EQ(p.buckets[1].bytes, 32768);
  EXPECT_NEAR(p.buckets[0].ready_s, 4e-3 + 4e-3 + kDgradS + kCopy1, 1e-15);
  EXPECT_NEAR(p.buckets[0].end_s, p.buckets[0].ready_s + 100e-6, 1e-15);
  const double bwd_end = 4e-3 + 6e-3 + kDgradS + kCopy1 + kCopy0;
  EXPECT_NEAR(p.buckets[1].ready_s, bwd_end, 1e-15);
  EXPECT_NEAR(p.buckets[1].end_s, p.buckets[1].ready_s + 150e-6, 1e-15);
  // busbw of the measured all-reduce: S / t x 2(n-1)/n = 16384 / 100 us x 1.
  EXPECT_NEAR(p.buckets[0].busbw_gbytes_per_s, 16384.0 / 100e-6 / 1e9, 1e-12);
  EXPECT_NEAR(p.comm_time_s, 250e-6, 1e-15);
  // finalize_backward: bucket 0 is copied back at once (bwd_end .. + kCopy1), bucket 1 after
  // its all-reduce (bwd_end + 150 us .. + kCopy0). The compute stream waited 150 us - kCopy1.
  EXPECT_NEAR(p.exposed_comm_s, 150e-6 - kCopy1, 1e-15);
  EXPECT_NEAR(p.step_time_s, bwd_end + 150e-6 + kCopy0 + kParams * 2e-9, 1e-15);
  // Iteration 1: one bucket of every gradient, 49152 B, 180 us after the backward, then both
  // copies back.
  EXPECT_NEAR(p.first_step_time_s, bwd_end + 180e-6 + kCopy0 + kCopy1 + kParams * 2e-9, 1e-15);

  ASSERT_TRUE(p.measured.has_value());
  EXPECT_EQ(p.measured->gemms_measured, 4);
  EXPECT_EQ(p.measured->gemms_total, 5);
  EXPECT_EQ(p.measured->collectives, "profile");
  EXPECT_EQ(p.measured->collectives_measured, 3);  // 16384, 32768 and the first step's 49152
  EXPECT_EQ(p.measured->optimizer, "profile_kernel");
  EXPECT_FALSE(p.measured->extrapolated) << (p.measured->notes.empty() ? "" : p.measured->notes[0]);
}

TEST(ProfilePredict, StepIntervalLaysTheStepOutOnTheProfilesSpread) {
  const Prediction p = predict_point(tiny());
  ASSERT_TRUE(p.step_time_low_s && p.step_time_high_s);
  // Low: GEMM p10 (x0.8), all-reduce min (x0.9), adam p10 (1.5 ms / 1e6); the roofline GEMM
  // has no spread. fwd 3.2 ms, layer 1 bwd 3.2 + 0.5 ms, layer 0 bwd 1.6 ms; the last bucket
  // ends at 3.2 + 3.7 + 1.6 ms + the copies in + 0.9 x 150 us, then fc0's copy back (the
  // copies run at the triad bandwidth, which has no spread).
  const double copies_in = kCopy0 + kCopy1;
  EXPECT_NEAR(*p.step_time_low_s,
              3.2e-3 + 3.2e-3 + kDgradS + 1.6e-3 + copies_in + 135e-6 + kCopy0 + kParams * 1.5e-9,
              1e-15);
  // High: x1.5, x1.2, 3 ms / 1e6.
  EXPECT_NEAR(*p.step_time_high_s,
              6e-3 + 6e-3 + kDgradS + 3e-3 + copies_in + 180e-6 + kCopy0 + kParams * 3e-9, 1e-15);
  EXPECT_LT(*p.step_time_low_s, p.step_time_s);
  EXPECT_GT(*p.step_time_high_s, p.step_time_s);
}

TEST(ProfilePredict, AnotherRankCountKeepsTheModelWithAWarning) {
  model::Scenario s = tiny();
  s.cluster.gpus = 4;
  s.cluster.gpus_per_node = 4;
  const Prediction p = Predictor(s).predict(s.cluster, s.training, s.parallelism);
  ASSERT_TRUE(p.measured.has_value());
  EXPECT_EQ(p.measured->collectives, "model");
  EXPECT_EQ(p.measured->collectives_measured, 0);
  EXPECT_EQ(p.measured->gemms_measured, 4);  // compute is per rank: still measured
  EXPECT_TRUE(p.measured->extrapolated);
  bool warned = false;
  for (const std::string& w : p.warnings)
    warned |= w.find("measured on 2 ranks") != std::string::npos;
  EXPECT_TRUE(warned);
  // The bucket is costed by the alpha-beta model, not the 100 us row.
  EXPECT_NE(p.buckets[0].end_s - p.buckets[0].start_s, 100e-6);
}

TEST(ProfilePredict, BatchOutsideTheMeasuredOnesIsFlaggedAsExtrapolated) {
  model::Scenario s = tiny();
  s.training.per_gpu_batch = 16;
  const Prediction p = Predictor(s).predict(s.cluster, s.training, s.parallelism);
  ASSERT_TRUE(p.measured.has_value());
  EXPECT_EQ(p.measured->gemms_measured, 4);
  EXPECT_TRUE(p.measured->extrapolated);
  // Above the largest measured batch the family keeps its throughput: twice the FLOPs, twice
  // the time.
  EXPECT_NEAR(p.forward_time_s, 2 * (1e-3 + 3e-3), 1e-15);
}

TEST(ProfilePredict, EventEngineRunsTheSameMeasuredPlan) {
  const model::Scenario s = tiny();
  const Predictor pr(s);
  const StepPlan plan = pr.plan(s.cluster, s.training, s.parallelism);
  ASSERT_TRUE(plan.measured.has_value());
  EventOptions o;
  o.steps = 3;
  const EventResult r = simulate_event(plan, o);
  EXPECT_NEAR(r.mean_step_time_s, predict_point(s).step_time_s, 1e-9);
}

TEST(ProfilePredict, NoProfileMeansNoMeasuredBlock) {
  model::Scenario s = tiny();
  s.hardware.profile.reset();
  const Prediction p = Predictor(s).predict(s.cluster, s.training, s.parallelism);
  EXPECT_FALSE(p.measured.has_value());
  EXPECT_FALSE(p.step_time_low_s.has_value());
}

}  // namespace
}  // namespace ddpsim::sim
