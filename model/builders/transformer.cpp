// Transformers from a Hugging Face config.json: GPT2LMHeadModel ("gpt2"), LlamaForCausalLM
// ("llama", and "mistral", whose parameters and GEMMs are the same), BertModel with pooler
// ("bert").
//
// Layer granularity: one Layer per transformer block (attention and MLP together), plus an
// embeddings layer, the final norm (decoders) and the lm_head / pooler. A block is the unit that
// FSDP's transformer_auto_wrap_policy wraps (GPT2Block, LlamaDecoderLayer, BertLayer), and Llama
// registers input_layernorm and post_attention_layernorm *after* its MLP although they run before
// attention and MLP: splitting a Llama block into attention and MLP layers would give the norms'
// gradients the wrong ready time, while a whole block has all its gradients ready when its
// backward ends, as in PyTorch.
//
// FLOPs: every matrix product is a GEMM with its real shape (so fwd FLOPs per token are
// 2 * matmul parameters + 4 * L * s * h for the attention core, dense s x s, without halving for
// the causal mask: the model-FLOPs convention of MFU). What a fused attention kernel (model.
// attention sdpa or flash, the default) really executes is on each GEMM's executed_flop_factor:
// half the scores when causal, and the backward's recomputation of Q K^T. Element-wise ops carry
// bytes and zero FLOPs: they are memory-bound, and counting their arithmetic would break the
// GEMM-only convention of model FLOPs (Kaplan et al. 2020, PaLM, Megatron-LM) that utilisation
// figures use.
//
// Activations follow Korthikanti et al. 2022 (arXiv:2205.05198, sec. 4.1, no parallelism): 16-bit
// activations, 1-byte dropout masks; detail/transformer_parts.hpp gives each family's count.
#include "model/builders/transformer.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "model/builders/detail/transformer_parts.hpp"
#include "model/error.hpp"

namespace ddpsim::model {

using nlohmann::json;
using namespace detail;  // the parts every family shares (detail/transformer_parts.hpp)

namespace {

// ---- GPT-2 ----

Workload build_gpt2(const ConfigReader& c, std::optional<std::int64_t> seq_len,
                    AttentionImpl attention) {
  // GPT2Config: resid_pdrop, embd_pdrop and attn_pdrop default to 0.1.
  const Dropouts drop{c.probability_or("resid_pdrop", 0.1) > 0,
                      c.probability_or("embd_pdrop", 0.1) > 0};
  const AttentionKind kind{attention, /*causal=*/true, c.probability_or("attn_pdrop", 0.1) > 0};
  Dims m;
  m.h = c.required_int("n_embd", 1);
  m.L = c.layer_count("n_layer");
  m.a = c.required_int("n_head", 1);
  m.V = c.required_int("vocab_size", 1);
  m.P = c.required_int("n_positions", 1);
  if (m.h % m.a != 0) {
    throw InputError(c.file(), "/n_head", "a divisor of n_embd (" + std::to_string(m.h) + ")",
                     std::to_string(m.a));
  }
  m.kv = m.a;
  m.d = m.h / m.a;
  // GPT2MLP: inner_dim = n_inner if not None else 4 * hidden_size.
  m.f = c.optional_int("n_inner", 1).value_or(4 * m.h);
  const bool tied = c.bool_or("tie_word_embeddings", true);
  const std::string act = c.optional_string("activation_function").value_or("gelu_new");
  c.require_flag("add_cross_attention", false);
  m.s = resolve_seq_len(c.file(), seq_len, m.P, "n_positions", /*bounded=*/true);

  Workload w = start_workload(
      "gpt2", "Hugging Face transformers GPT2LMHeadModel built from config.json", m.s);
  const double s = dbl(m.s), sh = dbl(m.s) * dbl(m.h), sf = dbl(m.s) * dbl(m.f);
  const double as2 = dbl(m.a) * s * s;

  const int emb = add_layer(w, "transformer.embeddings", "embedding");
  const int wte = add_tensor(w, emb, "transformer.wte.weight", {m.V, m.h});
  add_tensor(w, emb, "transformer.wpe.weight", {m.P, m.h});
  {
    Layer& l = layer_at(w, emb);
    // Gather two rows per token and add them (ids 8s, rows 2sh + 2sh, sum 2sh); the backward
    // scatter-adds dY into both tables' gradients.
    add_ew(l, "transformer.embeddings.gather", 8.0 * s + 6.0 * sh, 8.0 * s + 6.0 * sh);
    if (drop.embedding) {
      add_ew(l, "transformer.drop", 5.0 * sh, 5.0 * sh);
      l.activation_bytes_per_sample = sh;  // embedding dropout mask, 1 byte per element
    }
  }

  for (std::int64_t i = 0; i < m.L; ++i) {
    const std::string p = "transformer.h." + std::to_string(i);
    const int li = add_layer(w, p, "transformer_block");
    add_tensor(w, li, p + ".ln_1.weight", {m.h});
    add_tensor(w, li, p + ".ln_1.bias", {m.h});
    add_tensor(w, li, p + ".attn.c_attn.weight", {m.h, 3 * m.h});
    add_tensor(w, li, p + ".attn.c_attn.bias", {3 * m.h});
    add_tensor(w, li, p + ".attn.c_proj.weight", {m.h, m.h});
    add_tensor(w, li, p + ".attn.c_proj.bias", {m.h});
    add_tensor(w, li, p + ".ln_2.weight", {m.h});
    add_tensor(w, li, p + ".ln_2.bias", {m.h});
    add_tensor(w, li, p + ".mlp.c_fc.weight", {m.h, m.f});
    add_tensor(w, li, p + ".mlp.c_fc.bias", {m.f});
    add_tensor(w, li, p + ".mlp.c_proj.weight", {m.f, m.h});
    add_tensor(w, li, p + ".mlp.c_proj.bias", {m.h});
    Layer& l = layer_at(w, li);
    // Unfused element-wise traffic, 2-byte elements, 1-byte masks: a norm reads and writes sh
    // (backward reads dY and X, writes dX); softmax reads and writes as^2; a dropout reads and
    // writes its tensor and writes its mask; a residual add reads two and writes one.
    add_layer_norm(l, p + ".ln_1", sh);
    // The block's input feeds ln_1 and the residual; x + attn feeds ln_2 and the residual.
    add_grad_accumulation(l, p + ".residual_grads", sh, 2);
    add_conv1d_gemms(l, p + ".attn.c_attn", m.s, m.h, 3 * m.h);
    add_bias_grad(l, p + ".attn.c_attn", 3.0 * sh);
    add_attention_core(l, p + ".attn", m.s, m.a, m.d, kind);
    w.attention_head_dim = m.d;
    w.attention_causal = kind.causal;
    if (!kind.fused()) {
      add_ew(l, p + ".attn.softmax", 4.0 * as2, 6.0 * as2);
      if (kind.dropout) add_ew(l, p + ".attn.attn_dropout", 5.0 * as2, 5.0 * as2);
    }
    add_conv1d_gemms(l, p + ".attn.c_proj", m.s, m.h, m.h);
    add_bias_grad(l, p + ".attn.c_proj", sh);
    add_residual(l, p + (drop.residual ? ".attn.resid_dropout_add" : ".attn.resid_add"), sh,
                 drop.residual);
    add_layer_norm(l, p + ".ln_2", sh);
    add_conv1d_gemms(l, p + ".mlp.c_fc", m.s, m.h, m.f);
    add_bias_grad(l, p + ".mlp.c_fc", sf);
    add_activation(l, p + ".mlp.act." + act, act, sf);
    add_conv1d_gemms(l, p + ".mlp.c_proj", m.s, m.f, m.h);
    add_bias_grad(l, p + ".mlp.c_proj", sh);
    add_residual(l, p + (drop.residual ? ".mlp.dropout_add" : ".mlp.resid_add"), sh, drop.residual);
    l.activation_bytes_per_sample = korthikanti_attention(m, kind, drop) + korthikanti_mlp(m, drop);
  }

  const int lnf = add_layer(w, "transformer.ln_f", "norm");
  add_tensor(w, lnf, "transformer.ln_f.weight", {m.h});
  add_tensor(w, lnf, "transformer.ln_f.bias", {m.h});
  add_layer_norm(layer_at(w, lnf), "transformer.ln_f", sh);
  layer_at(w, lnf).activation_bytes_per_sample = 2.0 * sh;

  // GPT2LMHeadModel ties lm_head.weight to wte unless tie_word_embeddings is false.
  add_lm_head(w, m, tied ? wte : -1, "lm_head.weight");
  w.check();
  return w;
}

// ---- Llama / Mistral ----

Workload build_llama(const ConfigReader& c, const std::string& model_type,
                     std::optional<std::int64_t> seq_len, AttentionImpl attention) {
  const AttentionKind kind{attention, /*causal=*/true};
  Dims m;
  m.h = c.required_int("hidden_size", 1);
  m.f = c.required_int("intermediate_size", 1);
  m.L = c.layer_count("num_hidden_layers");
  m.a = c.required_int("num_attention_heads", 1);
  m.V = c.required_int("vocab_size", 1);
  // LlamaConfig: num_key_value_heads None -> num_attention_heads; head_dim None ->
  // hidden_size // num_attention_heads.
  m.kv = c.optional_int("num_key_value_heads", 1).value_or(m.a);
  if (m.a % m.kv != 0) {
    throw InputError(c.file(), "/num_key_value_heads",
                     "a divisor of num_attention_heads (" + std::to_string(m.a) + ")",
                     std::to_string(m.kv));
  }
  if (std::optional<std::int64_t> d = c.optional_int("head_dim", 1)) {
    m.d = *d;
  } else {
    if (m.h % m.a != 0) {
      throw InputError(
          c.file(), "/num_attention_heads",
          "a divisor of hidden_size (" + std::to_string(m.h) + ") when head_dim is absent",
          std::to_string(m.a));
    }
    m.d = m.h / m.a;
  }
  const bool tied = c.bool_or("tie_word_embeddings", model_type == "gemma2");
  const bool attn_bias = c.bool_or("attention_bias", false);
  // Qwen2Attention: q_proj, k_proj and v_proj with bias=True, o_proj without (transformers
  // models/qwen2/modeling_qwen2.py). Phi3Attention / Phi3MLP: one qkv_proj and one gate_up_proj
  // (models/phi3/modeling_phi3.py), the same FLOPs as Llama's separate projections in fewer,
  // wider GEMMs.
  const bool qkv_bias = attn_bias || model_type == "qwen2";
  const bool fused = model_type == "phi3";
  // Gemma2 (transformers models/gemma2/modeling_gemma2.py): sandwich norms (Gemma2DecoderLayer's
  // post_attention_layernorm and pre/post_feedforward_layernorm beside input_layernorm), a
  // GeGLU MLP (hidden_activation gelu_pytorch_tanh), the embeddings scaled by sqrt(hidden_size),
  // tied embeddings by default, and soft-capped final logits (tanh(logits / cap) x cap).
  const bool gemma2 = model_type == "gemma2";
  const bool mlp_bias = c.bool_or("mlp_bias", false);
  const std::string act = gemma2
                              ? c.optional_string("hidden_activation").value_or("gelu_pytorch_tanh")
                              : c.optional_string("hidden_act").value_or("silu");
  // RoPE: positions are not a table, so seq_len may exceed max_position_embeddings.
  m.s = resolve_seq_len(c.file(), seq_len, c.optional_int("max_position_embeddings", 1),
                        "max_position_embeddings", /*bounded=*/false);

  Workload w = start_workload(
      model_type,
      model_type == "mistral"
          ? "Hugging Face transformers MistralForCausalLM built from config.json (sliding-window "
            "attention modelled as dense s x s)"
      : model_type == "qwen2"
          ? "Hugging Face transformers Qwen2ForCausalLM built from config.json (q/k/v biases; "
            "sliding-window attention, when use_sliding_window, modelled as dense s x s)"
      : model_type == "phi3"
          ? "Hugging Face transformers Phi3ForCausalLM built from config.json (fused qkv_proj "
            "and gate_up_proj; sliding-window attention modelled as dense s x s)"
      : model_type == "gemma2"
          ? "Hugging Face transformers Gemma2ForCausalLM built from config.json (sandwich "
            "norms, GeGLU, scaled embeddings, soft-capped final logits; the attention logits' "
            "soft-capping, which the fused kernels do not run (transformers recommends eager "
            "attention for Gemma2 training), and the alternating sliding windows are modelled "
            "as dense s x s attention of model.attention)"
          : "Hugging Face transformers LlamaForCausalLM built from config.json",
      m.s);
  const double s = dbl(m.s), sh = dbl(m.s) * dbl(m.h), sf = dbl(m.s) * dbl(m.f);
  const double as2 = dbl(m.a) * s * s;
  const double qk_rows = s * dbl((m.a + m.kv) * m.d);

  const int emb = add_layer(w, "model.embed_tokens", "embedding");
  const int embed = add_tensor(w, emb, "model.embed_tokens.weight", {m.V, m.h});
  // Gather (ids 8s, rows 2sh, output 2sh); no dropout, so nothing is saved but the ids.
  add_ew(layer_at(w, emb), "model.embed_tokens.gather", 8.0 * s + 4.0 * sh, 8.0 * s + 4.0 * sh);
  if (gemma2) {
    // Gemma2Model.forward: hidden_states * normalizer (sqrt(hidden_size)): read 2, write 2.
    add_ew(layer_at(w, emb), "model.embed_tokens.normalizer", 4.0 * sh, 4.0 * sh);
  }

  auto linear = [&](int li, const std::string& name, std::int64_t in, std::int64_t out, bool bias) {
    add_tensor(w, li, name + ".weight", {out, in});
    if (bias) add_tensor(w, li, name + ".bias", {out});
  };
  for (std::int64_t i = 0; i < m.L; ++i) {
    const std::string p = "model.layers." + std::to_string(i);
    const int li = add_layer(w, p, "transformer_block");
    // LlamaDecoderLayer.__init__ registers self_attn, mlp, input_layernorm,
    // post_attention_layernorm in this order; named_parameters() follows it.
    if (fused) {
      // Phi3Attention registers o_proj before qkv_proj; Phi3MLP gate_up_proj, down_proj.
      linear(li, p + ".self_attn.o_proj", m.a * m.d, m.h, false);
      linear(li, p + ".self_attn.qkv_proj", m.h, (m.a + 2 * m.kv) * m.d, false);
      linear(li, p + ".mlp.gate_up_proj", m.h, 2 * m.f, false);
      linear(li, p + ".mlp.down_proj", m.f, m.h, false);
    } else {
      linear(li, p + ".self_attn.q_proj", m.h, m.a * m.d, qkv_bias);
      linear(li, p + ".self_attn.k_proj", m.h, m.kv * m.d, qkv_bias);
      linear(li, p + ".self_attn.v_proj", m.h, m.kv * m.d, qkv_bias);
      linear(li, p + ".self_attn.o_proj", m.a * m.d, m.h, attn_bias);
      linear(li, p + ".mlp.gate_proj", m.h, m.f, mlp_bias);
      linear(li, p + ".mlp.up_proj", m.h, m.f, mlp_bias);
      linear(li, p + ".mlp.down_proj", m.f, m.h, mlp_bias);
    }
    add_tensor(w, li, p + ".input_layernorm.weight", {m.h});
    add_tensor(w, li, p + ".post_attention_layernorm.weight", {m.h});
    if (gemma2) {
      add_tensor(w, li, p + ".pre_feedforward_layernorm.weight", {m.h});
      add_tensor(w, li, p + ".post_feedforward_layernorm.weight", {m.h});
    }
    Layer& l = layer_at(w, li);
    // Execution order; same byte conventions as GPT-2 (2-byte elements, unfused kernels).
    add_rms_norm(l, p + ".input_layernorm", sh);
    // Gradient sums (the aten capture's 11 per block, 5 here, the other 6 inside the RMSNorm
    // and rotary composites): the block's input feeds the norm and the residual, the normed
    // input q, k and v (2), x + attn the second norm and the residual, its norm gate and up.
    add_grad_accumulation(l, p + ".grad_sums", sh, 5);
    if (fused) {
      add_linear_gemms(l, p + ".self_attn.qkv_proj", m.s, m.h, (m.a + 2 * m.kv) * m.d);
    } else {
      add_linear_gemms(l, p + ".self_attn.q_proj", m.s, m.h, m.a * m.d);
      add_linear_gemms(l, p + ".self_attn.k_proj", m.s, m.h, m.kv * m.d);
      add_linear_gemms(l, p + ".self_attn.v_proj", m.s, m.h, m.kv * m.d);
    }
    if (qkv_bias && !fused) {
      add_bias_grad(l, p + ".self_attn.q_proj.bias_grad", s * dbl(m.a * m.d));
      add_bias_grad(l, p + ".self_attn.k_proj.bias_grad", s * dbl(m.kv * m.d));
      add_bias_grad(l, p + ".self_attn.v_proj.bias_grad", s * dbl(m.kv * m.d));
    }
    add_rotary(l, p + ".self_attn.rotary", qk_rows);
    add_attention_core(l, p + ".self_attn", m.s, m.a, m.d, kind);
    w.attention_head_dim = m.d;
    w.attention_causal = kind.causal;
    if (!kind.fused()) add_ew(l, p + ".self_attn.softmax", 4.0 * as2, 6.0 * as2);
    add_linear_gemms(l, p + ".self_attn.o_proj", m.s, m.a * m.d, m.h);
    // Gemma2 normalises the attention output before the residual (post_attention_layernorm),
    // then the residual's sum again before the MLP (pre_feedforward_layernorm).
    if (gemma2) add_rms_norm(l, p + ".post_attention_layernorm", sh);
    add_ew(l, p + ".self_attn.residual_add", 6.0 * sh, 0.0);
    // Compiled, the sum joins post_attention_layernorm's kernel: it also reads the second
    // operand and writes the sum, the next residual (2 + 2).
    set_compiled(l, 4.0 * sh, 0, 0.0, 0);
    add_rms_norm(l, p + (gemma2 ? ".pre_feedforward_layernorm" : ".post_attention_layernorm"), sh);
    if (fused) {
      // gate_up_proj's output is split with chunk(2): views, no kernel.
      add_linear_gemms(l, p + ".mlp.gate_up_proj", m.s, m.h, 2 * m.f);
    } else {
      add_linear_gemms(l, p + ".mlp.gate_proj", m.s, m.h, m.f);
      add_linear_gemms(l, p + ".mlp.up_proj", m.s, m.h, m.f);
    }
    // act_fn(gate) * up, two kernels (LlamaMLP.forward): the activation reads and writes sf
    // (4), the product reads two and writes one (6); backward the product's two gradients (read
    // dY and the other factor twice, write two: 12) and the activation's (read dY and gate,
    // write: 6). The capture: silu 12 n and mul 18 n forward, 18 n and 36 n backward (f = 3h).
    add_ew(l, p + ".mlp.act." + act, 4.0 * sf, 6.0 * sf);
    // Compiled, act_fn(gate) * up is one kernel each way: forward reads gate and up and writes
    // the product (2 + 2 + 2: the activation's read here, the rest on the product); backward
    // reads dY, gate and up and writes both gradients (10: the gate's read and gradient here).
    set_compiled(l, 2.0 * sf, 1, 4.0 * sf, 0);
    add_ew(l, p + ".mlp.mul", 6.0 * sf, 12.0 * sf, 1, 2);
    set_compiled(l, 4.0 * sf, 0, 6.0 * sf, 1);
    add_linear_gemms(l, p + ".mlp.down_proj", m.s, m.f, m.h);
    if (gemma2) add_rms_norm(l, p + ".post_feedforward_layernorm", sh);
    add_ew(l, p + ".mlp.residual_add", 6.0 * sh, 0.0);
    // Compiled: the block's last op, its own kernel (torchtitan compiles each block alone, so
    // it cannot join the next block's norm).
    set_compiled(l, 6.0 * sh, 1, 0.0, 0);
    // Gemma2's two more norms keep their inputs (2sh each).
    l.activation_bytes_per_sample =
        llama_attention(m, kind) + llama_mlp(m) + (gemma2 ? 4.0 * sh : 0.0);
  }

  const int norm = add_layer(w, "model.norm", "norm");
  add_tensor(w, norm, "model.norm.weight", {m.h});
  add_rms_norm(layer_at(w, norm), "model.norm", sh);
  layer_at(w, norm).activation_bytes_per_sample = 2.0 * sh;

  add_lm_head(w, m, tied ? embed : -1, "lm_head.weight");
  if (gemma2 && c.optional_number("final_logit_softcapping")) {
    // Gemma2ForCausalLM.forward: logits / cap, tanh, * cap on the 16-bit logits (three passes,
    // read 2 and write 2 bytes each); backward the product's, tanh's and the division's.
    add_ew(layer_at(w, static_cast<int>(w.layers.size()) - 1), "lm_head.final_logit_softcapping",
           12.0 * dbl(m.s) * dbl(m.V), 14.0 * dbl(m.s) * dbl(m.V), 3, 3);
  }
  w.check();
  return w;
}

// ---- BERT ----

Workload build_bert(const ConfigReader& c, std::optional<std::int64_t> seq_len,
                    AttentionImpl attention) {
  const AttentionKind kind{attention, /*causal=*/false};
  Dims m;
  m.h = c.required_int("hidden_size", 1);
  m.L = c.layer_count("num_hidden_layers");
  m.a = c.required_int("num_attention_heads", 1);
  m.f = c.required_int("intermediate_size", 1);
  m.V = c.required_int("vocab_size", 1);
  m.P = c.required_int("max_position_embeddings", 1);
  const std::int64_t types =
      c.optional_int("type_vocab_size", 1).value_or(2);  // BertConfig default
  if (m.h % m.a != 0) {
    throw InputError(c.file(), "/num_attention_heads",
                     "a divisor of hidden_size (" + std::to_string(m.h) + ")", std::to_string(m.a));
  }
  m.kv = m.a;
  m.d = m.h / m.a;
  const std::string act = c.optional_string("hidden_act").value_or("gelu");
  // relative_key(_query) adds a distance_embedding per layer; a decoder adds cross-attention.
  if (auto pos = c.optional_string("position_embedding_type"); pos && *pos != "absolute") {
    throw UnsupportedError(c.file() + ": /position_embedding_type: \"" + *pos +
                           "\" is not supported by the hf_transformer builder (only \"absolute\")");
  }
  c.require_flag("add_cross_attention", false);
  m.s = resolve_seq_len(c.file(), seq_len, m.P, "max_position_embeddings", /*bounded=*/true);

  Workload w = start_workload(
      "bert", "Hugging Face transformers BertModel (with pooler) built from config.json", m.s);
  const double s = dbl(m.s), sh = dbl(m.s) * dbl(m.h), sf = dbl(m.s) * dbl(m.f);
  const double as2 = dbl(m.a) * s * s;

  const int emb = add_layer(w, "embeddings", "embedding");
  add_tensor(w, emb, "embeddings.word_embeddings.weight", {m.V, m.h});
  add_tensor(w, emb, "embeddings.position_embeddings.weight", {m.P, m.h});
  add_tensor(w, emb, "embeddings.token_type_embeddings.weight", {types, m.h});
  add_tensor(w, emb, "embeddings.LayerNorm.weight", {m.h});
  add_tensor(w, emb, "embeddings.LayerNorm.bias", {m.h});
  {
    Layer& l = layer_at(w, emb);
    // Three gathers (ids 8s each, rows 2sh each) summed (2sh), LayerNorm, dropout.
    add_ew(l, "embeddings.gather", 24.0 * s + 8.0 * sh, 24.0 * s + 8.0 * sh);
    add_layer_norm(l, "embeddings.LayerNorm", sh);
    add_ew(l, "embeddings.dropout", 5.0 * sh, 5.0 * sh);
    l.activation_bytes_per_sample = 3.0 * sh;  // LayerNorm input 2sh + dropout mask sh
  }

  for (std::int64_t i = 0; i < m.L; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i);
    const int li = add_layer(w, p, "transformer_block");
    auto linear = [&](const std::string& name, std::int64_t in, std::int64_t out) {
      add_tensor(w, li, name + ".weight", {out, in});
      add_tensor(w, li, name + ".bias", {out});
    };
    linear(p + ".attention.self.query", m.h, m.h);
    linear(p + ".attention.self.key", m.h, m.h);
    linear(p + ".attention.self.value", m.h, m.h);
    linear(p + ".attention.output.dense", m.h, m.h);
    add_tensor(w, li, p + ".attention.output.LayerNorm.weight", {m.h});
    add_tensor(w, li, p + ".attention.output.LayerNorm.bias", {m.h});
    linear(p + ".intermediate.dense", m.h, m.f);
    linear(p + ".output.dense", m.f, m.h);
    add_tensor(w, li, p + ".output.LayerNorm.weight", {m.h});
    add_tensor(w, li, p + ".output.LayerNorm.bias", {m.h});
    Layer& l = layer_at(w, li);
    add_linear_gemms(l, p + ".attention.self.query", m.s, m.h, m.h);
    add_linear_gemms(l, p + ".attention.self.key", m.s, m.h, m.h);
    add_linear_gemms(l, p + ".attention.self.value", m.s, m.h, m.h);
    // Gradient sums (the aten capture's 4 per layer): the layer's input feeds query, key, value
    // and the residual (3), the attention block's output the intermediate dense and the
    // residual (1).
    add_grad_accumulation(l, p + ".grad_sums", sh, 4);
    // Bias gradients: query, key, value, attention output, output (sh each), intermediate (sf).
    add_bias_grad(l, p + ".linear_biases", 5.0 * sh + sf, 6);
    add_attention_core(l, p + ".attention.self", m.s, m.a, m.d, kind);
    w.attention_head_dim = m.d;
    w.attention_causal = kind.causal;
    if (!kind.fused()) {
      add_ew(l, p + ".attention.self.softmax", 4.0 * as2, 6.0 * as2);
      add_ew(l, p + ".attention.self.dropout", 5.0 * as2, 5.0 * as2);
    }
    add_linear_gemms(l, p + ".attention.output.dense", m.s, m.h, m.h);
    add_ew(l, p + ".attention.output.dropout_add", 7.0 * sh, 5.0 * sh);
    add_layer_norm(l, p + ".attention.output.LayerNorm", sh);
    add_linear_gemms(l, p + ".intermediate.dense", m.s, m.h, m.f);
    add_activation(l, p + ".intermediate.act." + act, act, sf);
    add_linear_gemms(l, p + ".output.dense", m.s, m.f, m.h);
    add_ew(l, p + ".output.dropout_add", 7.0 * sh, 5.0 * sh);
    add_layer_norm(l, p + ".output.LayerNorm", sh);
    // Post-LN moves the norms after the residual adds; the paper's count is unchanged.
    l.activation_bytes_per_sample = korthikanti_attention(m, kind) + korthikanti_mlp(m);
  }

  // BertPooler: dense + tanh on the first token only, so its GEMMs have one row per sample.
  const int pool = add_layer(w, "pooler", "linear");
  add_tensor(w, pool, "pooler.dense.weight", {m.h, m.h});
  add_tensor(w, pool, "pooler.dense.bias", {m.h});
  Layer& l = layer_at(w, pool);
  add_linear_gemms(l, "pooler.dense", 1, m.h, m.h);
  add_ew(l, "pooler.activation.tanh", 4.0 * dbl(m.h), 6.0 * dbl(m.h));
  l.activation_bytes_per_sample = 4.0 * dbl(m.h);  // dense input 2h + tanh output 2h
  w.check();
  return w;
}

// The families built from a config.json.
constexpr const char* kModelTypes =
    "one of \"gpt2\", \"llama\", \"mistral\", \"qwen2\", \"phi3\", \"gemma2\", \"bert\"";

}  // namespace

Workload build_hf_transformer(const nlohmann::json& config, const std::string& file,
                              std::optional<std::int64_t> seq_len, AttentionImpl attention) {
  if (!config.is_object())
    throw InputError(file, "", "a JSON object (a config.json)", shown_brief(config));
  const ConfigReader c(config, file);
  const std::optional<std::string> type = c.optional_string("model_type");
  if (!type) {
    throw InputError(file, "/model_type", kModelTypes, "nothing (the key is missing)");
  }
  auto built = [&](Workload w) {
    w.attention = attention;
    return w;
  };
  if (*type == "gpt2") return built(build_gpt2(c, seq_len, attention));
  if (*type == "llama" || *type == "mistral" || *type == "qwen2" || *type == "phi3" ||
      *type == "gemma2") {
    return built(build_llama(c, *type, seq_len, attention));
  }
  if (*type == "bert") return built(build_bert(c, seq_len, attention));
  throw InputError(file, "/model_type", kModelTypes, shown_brief(config["model_type"]));
}

}  // namespace ddpsim::model
