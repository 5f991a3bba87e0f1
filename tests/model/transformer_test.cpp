// Tests of build_hf_transformer: parameter counts against published totals, tensor order, tied
// and GQA shapes, GEMM shapes at a batch, FLOPs per token, activation bytes and bad configs.
#include "model/builders/transformer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/error.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

json read_config_file(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return json::parse(in);
}

json hf_config(const std::string& name) {
  return read_config_file(std::string(DDPSIM_TEST_DATA_DIR) + "/hf/" + name);
}

json zoo_file(const std::string& name) {
  return read_config_file(std::string(DDPSIM_SCENARIO_DIR) + "/models/" + name + ".json");
}

Workload build_zoo(const std::string& name) {
  const json z = zoo_file(name);
  return build_hf_transformer(z.at("config"), name + ".json", z.at("seq_len").get<std::int64_t>());
}

const Gemm& find_gemm(const Workload& w, const std::string& name) {
  for (const Layer& l : w.layers) {
    for (const Gemm& g : l.gemms) {
      if (g.name == name) return g;
    }
  }
  ADD_FAILURE() << "no GEMM " << name;
  static const Gemm none;
  return none;
}

// GPT-2 small (V=50257, P=1024, h=768, L=12, f=4h, tied lm_head):
//   embeddings (V + P) h = 51281 * 768                      = 39,383,808
//   per block 12h^2 (c_attn 3h^2, c_proj h^2, c_fc 4h^2, c_proj 4h^2) = 7,077,888
//            + 13h (biases 3h + h + 4h + h, two LayerNorms 4h) = 9,984  -> 7,087,872
//   12 blocks                                                = 85,054,464
//   ln_f 2h                                                  = 1,536
//   total                                                    = 124,439,808 (lm_head tied, not
//   counted)
TEST(HfTransformer, Gpt2SmallParameterCount) {
  const Workload w = build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", {});
  EXPECT_EQ(w.param_count(), 124'439'808);
  EXPECT_EQ(w.seq_len, 1024);  // default: n_positions
  EXPECT_EQ(w.activation_dtype, DType::kBf16);
}

// Llama-2-7B (V=32000, h=4096, L=32, f=11008, a=kv=32, untied):
//   embed_tokens + lm_head 2 V h = 2 * 131,072,000          = 262,144,000
//   per layer q,k,v,o 4h^2 = 67,108,864; gate,up,down 3hf = 135,266,304; norms 2h = 8,192
//            -> 202,383,360; 32 layers                       = 6,476,267,520
//   model.norm h                                             = 4,096
//   total                                                    = 6,738,415,616
TEST(HfTransformer, Llama2_7bParameterCount) {
  const Workload w =
      build_hf_transformer(hf_config("llama-2-7b-config.json"), "llama-2-7b-config.json", {});
  EXPECT_EQ(w.param_count(), 6'738'415'616);
  EXPECT_EQ(w.seq_len, 4096);  // default: max_position_embeddings
}

// gpt2-xl: (50257 + 1024) * 1600 + 48 * (12 * 1600^2 + 13 * 1600) + 2 * 1600
//        = 82,049,600 + 48 * 30,740,800 + 3,200 = 1,557,611,200.
// llama-2-70b: 2 * 32000 * 8192 + 80 * (2 * 8192^2 + 2 * 1024 * 8192 + 3 * 8192 * 28672
//        + 2 * 8192) + 8192 = 524,288,000 + 80 * 855,654,400 + 8,192 = 68,976,648,192.
// bert-large (BertModel with pooler): (30522 + 512 + 2) * 1024 + 2 * 1024 (embeddings)
//        + 24 * (4 * (1024^2 + 1024) + 2 * 1024 * 4096 + 4096 + 1024 + 4 * 1024)
//        + 1024^2 + 1024 (pooler) = 31,782,912 + 24 * 12,596,224 + 1,049,600 = 335,141,888.
TEST(HfTransformer, ZooParameterCounts) {
  EXPECT_EQ(build_zoo("gpt2-xl").param_count(), 1'557'611'200);
  EXPECT_EQ(build_zoo("llama-2-70b").param_count(), 68'976'648'192);
  EXPECT_EQ(build_zoo("bert-large").param_count(), 335'141'888);
}

// Every zoo file of this builder states the count the builder must reproduce.
TEST(HfTransformer, ZooFilesMatchExpectedParams) {
  for (const char* name : {"gpt2-xl", "llama-2-7b", "llama-2-70b", "bert-large", "gpt3-175b"}) {
    const json z = zoo_file(name);
    EXPECT_EQ(z.at("name").get<std::string>(), name);
    EXPECT_EQ(z.at("builder").get<std::string>(), "hf_transformer");
    EXPECT_EQ(build_zoo(name).param_count(), z.at("expected_params").get<std::int64_t>()) << name;
  }
}

// GPT-3 175B (Brown et al. 2020 Table 2.1) as a GPT-2-type model:
// (50257 + 2048) * 12288 + 96 * (12 * 12288^2 + 13 * 12288) + 2 * 12288 = 174,604,259,328,
// within 0.3% of the paper's "175.0B".
TEST(HfTransformer, Gpt3ParameterCount) {
  EXPECT_EQ(build_zoo("gpt3-175b").param_count(), 174'604'259'328);
}

// HF named_parameters order, with lm_head kept as a tensor tied to wte: 2 embeddings,
// 12 per block * 12 blocks, ln_f weight and bias = 148 distinct tensors (len(list(
// GPT2LMHeadModel.parameters())) is 148: the shared lm_head.weight is deduplicated), plus the
// tied lm_head.weight entry = 149 entries.
TEST(HfTransformer, Gpt2TensorOrderAndTiedHead) {
  const Workload w = build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", {});
  ASSERT_EQ(w.tensors.size(), 149u);
  EXPECT_EQ(w.tensors[0].name, "transformer.wte.weight");
  EXPECT_EQ(w.tensors[0].shape, (std::vector<std::int64_t>{50257, 768}));
  EXPECT_EQ(w.tensors[1].name, "transformer.wpe.weight");
  EXPECT_EQ(w.tensors[2].name, "transformer.h.0.ln_1.weight");
  EXPECT_EQ(w.tensors[3].name, "transformer.h.0.ln_1.bias");
  EXPECT_EQ(w.tensors[4].name, "transformer.h.0.attn.c_attn.weight");
  // Conv1D stores [in, out].
  EXPECT_EQ(w.tensors[4].shape, (std::vector<std::int64_t>{768, 2304}));
  EXPECT_EQ(w.tensors[13].name, "transformer.h.0.mlp.c_proj.bias");
  EXPECT_EQ(w.tensors[14].name, "transformer.h.1.ln_1.weight");
  EXPECT_EQ(w.tensors[145].name, "transformer.h.11.mlp.c_proj.bias");
  EXPECT_EQ(w.tensors[146].name, "transformer.ln_f.weight");
  EXPECT_EQ(w.tensors[147].name, "transformer.ln_f.bias");
  EXPECT_EQ(w.tensors[148].name, "lm_head.weight");
  EXPECT_EQ(w.tensors[148].tied_to, 0);
  for (std::size_t i = 0; i < 148; ++i) EXPECT_EQ(w.tensors[i].tied_to, -1) << i;
  // The tied head is not counted but still runs its logits GEMM.
  EXPECT_EQ(w.layers.back().name, "lm_head");
  const Gemm& logits = find_gemm(w, "lm_head.fwd");
  EXPECT_EQ(logits.per_sample, (GemmShape{1024, 50257, 768, 1, false, true}));
  // Untying adds V * h = 38,597,376 parameters.
  json untied = hf_config("gpt2-config.json");
  untied["tie_word_embeddings"] = false;
  EXPECT_EQ(build_hf_transformer(untied, "x.json", {}).param_count(), 124'439'808 + 38'597'376);
}

// LlamaDecoderLayer registers self_attn, mlp, then the two norms.
TEST(HfTransformer, LlamaTensorOrder) {
  const Workload w =
      build_hf_transformer(hf_config("llama-2-7b-config.json"), "llama-2-7b-config.json", {});
  ASSERT_EQ(w.tensors.size(), 1u + 32u * 9u + 2u);
  const char* layer0[] = {"model.embed_tokens.weight",
                          "model.layers.0.self_attn.q_proj.weight",
                          "model.layers.0.self_attn.k_proj.weight",
                          "model.layers.0.self_attn.v_proj.weight",
                          "model.layers.0.self_attn.o_proj.weight",
                          "model.layers.0.mlp.gate_proj.weight",
                          "model.layers.0.mlp.up_proj.weight",
                          "model.layers.0.mlp.down_proj.weight",
                          "model.layers.0.input_layernorm.weight",
                          "model.layers.0.post_attention_layernorm.weight",
                          "model.layers.1.self_attn.q_proj.weight"};
  for (std::size_t i = 0; i < std::size(layer0); ++i) EXPECT_EQ(w.tensors[i].name, layer0[i]);
  EXPECT_EQ(w.tensors[w.tensors.size() - 2].name, "model.norm.weight");
  EXPECT_EQ(w.tensors.back().name, "lm_head.weight");
  EXPECT_EQ(w.tensors.back().tied_to, -1);
  // nn.Linear stores [out, in]; down_proj is [h, f].
  EXPECT_EQ(w.tensors[7].shape, (std::vector<std::int64_t>{4096, 11008}));
}

// GQA: Llama-2-70B has 8 key/value heads of head_dim 8192/64 = 128, so k_proj and v_proj map
// 8192 -> 8 * 128 = 1024 (weight [1024, 8192]); the attention core still runs per query head.
TEST(HfTransformer, Llama2_70bGqaShapes) {
  const Workload w = build_zoo("llama-2-70b");
  EXPECT_EQ(w.tensors[2].name, "model.layers.0.self_attn.k_proj.weight");
  EXPECT_EQ(w.tensors[2].shape, (std::vector<std::int64_t>{1024, 8192}));
  EXPECT_EQ(w.tensors[3].shape, (std::vector<std::int64_t>{1024, 8192}));
  EXPECT_EQ(w.tensors[1].shape, (std::vector<std::int64_t>{8192, 8192}));
  EXPECT_EQ(find_gemm(w, "model.layers.0.self_attn.k_proj.fwd").per_sample,
            (GemmShape{4096, 1024, 8192, 1, false, true}));
  const Gemm& qk = find_gemm(w, "model.layers.0.self_attn.qk.fwd");
  EXPECT_EQ(qk.per_sample, (GemmShape{4096, 4096, 128, 64, false, true}));
  EXPECT_EQ(qk.batch_dim, BatchDim::kCount);
}

// At micro-batch 8 and s = 4096 the token dimension is 8 * 4096 = 32768:
//   q_proj forward  Y = X W^T  : M = 32768, N = 4096 (out), K = 4096 (in)
//   q_proj dgrad    dX = dY W  : M = 32768, N = 4096 (in),  K = 4096 (out)
//   q_proj wgrad    dW = dY^T X: M = 4096,  N = 4096,       K = 32768
//   QK^T per head  [s, d] x [d, s]: M = N = 4096, K = 128, 32 heads * 8 samples = 256 instances
TEST(HfTransformer, Llama2_7bGemmShapesAtBatch8) {
  const Workload w =
      build_hf_transformer(hf_config("llama-2-7b-config.json"), "llama-2-7b-config.json", {});
  EXPECT_EQ(find_gemm(w, "model.layers.0.self_attn.q_proj.fwd").at_batch(8),
            (GemmShape{32768, 4096, 4096, 1, false, true}));
  EXPECT_EQ(find_gemm(w, "model.layers.0.self_attn.q_proj.dgrad").at_batch(8),
            (GemmShape{32768, 4096, 4096, 1, false, false}));
  EXPECT_EQ(find_gemm(w, "model.layers.0.self_attn.q_proj.wgrad").at_batch(8),
            (GemmShape{4096, 4096, 32768, 1, true, false}));
  EXPECT_EQ(find_gemm(w, "model.layers.31.mlp.down_proj.fwd").at_batch(8),
            (GemmShape{32768, 4096, 11008, 1, false, true}));
  EXPECT_EQ(find_gemm(w, "model.layers.0.self_attn.qk.fwd").at_batch(8),
            (GemmShape{4096, 4096, 128, 256, false, true}));
  EXPECT_EQ(find_gemm(w, "lm_head.fwd").at_batch(8),
            (GemmShape{32768, 32000, 4096, 1, false, true}));
}

// Conv1D (W [in, out], Y = X W): same M, N, K as nn.Linear, other transposes; dW is [in, out].
TEST(HfTransformer, Gpt2Conv1dGemms) {
  const Workload w = build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", {});
  EXPECT_EQ(find_gemm(w, "transformer.h.0.attn.c_attn.fwd").per_sample,
            (GemmShape{1024, 2304, 768, 1, false, false}));
  EXPECT_EQ(find_gemm(w, "transformer.h.0.attn.c_attn.wgrad").at_batch(4),
            (GemmShape{768, 2304, 4096, 1, true, false}));
}

// Forward FLOPs per token of GPT-2 small at s = 1024 (GEMMs only; element-wise ops carry no
// FLOPs):
//   2 * matmul weights: 2 * (12 blocks * 12 h^2 + lm_head V h)
//                     = 2 * (84,934,656 + 38,597,376)             = 247,064,064
//   attention core: QK^T and P V, 2 s d FLOPs per token per head each -> 4 s h per layer
//                     = 4 * 12 * 1024 * 768                         =  37,748,736
//   total                                                           = 284,812,800
// Backward: every GEMM has a dgrad and a wgrad (or two operand gradients) of equal FLOPs, and no
// GEMM is skipped (the embeddings' output needs a gradient), so backward = 2 x forward exactly.
TEST(HfTransformer, Gpt2SmallFlopsPerToken) {
  const Workload w = build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", {});
  const double per_token = w.fwd_flops_per_sample() / 1024.0;
  EXPECT_EQ(per_token, 284'812'800.0);
  EXPECT_EQ(w.bwd_flops_per_sample(), 2.0 * w.fwd_flops_per_sample());
  for (const Layer& l : w.layers) {
    EXPECT_EQ(l.bwd_flops_per_sample(), 2.0 * l.fwd_flops_per_sample()) << l.name;
  }
}

// Activations per sample, GPT-2 small at s = 1024, h = 768, a = 12, V = 50257 (bytes), eager
// attention (Korthikanti et al. 2022):
//   per block s h (34 + 5 a s / h) = 786,432 * (34 + 80)         = 89,653,248
//   12 blocks                                                     = 1,075,838,976
//   embedding dropout mask s h                                    = 786,432
//   ln_f input 2 s h + lm_head input 2 s h + fp32 logits 4 s V    = 3,145,728 + 205,852,672
//   total                                                         = 1,285,623,808
// A fused kernel (sdpa, the default) keeps no scores, only its fp32 logsumexp, 4 a s bytes:
//   per block 34 s h + 4 a s = 26,738,688 + 49,152               = 26,787,840
//   total 12 x 26,787,840 + 786,432 + 3,145,728 + 205,852,672    = 531,238,912
TEST(HfTransformer, Gpt2SmallActivationBytes) {
  const Workload eager = build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", {},
                                              AttentionImpl::kEager);
  EXPECT_EQ(eager.layers[1].activation_bytes_per_sample, 89'653'248.0);
  EXPECT_EQ(eager.activation_bytes_per_sample(), 1'285'623'808.0);
  const Workload sdpa = build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", {});
  EXPECT_EQ(sdpa.attention, AttentionImpl::kSdpa);
  EXPECT_EQ(sdpa.layers[1].activation_bytes_per_sample, 26'787'840.0);
  EXPECT_EQ(sdpa.activation_bytes_per_sample(), 531'238'912.0);
  const Workload flash = build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", {},
                                              AttentionImpl::kFlash);
  EXPECT_EQ(flash.activation_bytes_per_sample(), 531'238'912.0);
}

// GPT-2 with every dropout probability 0 (MPT's setting; ATen's dropout is the identity at
// p = 0, no kernel, no mask): the block loses its two residual-dropout masks (2sh), the
// embeddings their mask (sh), eager attention its dropout mask and output (3as^2):
//   sdpa  block 32 s h + 4 a s = 25,165,824 + 49,152 = 25,214,976
//         total 12 x 25,214,976 + 0 + 3,145,728 + 205,852,672 = 511,578,112
//   eager block 32 s h + 2 a s^2 = 25,165,824 + 25,165,824 = 50,331,648
TEST(HfTransformer, ZeroDropoutKeepsNoMasks) {
  nlohmann::json config = hf_config("gpt2-config.json");
  config["resid_pdrop"] = 0.0;
  config["embd_pdrop"] = 0.0;
  config["attn_pdrop"] = 0.0;
  const Workload sdpa = build_hf_transformer(config, "gpt2-config.json", {});
  EXPECT_EQ(sdpa.layers[1].activation_bytes_per_sample, 25'214'976.0);
  EXPECT_EQ(sdpa.activation_bytes_per_sample(), 511'578'112.0);
  for (const Layer& l : sdpa.layers) {
    for (const ElementwiseOp& e : l.elementwise) {
      EXPECT_EQ(e.name.find("drop"), std::string::npos) << e.name;
    }
  }
  const Workload eager =
      build_hf_transformer(config, "gpt2-config.json", {}, AttentionImpl::kEager);
  EXPECT_EQ(eager.layers[1].activation_bytes_per_sample, 50'331'648.0);
  config["resid_pdrop"] = 1.0;
  EXPECT_THROW(build_hf_transformer(config, "gpt2-config.json", {}), InputError);
}

// The fused kernel runs the same six products (model FLOPs unchanged: MFU's dense convention)
// without the softmax and dropout passes over the s x s scores. GPT-2 is causal: the forward
// products execute half their FLOPs, the backward's four execute 1/2 x 5/4 = 5/8 (Q K^T is
// recomputed). BERT is not causal: 1 and 5/4.
TEST(HfTransformer, FusedAttentionKeepsModelFlopsAndDropsTheScorePasses) {
  const Workload eager = build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", {},
                                              AttentionImpl::kEager);
  const Workload sdpa = build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", {});
  EXPECT_EQ(sdpa.fwd_flops_per_sample(), eager.fwd_flops_per_sample());
  EXPECT_EQ(sdpa.bwd_flops_per_sample(), eager.bwd_flops_per_sample());
  const Layer& fused_block = sdpa.layers[1];
  const Layer& eager_block = eager.layers[1];
  // Eager: ln_1, softmax, attn_dropout, resid_dropout_add, ln_2, act, dropout_add (fwd + bwd),
  // the two norms' gamma/beta kernels, the residual gradient sums and four bias gradients.
  EXPECT_EQ(eager_block.elementwise.size(), 21u);
  EXPECT_EQ(fused_block.elementwise.size(), 17u);
  for (const ElementwiseOp& e : fused_block.elementwise) {
    EXPECT_EQ(e.name.find("softmax"), std::string::npos) << e.name;
    EXPECT_EQ(e.name.find("attn_dropout"), std::string::npos) << e.name;
  }
  int fused = 0;
  for (const Gemm& g : fused_block.gemms) {
    if (g.kernel != GemmKernel::kFusedAttention) {
      EXPECT_EQ(g.executed_flop_factor, 1.0) << g.name;
      continue;
    }
    ++fused;
    EXPECT_EQ(g.executed_flop_factor, g.role == GemmRole::kForward ? 0.5 : 0.625) << g.name;
  }
  EXPECT_EQ(fused, 6);
  for (const Gemm& g : eager_block.gemms) EXPECT_EQ(g.kernel, GemmKernel::kLibrary) << g.name;
}

// Llama adaptation (no dropout, RMSNorm, gated MLP), Llama-2-7B at s = 4096, h = 4096, a = kv =
// 32, f = 11008: attention 12 s h + 2 a s^2, MLP 4 s h + 8 s f:
//   16 * 4096 * 4096 + 2 * 32 * 4096^2 + 8 * 4096 * 11008 = 268,435,456 + 1,073,741,824
//   + 360,710,144 = 1,702,887,424 bytes per layer.
// Fused (sdpa): 2 a s^2 becomes the logsumexp 4 a s = 524,288: 268,435,456 + 524,288 +
// 360,710,144 = 629,669,888.
TEST(HfTransformer, Llama2_7bActivationBytesPerLayer) {
  const Workload w = build_hf_transformer(hf_config("llama-2-7b-config.json"),
                                          "llama-2-7b-config.json", {}, AttentionImpl::kEager);
  EXPECT_EQ(w.layers[1].name, "model.layers.0");
  EXPECT_EQ(w.layers[1].activation_bytes_per_sample, 1'702'887'424.0);
  const Workload sdpa =
      build_hf_transformer(hf_config("llama-2-7b-config.json"), "llama-2-7b-config.json", {});
  EXPECT_EQ(sdpa.layers[1].activation_bytes_per_sample, 629'669'888.0);
}

TEST(HfTransformer, SeqLenOverrideScalesShapes) {
  const Workload w =
      build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", std::int64_t{128});
  EXPECT_EQ(w.seq_len, 128);
  EXPECT_EQ(find_gemm(w, "transformer.h.0.attn.qk.fwd").per_sample,
            (GemmShape{128, 128, 64, 12, false, true}));
  // Parameters do not depend on seq_len (wpe keeps n_positions rows).
  EXPECT_EQ(w.param_count(), 124'439'808);
}

// Bad configs: the message names the file and the JSON pointer.
void expect_input_error(const json& config, std::optional<std::int64_t> seq_len,
                        const std::string& pointer) {
  try {
    build_hf_transformer(config, "bad.json", seq_len);
    ADD_FAILURE() << "no error for " << pointer;
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), pointer) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.json: " + pointer + ":"), std::string::npos)
        << e.what();
  }
}

TEST(HfTransformer, LayerCountsPastTheLimitAreRefused) {
  // A fuzz finding: n_layer 88,888,848 built for minutes. 2,048 layers is the limit.
  json c = hf_config("gpt2-config.json");
  c["n_layer"] = 2049;
  expect_input_error(c, {}, "/n_layer");
  c["n_layer"] = 88888848;
  expect_input_error(c, {}, "/n_layer");
  json l = hf_config("llama-2-7b-config.json");
  l["num_hidden_layers"] = 100000;
  expect_input_error(l, {}, "/num_hidden_layers");
  c["n_layer"] = 2048;
  EXPECT_EQ(build_hf_transformer(c, "ok.json", 8).layers.size() > 2048, true);
}

// Issue 20: extents that overflow int64 in products (a 9e18 vocab_size x 768 embedding, n_inner
// 2^62) wrapped to negative or tiny models. Every extent is capped at 2^24 = 16,777,216 (Llama
// 4's 10,485,760 positions pass), so two multiply exactly; what several legal extents multiply
// up to is check_model_size's (tests/model/workload_test.cpp, cli.hf-model-past-1e15-params).
TEST(HfTransformer, ExtentsPastTwoToThe24AreRefusedBeforeAnyProduct) {
  const json gpt2 = hf_config("gpt2-config.json");
  for (const char* key : {"vocab_size", "n_positions", "n_inner", "n_embd"}) {
    for (const json& v : {json(9000000000000000000LL), json(std::int64_t{1} << 62),
                          json(9223372036854775808ULL), json((std::int64_t{1} << 24) + 1)}) {
      json c = gpt2;
      c[key] = v;
      expect_input_error(c, {}, std::string("/") + key);
    }
  }
  json c = gpt2;
  c["n_inner"] = std::int64_t{1} << 24;  // the ceiling itself is legal
  const Workload w = build_hf_transformer(c, "ok.json", 8);
  // 12 blocks x (2 x 768 x 2^24 + 2^24 + 768) more than GPT-2's 3,072-wide MLP.
  const std::int64_t mlp = 2 * 768 * (std::int64_t{1} << 24) + (std::int64_t{1} << 24) + 768;
  const std::int64_t gpt2_mlp = 2 * 768 * 3072 + 3072 + 768;
  EXPECT_EQ(w.param_count(), 124'439'808 + 12 * (mlp - gpt2_mlp));
  json l = hf_config("llama-2-7b-config.json");
  l["max_position_embeddings"] = 10485760;  // Llama 4 Scout's
  EXPECT_NO_THROW(build_hf_transformer(l, "ok.json", 8));
  l["intermediate_size"] = 9000000000000000000LL;
  expect_input_error(l, 8, "/intermediate_size");
}

// Qwen2-7B (Qwen/Qwen2-7B config.json): Llama's layout with q/k/v biases (Qwen2Attention,
// bias=True; o_proj none) and untied embeddings. By hand: embeddings and lm_head 2 x 152,064 x
// 3,584; per layer q 3,584^2 + 3,584, k and v 3,584 x 512 + 512 each, o 3,584^2, MLP 3 x 3,584 x
// 18,944, two norms 2 x 3,584 = 233,057,792; 28 layers + final norm: 7,615,616,512 (HF: 7.62B).
// Phi-3-mini-4k (microsoft/Phi-3-mini-4k-instruct): fused qkv_proj (3,072 x 9,216) and
// gate_up_proj (3,072 x 16,384), o_proj listed first (modeling_phi3.py:222-224): per layer
// 28,311,552 + 9,437,184 + 50,331,648 + 25,165,824 + 6,144 = 113,252,352; x 32 + 2 x 32,064 x
// 3,072 + 3,072 = 3,821,079,552 (HF: 3.82B). Same FLOPs per block as Llama's split layout, one
// GEMM fewer for q/k/v and for gate/up.
TEST(HfTransformer, Qwen2AndPhi3) {
  const json qwen2 = {{"model_type", "qwen2"},        {"hidden_size", 3584},
                      {"intermediate_size", 18944},   {"num_hidden_layers", 28},
                      {"num_attention_heads", 28},    {"num_key_value_heads", 4},
                      {"vocab_size", 152064},         {"max_position_embeddings", 8192},
                      {"tie_word_embeddings", false}, {"hidden_act", "silu"}};
  const Workload q = build_hf_transformer(qwen2, "qwen2.json", std::int64_t{4096});
  EXPECT_EQ(q.param_count(), 7'615'616'512);
  EXPECT_EQ(q.tensors[2].name, "model.layers.0.self_attn.q_proj.bias");
  const json phi3 = {{"model_type", "phi3"},         {"hidden_size", 3072},
                     {"intermediate_size", 8192},    {"num_hidden_layers", 32},
                     {"num_attention_heads", 32},    {"num_key_value_heads", 32},
                     {"vocab_size", 32064},          {"max_position_embeddings", 4096},
                     {"tie_word_embeddings", false}, {"hidden_act", "silu"}};
  const Workload p = build_hf_transformer(phi3, "phi3.json", std::nullopt);
  EXPECT_EQ(p.param_count(), 3'821'079'552);
  EXPECT_EQ(p.tensors[1].name, "model.layers.0.self_attn.o_proj.weight");
  EXPECT_EQ(p.tensors[2].name, "model.layers.0.self_attn.qkv_proj.weight");
  // The same block as Llama's with split projections: equal FLOPs, 2 GEMMs fewer per pass.
  json split = phi3;
  split["model_type"] = "llama";
  const Workload l = build_hf_transformer(split, "llama.json", std::nullopt);
  EXPECT_EQ(l.param_count(), p.param_count());
  EXPECT_DOUBLE_EQ(l.layers[1].fwd_flops_per_sample(), p.layers[1].fwd_flops_per_sample());
  EXPECT_EQ(l.layers[1].gemms.size(), p.layers[1].gemms.size() + 3 * 3);
}

// Gemma-2-9B (google/gemma-2-9b config.json): head_dim 256 with 16 query and 8 KV heads, four
// norms per layer, tied embeddings (Gemma2Config's default). Per layer q 3,584 x 4,096, k and v
// 3,584 x 2,048, o 4,096 x 3,584, GeGLU 3 x 3,584 x 14,336, norms 4 x 3,584 = 198,195,200;
// x 42 + final norm 3,584 + embeddings 256,000 x 3,584 = 9,241,705,984 (HF: 9.24B). The block
// runs two more RMSNorms than Llama's (8 kernels forward each), and the soft-capped logits add
// three passes over the s x V logits.
TEST(HfTransformer, Gemma2) {
  const json gemma2 = {{"model_type", "gemma2"},
                       {"hidden_size", 3584},
                       {"intermediate_size", 14336},
                       {"num_hidden_layers", 42},
                       {"num_attention_heads", 16},
                       {"num_key_value_heads", 8},
                       {"head_dim", 256},
                       {"vocab_size", 256000},
                       {"max_position_embeddings", 8192},
                       {"hidden_activation", "gelu_pytorch_tanh"},
                       {"final_logit_softcapping", 30.0},
                       {"attn_logit_softcapping", 50.0},
                       {"sliding_window", 4096}};
  const Workload g = build_hf_transformer(gemma2, "gemma2.json", std::int64_t{4096});
  EXPECT_EQ(g.param_count(), 9'241'705'984);
  EXPECT_EQ(g.tensors.back().tied_to, 0);  // lm_head.weight is the embedding
  json llama = gemma2;
  llama["model_type"] = "llama";
  llama["tie_word_embeddings"] = true;
  const Workload l = build_hf_transformer(llama, "llama.json", std::int64_t{4096});
  int gemma_kernels = 0, llama_kernels = 0;
  for (const ElementwiseOp& e : g.layers[1].elementwise) {
    if (e.role == GemmRole::kForward) gemma_kernels += e.kernels;
  }
  for (const ElementwiseOp& e : l.layers[1].elementwise) {
    if (e.role == GemmRole::kForward) llama_kernels += e.kernels;
  }
  EXPECT_EQ(gemma_kernels, llama_kernels + 2 * 8);
  bool softcap = false;
  for (const ElementwiseOp& e : g.layers.back().elementwise) {
    softcap = softcap || e.name == "lm_head.final_logit_softcapping";
  }
  EXPECT_TRUE(softcap);
  EXPECT_NE(g.source.find("soft-capping"), std::string::npos);
}

TEST(HfTransformer, BadConfigs) {
  const json gpt2 = hf_config("gpt2-config.json");
  json c = gpt2;
  c.erase("model_type");
  expect_input_error(c, {}, "/model_type");
  c = gpt2;
  c["model_type"] = "t5";
  expect_input_error(c, {}, "/model_type");
  c = gpt2;
  c["n_layer"] = 0;
  expect_input_error(c, {}, "/n_layer");
  c = gpt2;
  c["n_embd"] = "768";
  expect_input_error(c, {}, "/n_embd");
  c = gpt2;
  c["n_embd"] = 768.0;  // integers must be JSON integers
  expect_input_error(c, {}, "/n_embd");
  c = gpt2;
  c["n_head"] = 7;  // 768 % 7 != 0
  expect_input_error(c, {}, "/n_head");
  c = gpt2;
  c["tie_word_embeddings"] = "yes";
  expect_input_error(c, {}, "/tie_word_embeddings");
  expect_input_error(gpt2, std::int64_t{0}, "/seq_len");
  expect_input_error(gpt2, std::int64_t{2048}, "/seq_len");  // past GPT-2's 1024 positions

  const json llama = hf_config("llama-2-7b-config.json");
  c = llama;
  c["num_key_value_heads"] = 5;  // 32 % 5 != 0
  expect_input_error(c, {}, "/num_key_value_heads");
  c = llama;
  c.erase("max_position_embeddings");
  expect_input_error(c, {}, "/max_position_embeddings");
  EXPECT_EQ(build_hf_transformer(c, "ok.json", std::int64_t{2048}).seq_len, 2048);
  // Llama 3.1's 131,072 positions are an inference context, not a training run's: no silent
  // default past 8,192; the error names seq_len. Given, it is used as is.
  c = llama;
  c["max_position_embeddings"] = 131072;
  expect_input_error(c, {}, "/seq_len");
  EXPECT_EQ(build_hf_transformer(c, "ok.json", std::int64_t{8192}).seq_len, 8192);
  c["max_position_embeddings"] = 8192;  // Llama 3's: still the default
  EXPECT_EQ(build_hf_transformer(c, "ok.json", std::nullopt).seq_len, 8192);
  c = llama;
  c.erase("hidden_size");
  expect_input_error(c, {}, "/hidden_size");
}

// Unknown keys are accepted; null means "HF default" for the keys that allow it.
TEST(HfTransformer, AcceptsExtraKeysAndNullDefaults) {
  json c = hf_config("llama-2-7b-config.json");
  c["some_future_key"] = {{"nested", 1}};
  c["num_key_value_heads"] = nullptr;
  c["head_dim"] = nullptr;
  EXPECT_EQ(build_hf_transformer(c, "x.json", {}).param_count(), 6'738'415'616);
  c["model_type"] = "mistral";
  EXPECT_EQ(build_hf_transformer(c, "x.json", {}).param_count(), 6'738'415'616);
  json g = hf_config("gpt2-config.json");
  g["n_inner"] = nullptr;
  EXPECT_EQ(build_hf_transformer(g, "x.json", {}).param_count(), 124'439'808);
}

// BertModel: embeddings, 24 encoder layers of 16 tensors, pooler dense (weight, bias);
// the pooler runs on one token per sample.
TEST(HfTransformer, BertLayout) {
  const Workload w = build_zoo("bert-large");
  ASSERT_EQ(w.tensors.size(), 5u + 24u * 16u + 2u);
  EXPECT_EQ(w.tensors[0].name, "embeddings.word_embeddings.weight");
  EXPECT_EQ(w.tensors[2].name, "embeddings.token_type_embeddings.weight");
  EXPECT_EQ(w.tensors[2].shape, (std::vector<std::int64_t>{2, 1024}));
  EXPECT_EQ(w.tensors[5].name, "encoder.layer.0.attention.self.query.weight");
  EXPECT_EQ(w.tensors.back().name, "pooler.dense.bias");
  EXPECT_EQ(find_gemm(w, "pooler.dense.fwd").at_batch(8),
            (GemmShape{8, 1024, 1024, 1, false, true}));
  EXPECT_EQ(w.bwd_flops_per_sample(), 2.0 * w.fwd_flops_per_sample());
}

double elementwise_bytes(const Layer& l, GemmRole role) {
  double b = 0;
  for (const ElementwiseOp& e : l.elementwise) {
    if ((e.role == GemmRole::kForward) == (role == GemmRole::kForward)) b += e.bytes_per_sample;
  }
  return b;
}

// What eager PyTorch runs besides the GEMMs in one GPT-2 block (gpt2-config.json: gelu_new,
// dropout 0.1, sdpa; sh = 1024 x 768, sf = 4 sh), 2-byte elements, per sample, by hand:
//   forward:  ln_1 4sh, resid_dropout_add 7sh, ln_2 4sh, gelu_new's 8 kernels 36sf,
//             dropout_add 7sh                                       = 22 sh + 36 sf = 166 sh
//   backward: ln_1 6 + 4 (gamma/beta) sh, residual gradient sums 2 x 6sh, bias gradients
//             c_attn 6sh + c_proj 2sh + c_fc 2sf + mlp.c_proj 2sh, resid_dropout_add 5sh,
//             ln_2 10sh, gelu_new 56sf, dropout_add 5sh             = 52 sh + 58 sf = 284 sh
// (the aten capture of reference/gpt2.py in bf16: LayerNorm 4 and 6, the engine's sums 6 each,
// gelu_new 144 n forward and 224 n backward for n = sh, i.e. 36 and 56 per element of sf).
TEST(HfTransformer, Gpt2BlockRunsWhatEagerPyTorchRuns) {
  const Workload w = build_hf_transformer(hf_config("gpt2-config.json"), "gpt2-config.json", {});
  const double sh = 1024.0 * 768.0;
  EXPECT_DOUBLE_EQ(elementwise_bytes(w.layers[1], GemmRole::kForward), 166.0 * sh);
  EXPECT_DOUBLE_EQ(elementwise_bytes(w.layers[1], GemmRole::kInputGrad), 284.0 * sh);
}

// One Llama-2-7B block (llama-2-7b-config.json: s 4096, h 4096, f 11008, 32 heads, no GQA, so
// the rotary runs over q and k: 2 sh elements), 2-byte elements, per sample, by hand:
//   forward:  two RMSNorm composites 2 x 36sh, rotary 20 x 2sh, residual adds 2 x 6sh, silu
//             4sf, the product 6sf                                    = 124 sh + 10 sf
//   backward: two RMSNorms 2 x (80 + 12)sh, gradient sums 5 x 6sh, rotary 34 x 2sh, silu 6sf,
//             the product 12sf                                        = 282 sh + 18 sf
TEST(HfTransformer, LlamaBlockRunsWhatEagerPyTorchRuns) {
  const Workload w =
      build_hf_transformer(hf_config("llama-2-7b-config.json"), "llama-2-7b-config.json", {});
  const double sh = 4096.0 * 4096.0, sf = 4096.0 * 11008.0;
  EXPECT_DOUBLE_EQ(elementwise_bytes(w.layers[1], GemmRole::kForward), 124.0 * sh + 10.0 * sf);
  EXPECT_DOUBLE_EQ(elementwise_bytes(w.layers[1], GemmRole::kInputGrad), 282.0 * sh + 18.0 * sf);
}

}  // namespace
}  // namespace ddpsim::model
