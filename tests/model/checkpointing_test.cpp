// Activation checkpointing modes (model/workload/checkpointing.hpp): which blocks torchtitan
// checkpoints, and what its op-level policy saves and recomputes in a Llama block, by hand.
#include "model/workload/checkpointing.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/builders/transformer.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

// Llama 3 8B's block shapes (torchtitan flavour "8B": dim 4096, 32 heads, 8 KV heads, FFN 14336).
Workload llama8b(std::int64_t seq_len, const char* model_type = "llama") {
  const json config = {{"model_type", model_type},   {"hidden_size", 4096},
                       {"intermediate_size", 14336}, {"num_hidden_layers", 2},
                       {"num_attention_heads", 32},  {"num_key_value_heads", 8},
                       {"vocab_size", 128256},       {"max_position_embeddings", 8192}};
  return build_hf_transformer(config, "llama.json", seq_len);
}

const Layer& first_block(const Workload& w) {
  for (const Layer& l : w.layers) {
    if (is_transformer_block(l)) return l;
  }
  throw std::logic_error("no block");
}

TEST(Checkpointing, LayerSelectiveFollowsTorchtitansCounter) {
  // torchtitan _apply_ac_to_transformer_block: _count += 1 before `_count % ac_freq == 0`, so
  // block i (0-based) is wrapped when (i + 1) % K == 0: K = 2 wraps 1, 3, 5, ...; K = 3 wraps
  // 2, 5, ...; K = 1 every block.
  const ActivationCheckpointing every2{CheckpointMode::kSelectiveLayer, 2};
  const ActivationCheckpointing every3{CheckpointMode::kSelectiveLayer, 3};
  std::vector<int> wrapped2, wrapped3;
  for (int i = 0; i < 8; ++i) {
    if (checkpoints_block(every2, i)) wrapped2.push_back(i);
    if (checkpoints_block(every3, i)) wrapped3.push_back(i);
  }
  EXPECT_EQ(wrapped2, (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(wrapped3, (std::vector<int>{2, 5}));
  EXPECT_TRUE(checkpoints_block({CheckpointMode::kSelectiveLayer, 1}, 0));
  EXPECT_TRUE(checkpoints_block({CheckpointMode::kFull}, 0));
  EXPECT_TRUE(checkpoints_block({CheckpointMode::kSelectiveOp}, 0));
  EXPECT_FALSE(checkpoints_block({}, 0));
}

TEST(Checkpointing, NamesAndScenarioValuesRoundTrip) {
  EXPECT_EQ(checkpointing_name({}), "none");
  EXPECT_EQ(checkpointing_name({CheckpointMode::kFull}), "full");
  EXPECT_EQ(checkpointing_name({CheckpointMode::kSelectiveOp}), "selective op");
  EXPECT_EQ(checkpointing_name({CheckpointMode::kSelectiveLayer, 2}), "selective every 2nd block");
  EXPECT_EQ(checkpointing_name({CheckpointMode::kSelectiveLayer, 11}),
            "selective every 11th block");
  EXPECT_EQ(checkpointing_short_name({CheckpointMode::kSelectiveOp}), "op");
  EXPECT_EQ(checkpointing_short_name({CheckpointMode::kSelectiveLayer, 2}), "every 2");
  EXPECT_EQ(checkpointing_short_name({CheckpointMode::kFull}), "full");
  EXPECT_EQ(checkpointing_json({}), json(false));
  EXPECT_EQ(checkpointing_json({CheckpointMode::kFull}), json(true));
  EXPECT_EQ(checkpointing_json({CheckpointMode::kSelectiveOp}),
            json({{"mode", "selective"}, {"option", "op"}}));
  EXPECT_EQ(checkpointing_json({CheckpointMode::kSelectiveLayer, 3}),
            json({{"mode", "selective"}, {"option", 3}}));
}

// torchtitan's _save_list (aten.mm, the SDPA kernels, ...) and "every second mm is recomputed"
// (_custom_policy: mm_count += 1, then save unless mm_count % 2 == 0), on the block's forward in
// order: wq (1, saved), wk (2, recomputed), wv (3, saved), SDPA (saved), wo (4, recomputed),
// w1 (5, saved), w3 (6, recomputed), w2 (7, saved). Per sample at s = 8192:
//   saved elements  s (4096 + 1024 + 4096 + 14336 + 4096) = 8192 x 27648 = 226,492,416
//                   (q, v, the attention output, gate, down)
//   saved fp32      the logsumexp, 4 bytes x 32 heads x s = 1,048,576 bytes
//   recomputed      2 s 4096 (1024 + 4096 + 14336) = 1,305,670,057,984 FLOPs (k, o, up)
TEST(Checkpointing, OpPolicyOnALlama3Block) {
  const Workload w = llama8b(8192);
  const Layer& block = first_block(w);
  const OpCheckpointPolicy p = op_policy(w, block);
  EXPECT_DOUBLE_EQ(p.saved_elements_per_sample, 226'492'416.0);
  EXPECT_DOUBLE_EQ(p.saved_fp32_bytes_per_sample, 1'048'576.0);
  EXPECT_DOUBLE_EQ(p.recomputed_flops_per_sample, 1'305'670'057'984.0);
  std::vector<std::string> recomputed;
  for (std::size_t i = 0; i < block.gemms.size(); ++i) {
    if (p.gemm_recomputed[i]) recomputed.push_back(block.gemms[i].name);
  }
  EXPECT_EQ(recomputed, (std::vector<std::string>{"model.layers.0.self_attn.k_proj.fwd",
                                                  "model.layers.0.self_attn.o_proj.fwd",
                                                  "model.layers.0.mlp.up_proj.fwd"}));
  // Two blocks: op-selective reruns twice that; full reruns both blocks' whole forward.
  EXPECT_DOUBLE_EQ(recomputed_flops_per_sample(w, {CheckpointMode::kSelectiveOp}),
                   2 * 1'305'670'057'984.0);
  EXPECT_DOUBLE_EQ(recomputed_flops_per_sample(w, {CheckpointMode::kFull}),
                   2 * block.fwd_flops_per_sample());
  EXPECT_DOUBLE_EQ(recomputed_flops_per_sample(w, {CheckpointMode::kSelectiveLayer, 2}),
                   block.fwd_flops_per_sample());
  EXPECT_DOUBLE_EQ(recomputed_flops_per_sample(w, {}), 0.0);
}

// Qwen2's q, k and v carry biases: nn.Linear with a bias on a 3-D input runs aten.addmm, which is
// not in the save list and does not advance the mm count. The mm's are then o (1, saved),
// gate (2, recomputed), up (3, saved), down (4, recomputed); q, k, v are all recomputed.
TEST(Checkpointing, OpPolicyRecomputesBiasedLinears) {
  const Workload w = llama8b(4096, "qwen2");
  const Layer& block = first_block(w);
  const OpCheckpointPolicy p = op_policy(w, block);
  std::vector<std::string> recomputed;
  for (std::size_t i = 0; i < block.gemms.size(); ++i) {
    if (p.gemm_recomputed[i]) recomputed.push_back(block.gemms[i].name);
  }
  EXPECT_EQ(recomputed,
            (std::vector<std::string>{
                "model.layers.0.self_attn.q_proj.fwd", "model.layers.0.self_attn.k_proj.fwd",
                "model.layers.0.self_attn.v_proj.fwd", "model.layers.0.mlp.gate_proj.fwd",
                "model.layers.0.mlp.down_proj.fwd"}));
  // Saved: o's output (4096), the attention output (4096), up's (14336): 22528 per token.
  EXPECT_DOUBLE_EQ(p.saved_elements_per_sample, 4096.0 * 22528);
}

}  // namespace
}  // namespace ddpsim::model
