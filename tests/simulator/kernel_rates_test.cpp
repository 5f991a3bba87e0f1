// Kernel rates: tile and wave quantization of GEMMs, fused attention at its kernel's rate, each
// by hand.
#include "simulator/kernel_rates.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "model/builders.hpp"
#include "simulator/analytic.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

using model::DType;
using model::GemmShape;

// 4096 x 4096 on 108 SMs: 256x128 tiles 16 x 32 = 512 tiles, 5 waves of 108 -> 512/540; 128x64
// tiles 2,048, 19 waves -> 2048/2052, the best of the six shapes (64x64: 4096/4104, equal).
TEST(KernelRates, LargeGemmLosesOnlyItsLastWave) {
  EXPECT_DOUBLE_EQ(gemm_tiling({4096, 4096, 4096, 1}, 108).utilization, 2048.0 / 2052.0);
}

// 1024 x 768 (GPT-2 small's c_proj at one sample) on 108 SMs: 128x64 tiles 8 x 12 = 96 tiles in
// one wave of 108 -> 96/108; 64x64 192 tiles in 2 waves -> 192/216, equal; 128x128 48/108.
TEST(KernelRates, SmallGemmFillsPartOfAWave) {
  EXPECT_DOUBLE_EQ(gemm_tiling({1024, 768, 4096, 1}, 108).utilization, 8.0 / 9.0);
}

// 100 x 100 on one SM: every tile shape covers 16,384 output elements for 10,000 useful (64x64:
// 4 tiles; 128x128: 1 tile; 128x64: 2 tiles): 10000/16384. Batched instances count as tiles.
TEST(KernelRates, TileQuantizationAndBatchedInstances) {
  EXPECT_DOUBLE_EQ(gemm_tiling({100, 100, 64, 1}, 1).utilization, 10000.0 / 16384.0);
  // 12 instances of 64 x 64 on 8 SMs: 12 tiles of 64x64 in 2 waves of 8 -> 12/16.
  EXPECT_DOUBLE_EQ(gemm_tiling({64, 64, 64, 12}, 8).utilization, 12.0 / 16.0);
  // Not modelled: 1.
  EXPECT_DOUBLE_EQ(gemm_tiling({100, 100, 64, 1}, 0).utilization, 1.0);
}

// Split-K. ResNet-50's conv1 weight gradient at batch 112 on a V100 (80 SMs): M 64, N 3x7x7 =
// 147, K 112 x 112 x 112 = 1,404,928. 64x64 tiles: 1 x 3 = 3 tiles, so 80 / 3 = 26 K slices of
// 54,036 (78 blocks, one wave): 9408 x K / (80 x 4096 x 54036) = 0.7465, the best (64x128: 2
// tiles, 40 slices of 35,124: 9408 x K / (80 x 8192 x 35124) = 0.574; 128x256: 1 tile, 80
// slices: 0.287). Without the split: 9408 / (80 x 4096) = 0.0287 at best.
TEST(KernelRates, FewOutputTilesSplitK) {
  const GemmShape conv1_wgrad{64, 147, 112 * 112 * 112, 1};
  const GemmTiling t = gemm_tiling(conv1_wgrad, 80);
  EXPECT_EQ(t.split_k, 26);
  EXPECT_NEAR(t.utilization, 64.0 * 147.0 * 1404928.0 / (80.0 * 4096.0 * 54036.0), 1e-12);
  EXPECT_NEAR(t.utilization, 0.7465, 1e-4);
  // A shallow K caps the slices at K / 192: K = 768 gives 4 (each 192 deep), not 80 / 3 = 26.
  EXPECT_EQ(gemm_tiling({64, 147, 768, 1}, 80).split_k, 4);
  EXPECT_EQ(gemm_tiling({64, 147, 100, 1}, 80).split_k, 1);  // shallower than one slice
  // An output that fills the SMs is not split.
  EXPECT_EQ(gemm_tiling({4096, 4096, 4096, 1}, 108).split_k, 1);
  // The reduction: 26 fp32 partials written and read back (208 B per output element), the
  // 2-byte output written once.
  EXPECT_DOUBLE_EQ(split_k_reduction_bytes(conv1_wgrad, 26, 2.0), 64.0 * 147.0 * 210.0);
  EXPECT_DOUBLE_EQ(split_k_reduction_bytes(conv1_wgrad, 1, 2.0), 0.0);
}

TEST(KernelRates, FusedAttentionRateIsThePresetFractionOfThe16BitPeak) {
  model::GpuSpec g;
  g.peak_flops[DType::kBf16] = 989.4e12;
  g.peak_flops[DType::kFp32] = 67e12;
  g.attention_fwd_efficiency = 0.374;
  g.attention_bwd_efficiency = 0.325;
  EXPECT_DOUBLE_EQ(fused_attention_flops_per_s(g, DType::kBf16, model::GemmRole::kForward),
                   989.4e12 * 0.374);
  EXPECT_DOUBLE_EQ(fused_attention_flops_per_s(g, DType::kBf16, model::GemmRole::kInputGrad),
                   989.4e12 * 0.325);
  // fp32 runs the memory-efficient kernel, fp16 is not a peak this GPU lists: no rate.
  EXPECT_EQ(fused_attention_flops_per_s(g, DType::kFp32, model::GemmRole::kForward), 0.0);
  EXPECT_EQ(fused_attention_flops_per_s(g, DType::kFp16, model::GemmRole::kForward), 0.0);
}

// One layer holding one causal fused-attention product, forward S = Q K^T [1000, 1000] x d 100
// (2e8 model FLOPs) and one of its backward products of the same shape, on the round machine
// (bf16 2 TFLOP/s, 1 TB/s), one GPU, batch 1:
//   forward executes 0.5 x 2e8 = 1e8 FLOPs at 0.25 x 2e12 = 5e11 FLOP/s  -> 200 us
//   backward executes 0.625 x 2e8 = 1.25e8 at 0.125 x 2e12 = 2.5e11      -> 500 us
// Without an attention benchmark both run at the GEMM rate 2e12 (the bytes, 2 x (1e5 + 1e5 +
// 1e6) = 2.4e6 at 1e12 = 2.4 us, are below): 50 us and 62.5 us, with a note saying so.
TEST(KernelRates, PredictorCostsFusedAttentionAtItsKernelRate) {
  model::Workload w = model::build_from_layers({{"attn", 1000, 0, 0}});
  model::Gemm fwd{"attn.qk.fwd",
                  model::GemmRole::kForward,
                  {1000, 1000, 100, 1, false, true},
                  model::BatchDim::kCount};
  fwd.kernel = model::GemmKernel::kFusedAttention;
  fwd.executed_flop_factor = 0.5;
  model::Gemm bwd = fwd;
  bwd.name = "attn.qk.dgrad_q";
  bwd.role = model::GemmRole::kInputGrad;
  bwd.executed_flop_factor = 0.625;
  w.layers[0].gemms = {fwd, bwd};
  const auto workload = std::make_shared<const model::Workload>(w);
  model::TrainingConfig t = fixtures::fp32_adam();
  t.precision = model::Precision::kBf16;

  model::HardwareSpec hw = fixtures::round_machine();
  hw.gpu.attention_fwd_efficiency = 0.25;
  hw.gpu.attention_bwd_efficiency = 0.125;
  const Prediction with = Predictor(workload, hw).predict({1, 1}, t, {});
  EXPECT_NEAR(with.forward_time_s, 200e-6, 1e-15);
  EXPECT_NEAR(with.backward_time_s, 500e-6, 1e-15);

  const Prediction without = Predictor(workload, fixtures::round_machine()).predict({1, 1}, t, {});
  EXPECT_NEAR(without.forward_time_s, 50e-6, 1e-15);
  EXPECT_NEAR(without.backward_time_s, 62.5e-6, 1e-15);
  bool noted = false;
  for (const std::string& n : without.warnings)
    noted |= n.find("fused attention") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace ddpsim::sim
