// torch.compile's fusion as the transformer builders state it (ElementwiseOp::compiled_*):
// kernel counts and bytes of one Llama block, eager against compiled, by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/builders/transformer.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

struct Count {
  int fwd_kernels = 0, bwd_kernels = 0;
  double fwd_bytes = 0, bwd_bytes = 0;
};

Count count(const Layer& l, bool compiled) {
  Count c;
  for (const ElementwiseOp& e : l.elementwise) {
    const bool fused = compiled && e.compiled_bytes_per_sample >= 0;
    const int k = fused ? e.compiled_kernels : e.kernels;
    const double b = fused ? e.compiled_bytes_per_sample : e.bytes_per_sample;
    if (e.role == GemmRole::kForward) {
      c.fwd_kernels += k;
      c.fwd_bytes += b;
    } else {
      c.bwd_kernels += k;
      c.bwd_bytes += b;
    }
  }
  return c;
}

// A Llama block (h 4096, 32 heads of 128, 8 KV heads, f 14336, s 1):
//   eager forward kernels: RMSNorm 8 + rotary 10 + residual add 1 + RMSNorm 8 + SiLU 1 + mul 1
//     + residual add 1 = 30;
//   compiled (one kernel per fused chain): norm 1, rotary 1, the attention residual joins the
//     second norm 0, norm 1, SiLU x up 1, the block's last residual add 1 = 5;
//   eager backward: RMSNorm 15 + its fp32 copy's sum 1, the block's 5 gradient sums, rotary 14,
//     the residual adds' 1 + 1, RMSNorm 15 + 1, SiLU 1, mul 2 = 56;
//   compiled backward: each norm 2 (dX, and the weight's row reduction), rotary 1, SiLU x up 1,
//     the sums join their neighbours = 6.
// Compiled forward bytes per token: norm 4h + rotary 4 (a + kv) d + residual 4h + norm 4h +
//   SiLU x up (2 + 4) f + residual 6h = 18h + 4 (a + kv) d + 6f
//   = 73,728 + 20,480 + 86,016 = 180,224 (eager: 36h + 20 (a + kv) d + 6h + 36h + 4f + 6f + 6h
//   = 344,064 + 102,400 + 143,360 = 589,824).
TEST(Compile, FusedKernelsOfALlamaBlock) {
  const json config = {{"model_type", "llama"},      {"hidden_size", 4096},
                       {"intermediate_size", 14336}, {"num_hidden_layers", 1},
                       {"num_attention_heads", 32},  {"num_key_value_heads", 8},
                       {"vocab_size", 128256},       {"max_position_embeddings", 8192}};
  const Workload w = build_hf_transformer(config, "llama.json", 1);
  const Layer* block = nullptr;
  for (const Layer& l : w.layers) {
    if (l.kind == "transformer_block") block = &l;
  }
  ASSERT_NE(block, nullptr);
  const Count eager = count(*block, false), compiled = count(*block, true);
  EXPECT_EQ(eager.fwd_kernels, 30);
  EXPECT_EQ(compiled.fwd_kernels, 5);
  EXPECT_EQ(eager.bwd_kernels, 56);
  EXPECT_EQ(compiled.bwd_kernels, 6);
  EXPECT_DOUBLE_EQ(eager.fwd_bytes, 589'824.0);
  EXPECT_DOUBLE_EQ(compiled.fwd_bytes, 180'224.0);
}

}  // namespace
}  // namespace ddpsim::model
