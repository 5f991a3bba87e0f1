// Float8 training as torchao runs it (model/workload/float8.hpp, simulator/analytic/
// float8_cost.hpp): which linears convert, one GEMM's cost by hand, and the refusals.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/builders/transformer.hpp"
#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/float8_cost.hpp"
#include "simulator/analytic/kernel_rates.hpp"

namespace ddpsim::sim {
namespace {

using model::DType;
using model::Float8Config;
using model::Float8Recipe;
using model::GemmRole;
using nlohmann::json;

model::GpuSpec gpu() {
  model::GpuSpec g;
  g.name = "test";
  g.peak_flops[DType::kFp8] = 2e15;
  g.efficiency[DType::kFp8] = 0.5;
  g.peak_flops[DType::kBf16] = 1e15;
  g.efficiency[DType::kBf16] = 0.5;
  g.memory_bandwidth = 2e12;
  g.memory_efficiency = 1.0;
  g.kernel_floor_s = 1e-6;
  g.sm_count = 132;
  return g;
}

// Y [8192, 4096] = X [8192, 4096] W^T: 2 x 8192 x 4096 x 4096 FLOPs at 1e15 x the tile
// utilisation and shape factor, or (M K + K N) x 1 + M N x 2 = 117,440,512 bytes at 2e12 B/s.
// Around it, casts of 16-bit tensors: X (M K = 33,554,432 elements) and W (N K = 16,777,216):
//   compiled 5 bytes and 2 kernels each: 251,658,240 B / 2e12 + 4 us = 129.82912 us;
//   eager 29 bytes and 11 kernels each: 1,459,617,792 B / 2e12 + 22 us = 751.808896 us;
//   weight all-gathered in fp8 (compiled): X alone, 167,772,160 B / 2e12 + 2 us = 85.886080 us.
TEST(Float8, ForwardGemmAndItsCasts) {
  const model::GpuSpec g = gpu();
  const model::GemmShape s{8192, 4096, 4096, 1, false, true};
  const Float8Config tensorwise;
  const Float8GemmCost compiled =
      float8_gemm_cost(g, s, GemmRole::kForward, DType::kBf16, tensorwise, false, true);
  const double rate =
      1e15 * gemm_tiling(s, 132).utilization * gemm_shape_factor(g, DType::kBf16, s);
  EXPECT_TRUE(compiled.fp8);
  EXPECT_DOUBLE_EQ(compiled.gemm_s, std::max(s.flops() / rate, 117'440'512.0 / 2e12));
  EXPECT_NEAR(compiled.memory_s, 129.82912e-6, 1e-12);
  EXPECT_EQ(compiled.kernels, 4);
  const Float8GemmCost eager =
      float8_gemm_cost(g, s, GemmRole::kForward, DType::kBf16, tensorwise, false, false);
  EXPECT_NEAR(eager.memory_s, 751.808896e-6, 1e-12);
  EXPECT_EQ(eager.kernels, 22);
  const Float8GemmCost gathered =
      float8_gemm_cost(g, s, GemmRole::kForward, DType::kBf16, tensorwise, true, true);
  EXPECT_NEAR(gathered.memory_s, 85.88608e-6, 1e-12);
}

// dX [8192, 4096] = dY [8192, 4096] W: eager casts dY (M K) and W (N K) and copies the fp8 W
// transposed (N K x 2 bytes, 1 kernel): (50,331,648 x 29 + 16,777,216 x 2) / 2e12 + 23 us.
// rowwise scales the 16-bit output once more (4 M N = 134,217,728 bytes, 1 kernel);
// rowwise_with_gw_hp keeps the weight gradient in bf16.
TEST(Float8, GradientGemmsPerRecipe) {
  const model::GpuSpec g = gpu();
  const model::GemmShape dgrad{8192, 4096, 4096, 1, false, false};
  const Float8GemmCost eager =
      float8_gemm_cost(g, dgrad, GemmRole::kInputGrad, DType::kBf16, {}, false, false);
  EXPECT_NEAR(eager.memory_s, (50'331'648.0 * 29 + 16'777'216.0 * 2) / 2e12 + 23e-6, 1e-12);
  EXPECT_EQ(eager.kernels, 23);
  Float8Config rowwise;
  rowwise.recipe = Float8Recipe::kRowwise;
  const Float8GemmCost compiled_tw =
      float8_gemm_cost(g, dgrad, GemmRole::kInputGrad, DType::kBf16, {}, false, true);
  const Float8GemmCost compiled_rw =
      float8_gemm_cost(g, dgrad, GemmRole::kInputGrad, DType::kBf16, rowwise, false, true);
  EXPECT_NEAR(compiled_rw.memory_s - compiled_tw.memory_s, 134'217'728.0 / 2e12 + 1e-6, 1e-12);
  Float8Config gw_hp;
  gw_hp.recipe = Float8Recipe::kRowwiseWithGwHp;
  const model::GemmShape wgrad{4096, 4096, 8192, 1, true, false};
  EXPECT_FALSE(
      float8_gemm_cost(g, wgrad, GemmRole::kWeightGrad, DType::kBf16, gw_hp, false, true).fp8);
  EXPECT_TRUE(
      float8_gemm_cost(g, wgrad, GemmRole::kWeightGrad, DType::kBf16, rowwise, false, true).fp8);
}

// Llama 3 8B: every block linear converts (dimensions multiples of 16): per block
// 4096^2 (q) + 2 x 4096 x 1024 (k, v) + 4096^2 (o) + 3 x 4096 x 14336 (gate, up, down) =
// 218,103,808 weight elements, the block's parameters less its two norms; the lm_head converts
// unless filtered (torchtitan's filter_fqns = ["output"], here "lm_head").
TEST(Float8, WhichLinearsConvert) {
  const json config = {{"model_type", "llama"},      {"hidden_size", 4096},
                       {"intermediate_size", 14336}, {"num_hidden_layers", 2},
                       {"num_attention_heads", 32},  {"num_key_value_heads", 8},
                       {"vocab_size", 128256},       {"max_position_embeddings", 8192}};
  const model::Workload w = model::build_hf_transformer(config, "llama.json", 1024);
  Float8Config c;
  std::vector<double> e = model::float8_weight_elements(w, c);
  double blocks = 0, head = 0;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    if (w.layers[i].kind == "transformer_block") {
      EXPECT_DOUBLE_EQ(e[i], 218'103'808.0);
      blocks += e[i];
    }
    if (w.layers[i].name == "lm_head") head = e[i];
  }
  EXPECT_DOUBLE_EQ(blocks, 2 * 218'103'808.0);
  EXPECT_DOUBLE_EQ(head, 128256.0 * 4096);
  c.filter_fqns = {"lm_head"};
  e = model::float8_weight_elements(w, c);
  EXPECT_DOUBLE_EQ(e.back(), 0.0);
}

TEST(Float8, RefusedWithoutFloat8TensorCores) {
  const json doc = {
      {"model", {{"preset", "llama-2-7b"}}},
      {"hardware", {{"preset", "dgx-a100"}}},
      {"cluster", {{"gpus", 8}}},
      {"training",
       {{"per_gpu_batch", 1}, {"precision", "amp_bf16"}, {"float8", {{"recipe", "tensorwise"}}}}}};
  try {
    model::parse_scenario(doc, "a100.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/training/float8");
    EXPECT_NE(std::string(e.what()).find("8.9"), std::string::npos) << e.what();
  }
  // The float8 all-gather is tensorwise-only and FSDP2-only.
  json h100 = doc;
  h100["hardware"]["preset"] = "dgx-h100";
  h100["training"]["float8"] = {{"recipe", "rowwise"}, {"fsdp_float8_all_gather", true}};
  try {
    model::parse_scenario(h100, "h100.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/training/float8/fsdp_float8_all_gather");
  }
  h100["training"]["float8"] = {{"fsdp_float8_all_gather", true}};
  try {
    model::parse_scenario(h100, "h100.json");  // strategy ddp
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/training/float8/fsdp_float8_all_gather");
  }
}

}  // namespace
}  // namespace ddpsim::sim
