// The unit conversions of published training rows, against values computed by hand.
#include "simulator/fidelity/throughput_units.hpp"

#include <gtest/gtest.h>

#include "model/error.hpp"

namespace ddpsim::sim {
namespace {

// MPT-7B in llm-foundry's benchmark table (H100, 2048 tokens, 8 GPUs): NumParams 6658859008,
// 32 layers of width 4096. 6 P = 39,953,154,048; 12 L d s = 12 * 32 * 4096 * 2048 =
// 3,221,225,472; the sum is 43,174,379,520 FLOPs per token.
constexpr double kMpt7bParams = 6658859008.0;
constexpr double kMpt7bFlopsPerToken = 43174379520.0;

TEST(ThroughputUnits, ModelFlopsPerTokenIsSixPPlusTwelveLds) {
  EXPECT_DOUBLE_EQ(model_flops_per_token(kMpt7bParams, 32, 4096, 2048), kMpt7bFlopsPerToken);
}

TEST(ThroughputUnits, ReproducesThePublishedModelTflopAndMfu) {
  // The same row: 10643 tokens/s per GPU x 43,174,379,520 FLOPs = 459.5049 TFLOP/s per GPU (the
  // table prints Model TFLOP 4.595096E+14 from the unrounded throughput); / 989.4 = 46.44%, the
  // table's MFU column.
  EXPECT_NEAR(tflops_per_gpu(10643, kMpt7bFlopsPerToken), 459.50492123136, 1e-9);
  EXPECT_NEAR(mfu(10643, kMpt7bFlopsPerToken, 989.4), 0.46442785651036994, 1e-12);
  EXPECT_NEAR(mfu(10643, kMpt7bFlopsPerToken, 989.4), 0.4644, 5e-5);
}

TEST(ThroughputUnits, TokensAndStepTime) {
  // 48 sequences of 2048 tokens in 1 s = 98,304 tokens/s; at the published 85,144 tokens/s the
  // same step takes 98,304 / 85,144 = 1.15456 s.
  EXPECT_DOUBLE_EQ(tokens_per_s(48, 2048, 1.0), 98304.0);
  EXPECT_DOUBLE_EQ(step_time_s_from_tokens_per_s(98304, 85144), 98304.0 / 85144.0);
  EXPECT_NEAR(step_time_s_from_tokens_per_s(98304, 85144), 1.15456168, 1e-8);
  // 2048 images in 0.25 s = 8192 images/s.
  EXPECT_DOUBLE_EQ(samples_per_s(2048, 0.25), 8192.0);
}

TEST(ThroughputUnits, StepTimeInEveryKind) {
  // Global batch 48 x 2048 tokens on 8 GPUs in 1.2 s: 81,920 tokens/s, 10,240 per GPU,
  // 10,240 x 43,174,379,520 / 1e12 = 442.1056 TFLOP/s per GPU, / 989.4 = 44.684% MFU.
  StepInUnits u;
  u.global_batch = 48;
  u.seq_len = 2048;
  u.gpus = 8;
  u.flops_per_token = kMpt7bFlopsPerToken;
  u.peak_tflops = 989.4;
  EXPECT_DOUBLE_EQ(step_time_in(ThroughputKind::kSamplesPerS, 1.2, u), 40.0);
  EXPECT_DOUBLE_EQ(step_time_in(ThroughputKind::kTokensPerS, 1.2, u), 81920.0);
  EXPECT_DOUBLE_EQ(step_time_in(ThroughputKind::kTokensPerSPerGpu, 1.2, u), 10240.0);
  EXPECT_DOUBLE_EQ(step_time_in(ThroughputKind::kStepTimeS, 1.2, u), 1.2);
  EXPECT_NEAR(step_time_in(ThroughputKind::kTflopsPerGpu, 1.2, u), 442.1056462848, 1e-9);
  EXPECT_NEAR(step_time_in(ThroughputKind::kMfu, 1.2, u), 0.44684217332201337, 1e-12);
}

TEST(ThroughputUnits, KindNamesRoundTripAndUnknownNamesAreInputErrors) {
  for (auto k : {ThroughputKind::kSamplesPerS, ThroughputKind::kTokensPerS,
                 ThroughputKind::kTokensPerSPerGpu, ThroughputKind::kStepTimeS,
                 ThroughputKind::kTflopsPerGpu, ThroughputKind::kMfu}) {
    EXPECT_EQ(parse_throughput_kind(throughput_kind_name(k), "x"), k);
  }
  try {
    parse_throughput_kind("images_per_hour", "rows.json: /3/quantity");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rows.json: /3/quantity"), std::string::npos) << what;
    EXPECT_NE(what.find("tokens_per_s_per_gpu"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace ddpsim::sim
