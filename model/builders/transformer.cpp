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
// activations, 1-byte dropout masks; see the helpers below for each family's count.
#include "model/builders/transformer.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "model/error.hpp"

namespace ddpsim::model {

namespace {

using nlohmann::json;

/// A value as it appears in the file, short enough for a one-line error.
std::string shown(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

/// Typed access to the keys the builders use. Keys it is not asked about are ignored: HF configs
/// carry many model-specific keys that do not change parameters or GEMM shapes.
class ConfigReader {
 public:
  ConfigReader(const json& config, const std::string& file) : config_(config), file_(file) {}

  /// An integer >= min that must be present (null counts as absent).
  std::int64_t required_int(const std::string& key, std::int64_t min) const {
    std::optional<std::int64_t> v = optional_int(key, min);
    if (!v) throw InputError(file_, "/" + key, in_range(min), "nothing (the key is missing)");
    return *v;
  }

  /// A layer count: at least 1 and at most kMaxLayers. The workload holds every layer's tensors
  /// (a dozen each), so a count in the millions would take gigabytes and minutes to build (a fuzz
  /// finding: 88,888,848). The deepest published transformer has 1,000 layers (DeepNet, Wang et
  /// al. 2022); 2,048 builds in about 0.2 s even under AddressSanitizer.
  std::int64_t layer_count(const std::string& key) const {
    const std::int64_t v = required_int(key, 1);
    if (v > kMaxLayers) {
      throw InputError(file_, "/" + key, "at most " + std::to_string(kMaxLayers) + " layers",
                       std::to_string(v));
    }
    return v;
  }
  static constexpr std::int64_t kMaxLayers = 2048;

  /// An integer in [min, kMaxExtent], or nullopt when absent or null (HF's "use the default"
  /// for such keys). Every integer the builders read is an extent (a width, a vocabulary, a
  /// head count, a position count) or a layer count (capped lower, layer_count()).
  std::optional<std::int64_t> optional_int(const std::string& key, std::int64_t min) const {
    auto it = config_.find(key);
    if (it == config_.end() || it->is_null()) return std::nullopt;
    // JSON integers only: 768.0 or "768" are errors, not values to round or parse.
    if (!it->is_number_integer()) throw InputError(file_, "/" + key, in_range(min), shown(*it));
    if (it->is_number_unsigned() &&
        it->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxExtent))
      throw InputError(file_, "/" + key, in_range(min), shown(*it));
    const std::int64_t v = it->get<std::int64_t>();
    if (v < min || v > kMaxExtent) throw InputError(file_, "/" + key, in_range(min), shown(*it));
    return v;
  }
  /// 2^24 = 16,777,216: above every published config's extents (vocabularies reach ~262k,
  /// Llama 4 Scout's max_position_embeddings is 10,485,760, hidden sizes ~16k-25k) and small
  /// enough that the product of two extents (an embedding, a projection) is exact in a double
  /// and far inside int64. A 2e9-wide n_embd or a 9e18 vocab_size is a typo or an attack, and
  /// check_model_size() refuses what several legal extents multiply up to.
  static constexpr std::int64_t kMaxExtent = std::int64_t{1} << 24;

  /// A dropout probability in [0, 1), or `fallback` when absent or null.
  double probability_or(const std::string& key, double fallback) const {
    auto it = config_.find(key);
    if (it == config_.end() || it->is_null()) return fallback;
    if (!it->is_number() || it->get<double>() < 0 || it->get<double>() >= 1) {
      throw InputError(file_, "/" + key, "a probability in [0, 1)", shown(*it));
    }
    return it->get<double>();
  }

  bool bool_or(const std::string& key, bool fallback) const {
    auto it = config_.find(key);
    if (it == config_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw InputError(file_, "/" + key, "true or false", shown(*it));
    return it->get<bool>();
  }

  std::optional<std::string> optional_string(const std::string& key) const {
    auto it = config_.find(key);
    if (it == config_.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) throw InputError(file_, "/" + key, "a string", shown(*it));
    return it->get<std::string>();
  }

  /// A key whose only supported value is `supported` (a flag that would add parameters or
  /// modules this builder does not model).
  void require_flag(const std::string& key, bool supported) const {
    if (bool_or(key, supported) != supported) {
      throw UnsupportedError(file_ + ": /" + key + ": " + (supported ? "false" : "true") +
                             " is not supported by the hf_transformer builder");
    }
  }

  const std::string& file() const { return file_; }

 private:
  static std::string in_range(std::int64_t min) {
    return "an integer from " + std::to_string(min) + " to " + std::to_string(kMaxExtent);
  }
  const json& config_;
  const std::string& file_;
};

/// Model dimensions, named as in the papers: s tokens, h hidden, L layers, a query heads,
/// kv key/value heads, d head dim, f MLP inner width, V vocabulary, P learned positions.
struct Dims {
  std::int64_t s = 0, h = 0, L = 0, a = 0, kv = 0, d = 0, f = 0, V = 0, P = 0;
};

/// How the attention core runs, and whether it is causal (decoders) or not (BERT).
struct AttentionKind {
  AttentionImpl impl = AttentionImpl::kSdpa;
  bool causal = true;
  bool dropout = true;  ///< attention-probability dropout (attn_pdrop > 0)
  bool fused() const { return impl != AttentionImpl::kEager; }
};

/// Which dropouts run. A dropout with p = 0 is no kernel and keeps no mask: ATen's dropout
/// returns its input unchanged (aten/src/ATen/native/Dropout.cpp: the fused kernel needs
/// 0 < p < 1, and _dropout_impl returns the input when p == 0).
struct Dropouts {
  bool residual = true;   ///< after attention and MLP outputs (GPT-2 resid_pdrop)
  bool embedding = true;  ///< after the embeddings (GPT-2 embd_pdrop)
};

double dbl(std::int64_t v) { return static_cast<double>(v); }

/// The sequence length: the caller's, or the config's maximum. Learned position tables (GPT-2,
/// BERT) cannot index past `max_positions`; RoPE models (Llama) can, so `bounded` says which.
std::int64_t resolve_seq_len(const std::string& file, std::optional<std::int64_t> seq_len,
                             std::optional<std::int64_t> max_positions, const std::string& max_key,
                             bool bounded) {
  if (seq_len) {
    if (*seq_len < 1)
      throw InputError(file, "/seq_len", "an integer >= 1", std::to_string(*seq_len));
    if (bounded && max_positions && *seq_len > *max_positions) {
      throw InputError(file, "/seq_len",
                       "an integer <= " + max_key + " (" + std::to_string(*max_positions) + ")",
                       std::to_string(*seq_len));
    }
    return *seq_len;
  }
  if (!max_positions) {
    throw InputError(file, "/" + max_key, "an integer >= 1 (or a seq_len given with the model)",
                     "nothing (the key is missing)");
  }
  return *max_positions;
}

// Every family counts activations in 16-bit following Korthikanti et al. (see the file comment).
Workload start_workload(std::string name, std::string source, std::int64_t seq_len) {
  Workload w;
  w.name = std::move(name);
  w.source = std::move(source);
  w.seq_len = seq_len;
  w.activation_dtype = DType::kBf16;
  return w;
}

int add_layer(Workload& w, std::string name, std::string kind) {
  Layer l;
  l.name = std::move(name);
  l.kind = std::move(kind);
  w.layers.push_back(std::move(l));
  return static_cast<int>(w.layers.size()) - 1;
}

Layer& layer_at(Workload& w, int li) { return w.layers[static_cast<std::size_t>(li)]; }

/// Forward and backward element-wise ops; bytes per sample, zero FLOPs (see the file comment).
void add_ew(Layer& l, const std::string& name, double fwd_bytes, double bwd_bytes) {
  l.elementwise.push_back({name, GemmRole::kForward, fwd_bytes, 0.0});
  l.elementwise.push_back({name + ".bwd", GemmRole::kInputGrad, bwd_bytes, 0.0});
}

/// A block output joining the residual stream. With dropout: the dropout reads 2sh and writes
/// 2sh and its 1-byte mask, fused with the add here as 7sh forward (read 2 + 2, write 2, mask 1),
/// backward reads dY and the mask and writes dX (5sh). Without: the add alone (read 4sh, write
/// 2sh); its backward passes the gradient through, no kernel.
void add_residual(Layer& l, const std::string& name, double sh, bool dropout) {
  if (dropout) {
    add_ew(l, name, 7.0 * sh, 5.0 * sh);
  } else {
    l.elementwise.push_back({name, GemmRole::kForward, 6.0 * sh, 0.0});
  }
}

/// HF GPT-2's Conv1D stores W as [in, out] and computes Y = addmm(b, X, W): same M, N, K as
/// nn.Linear, other transposes, and the weight gradient dW = X^T dY comes out [in, out].
void add_conv1d_gemms(Layer& l, const std::string& name, std::int64_t rows, std::int64_t in,
                      std::int64_t out) {
  l.gemms.push_back(
      {name + ".fwd", GemmRole::kForward, {rows, out, in, 1, false, false}, BatchDim::kM});
  l.gemms.push_back(
      {name + ".dgrad", GemmRole::kInputGrad, {rows, in, out, 1, false, true}, BatchDim::kM});
  l.gemms.push_back(
      {name + ".wgrad", GemmRole::kWeightGrad, {in, out, rows, 1, true, false}, BatchDim::kK});
}

/// The attention core, one batched GEMM per query head (GQA shares K/V between query heads but
/// the products still run per query head), each instance over one sample's s x s scores:
///   S = Q K^T     [s, s] = [s, d] [d, s]          backward dQ = dS K, dK = dS^T Q
///   O = P V       [s, d] = [s, s] [s, d]          backward dP = dO V^T, dV = P^T dO
/// Each backward GEMM has the forward's FLOPs, so the core's backward is 2x its forward in model
/// FLOPs. Fused (sdpa, flash): the six products run inside one forward and one backward kernel
/// (FlashAttention-2, Dao 2023, Algorithms 1 and 2): a causal kernel skips the blocks above the
/// diagonal, executing half the scores' FLOPs (FlashAttention's own FLOP count, flash_attn
/// benchmarks/benchmark_flash_attention.py flops(): "/ (2 if causal else 1)"), and the backward
/// recomputes S = Q K^T before its four products, executing 5/4 of their model FLOPs.
void add_attention_core(Layer& l, const std::string& prefix, std::int64_t s, std::int64_t a,
                        std::int64_t d, AttentionKind kind) {
  const std::size_t first = l.gemms.size();
  l.gemms.push_back(
      {prefix + ".qk.fwd", GemmRole::kForward, {s, s, d, a, false, true}, BatchDim::kCount});
  l.gemms.push_back(
      {prefix + ".qk.dgrad_q", GemmRole::kInputGrad, {s, d, s, a, false, false}, BatchDim::kCount});
  l.gemms.push_back(
      {prefix + ".qk.dgrad_k", GemmRole::kInputGrad, {s, d, s, a, true, false}, BatchDim::kCount});
  l.gemms.push_back(
      {prefix + ".av.fwd", GemmRole::kForward, {s, d, s, a, false, false}, BatchDim::kCount});
  l.gemms.push_back(
      {prefix + ".av.dgrad_p", GemmRole::kInputGrad, {s, s, d, a, false, true}, BatchDim::kCount});
  l.gemms.push_back(
      {prefix + ".av.dgrad_v", GemmRole::kInputGrad, {s, d, s, a, true, false}, BatchDim::kCount});
  if (!kind.fused()) return;
  const double masked = kind.causal ? 0.5 : 1.0;
  for (std::size_t i = first; i < l.gemms.size(); ++i) {
    Gemm& g = l.gemms[i];
    g.kernel = GemmKernel::kFusedAttention;
    g.executed_flop_factor = masked * (g.role == GemmRole::kForward ? 1.0 : 1.25);
  }
}

/// The activations a fused attention kernel keeps instead of the scores: its row statistics
/// (logsumexp, fp32, one per query row and head: 4as bytes; PyTorch's
/// _scaled_dot_product_flash_attention returns it for backward). Dropout inside the kernel keeps
/// only its RNG seed and offset, no mask.
double fused_attention_stats(const Dims& m) { return 4.0 * dbl(m.a) * dbl(m.s); }

// ---- Activation counts (bytes per sample, Korthikanti et al. 2022 sec. 4.1) ----

/// Attention block of GPT-2 / BERT, with its LayerNorm: 11sh + 5as^2 in the paper (QKV input
/// 2sh, Q and K 4sh, softmax output 2as^2, its dropout mask as^2, dropout output 2as^2, V 2sh,
/// output-projection input 2sh, output dropout mask sh), plus the LayerNorm's input 2sh.
double korthikanti_attention(const Dims& m, AttentionKind kind, Dropouts drop = {}) {
  const double sh = dbl(m.s) * dbl(m.h);
  const double as2 = dbl(m.a) * dbl(m.s) * dbl(m.s);
  // Fused: the paper's 5as^2 (softmax output, dropout mask and output) is never stored; the
  // output-projection input 2sh it already counts is the kernel's output O, which its backward
  // reads too. Eager without attention dropout keeps the softmax output alone (2as^2); without
  // residual dropout there is no output mask (sh).
  const double scores = kind.fused() ? fused_attention_stats(m) : (kind.dropout ? 5.0 : 2.0) * as2;
  return (drop.residual ? 13.0 : 12.0) * sh + scores;
}

/// MLP block of GPT-2 / BERT, with its LayerNorm: first linear's input 2sh, GeLU input 2sf,
/// second linear's input 2sf, dropout mask sh, LayerNorm input 2sh. At f = 4h this is the
/// paper's 19sh + 2sh = 21sh, so a block is s*h*(34 + 5as/h).
double korthikanti_mlp(const Dims& m, Dropouts drop = {}) {
  const double sh = dbl(m.s) * dbl(m.h);
  const double sf = dbl(m.s) * dbl(m.f);
  return (drop.residual ? 5.0 : 4.0) * sh + 4.0 * sf;
}

/// Llama attention, adapted (no dropout, RMSNorm, RoPE, GQA): RMSNorm input 2sh, q/k/v input
/// 2sh, rotated Q 2s*a*d and K 2s*kv*d (RoPE's backward needs only the cos/sin buffers), softmax
/// output 2as^2 (serves both the softmax backward and P V's, with no dropout in between), V
/// 2s*kv*d, o_proj input 2s*a*d. With a*d = h and kv = a: 12sh + 2as^2.
double llama_attention(const Dims& m, AttentionKind kind) {
  const double s = dbl(m.s);
  return 4.0 * s * dbl(m.h) + 4.0 * s * dbl(m.a * m.d) + 4.0 * s * dbl(m.kv * m.d) +
         (kind.fused() ? fused_attention_stats(m) : 2.0 * dbl(m.a) * s * s);
}

/// Llama gated MLP, adapted: RMSNorm input 2sh, gate/up input 2sh, SiLU input (gate output) 2sf,
/// SiLU output and up output 4sf (both operands of the product), down_proj input 2sf:
/// 4sh + 8sf.
double llama_mlp(const Dims& m) {
  const double s = dbl(m.s);
  return 4.0 * s * dbl(m.h) + 8.0 * s * dbl(m.f);
}

/// Output side of a decoder (Korthikanti sec. 4.3): final norm input 2sh (on the norm layer),
/// lm_head input 2sh and the fp32 logits kept by the cross-entropy 4sV (on the lm_head layer).
double lm_head_activations(const Dims& m) {
  return 2.0 * dbl(m.s) * dbl(m.h) + 4.0 * dbl(m.s) * dbl(m.V);
}

/// The lm_head: logits GEMM [s, h] x [h, V] and the fp32 cross-entropy (reads the bf16 logits,
/// writes fp32 log-probabilities; its backward reads those and writes the bf16 gradient).
void add_lm_head(Workload& w, const Dims& m, int tied_to, const std::string& weight_name) {
  const int li = add_layer(w, "lm_head", "linear");
  const int t = add_tensor(w, li, weight_name, {m.V, m.h});
  w.tensors[static_cast<std::size_t>(t)].tied_to = tied_to;
  Layer& l = layer_at(w, li);
  add_linear_gemms(l, "lm_head", m.s, m.h, m.V);
  const double sv = dbl(m.s) * dbl(m.V);
  add_ew(l, "lm_head.cross_entropy", 6.0 * sv, 6.0 * sv);
  l.activation_bytes_per_sample = lm_head_activations(m);
}

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
    add_ew(l, p + ".ln_1", 4.0 * sh, 6.0 * sh);
    add_conv1d_gemms(l, p + ".attn.c_attn", m.s, m.h, 3 * m.h);
    add_attention_core(l, p + ".attn", m.s, m.a, m.d, kind);
    w.attention_head_dim = m.d;
    w.attention_causal = kind.causal;
    if (!kind.fused()) {
      add_ew(l, p + ".attn.softmax", 4.0 * as2, 6.0 * as2);
      if (kind.dropout) add_ew(l, p + ".attn.attn_dropout", 5.0 * as2, 5.0 * as2);
    }
    add_conv1d_gemms(l, p + ".attn.c_proj", m.s, m.h, m.h);
    add_residual(l, p + (drop.residual ? ".attn.resid_dropout_add" : ".attn.resid_add"), sh,
                 drop.residual);
    add_ew(l, p + ".ln_2", 4.0 * sh, 6.0 * sh);
    add_conv1d_gemms(l, p + ".mlp.c_fc", m.s, m.h, m.f);
    add_ew(l, p + ".mlp.act." + act, 4.0 * sf, 6.0 * sf);
    add_conv1d_gemms(l, p + ".mlp.c_proj", m.s, m.f, m.h);
    add_residual(l, p + (drop.residual ? ".mlp.dropout_add" : ".mlp.resid_add"), sh, drop.residual);
    l.activation_bytes_per_sample = korthikanti_attention(m, kind, drop) + korthikanti_mlp(m, drop);
  }

  const int lnf = add_layer(w, "transformer.ln_f", "norm");
  add_tensor(w, lnf, "transformer.ln_f.weight", {m.h});
  add_tensor(w, lnf, "transformer.ln_f.bias", {m.h});
  add_ew(layer_at(w, lnf), "transformer.ln_f", 4.0 * sh, 6.0 * sh);
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
  const bool tied = c.bool_or("tie_word_embeddings", false);
  const bool attn_bias = c.bool_or("attention_bias", false);
  const bool mlp_bias = c.bool_or("mlp_bias", false);
  const std::string act = c.optional_string("hidden_act").value_or("silu");
  // RoPE: positions are not a table, so seq_len may exceed max_position_embeddings.
  m.s = resolve_seq_len(c.file(), seq_len, c.optional_int("max_position_embeddings", 1),
                        "max_position_embeddings", /*bounded=*/false);

  Workload w = start_workload(
      model_type,
      model_type == "mistral"
          ? "Hugging Face transformers MistralForCausalLM built from config.json (sliding-window "
            "attention modelled as dense s x s)"
          : "Hugging Face transformers LlamaForCausalLM built from config.json",
      m.s);
  const double s = dbl(m.s), sh = dbl(m.s) * dbl(m.h), sf = dbl(m.s) * dbl(m.f);
  const double as2 = dbl(m.a) * s * s;
  const double qk_rows = s * dbl((m.a + m.kv) * m.d);

  const int emb = add_layer(w, "model.embed_tokens", "embedding");
  const int embed = add_tensor(w, emb, "model.embed_tokens.weight", {m.V, m.h});
  // Gather (ids 8s, rows 2sh, output 2sh); no dropout, so nothing is saved but the ids.
  add_ew(layer_at(w, emb), "model.embed_tokens.gather", 8.0 * s + 4.0 * sh, 8.0 * s + 4.0 * sh);

  auto linear = [&](int li, const std::string& name, std::int64_t in, std::int64_t out, bool bias) {
    add_tensor(w, li, name + ".weight", {out, in});
    if (bias) add_tensor(w, li, name + ".bias", {out});
  };
  for (std::int64_t i = 0; i < m.L; ++i) {
    const std::string p = "model.layers." + std::to_string(i);
    const int li = add_layer(w, p, "transformer_block");
    // LlamaDecoderLayer.__init__ registers self_attn, mlp, input_layernorm,
    // post_attention_layernorm in this order; named_parameters() follows it.
    linear(li, p + ".self_attn.q_proj", m.h, m.a * m.d, attn_bias);
    linear(li, p + ".self_attn.k_proj", m.h, m.kv * m.d, attn_bias);
    linear(li, p + ".self_attn.v_proj", m.h, m.kv * m.d, attn_bias);
    linear(li, p + ".self_attn.o_proj", m.a * m.d, m.h, attn_bias);
    linear(li, p + ".mlp.gate_proj", m.h, m.f, mlp_bias);
    linear(li, p + ".mlp.up_proj", m.h, m.f, mlp_bias);
    linear(li, p + ".mlp.down_proj", m.f, m.h, mlp_bias);
    add_tensor(w, li, p + ".input_layernorm.weight", {m.h});
    add_tensor(w, li, p + ".post_attention_layernorm.weight", {m.h});
    Layer& l = layer_at(w, li);
    // Execution order; same byte conventions as GPT-2 (2-byte elements, unfused kernels).
    add_ew(l, p + ".input_layernorm", 4.0 * sh, 6.0 * sh);
    add_linear_gemms(l, p + ".self_attn.q_proj", m.s, m.h, m.a * m.d);
    add_linear_gemms(l, p + ".self_attn.k_proj", m.s, m.h, m.kv * m.d);
    add_linear_gemms(l, p + ".self_attn.v_proj", m.s, m.h, m.kv * m.d);
    add_ew(l, p + ".self_attn.rotary", 4.0 * qk_rows, 4.0 * qk_rows);
    add_attention_core(l, p + ".self_attn", m.s, m.a, m.d, kind);
    w.attention_head_dim = m.d;
    w.attention_causal = kind.causal;
    if (!kind.fused()) add_ew(l, p + ".self_attn.softmax", 4.0 * as2, 6.0 * as2);
    add_linear_gemms(l, p + ".self_attn.o_proj", m.s, m.a * m.d, m.h);
    add_ew(l, p + ".self_attn.residual_add", 6.0 * sh, 0.0);
    add_ew(l, p + ".post_attention_layernorm", 4.0 * sh, 6.0 * sh);
    add_linear_gemms(l, p + ".mlp.gate_proj", m.s, m.h, m.f);
    add_linear_gemms(l, p + ".mlp.up_proj", m.s, m.h, m.f);
    // act(gate) * up: reads two, writes one; backward reads dY, gate, up and writes two grads.
    add_ew(l, p + ".mlp.act_mul." + act, 6.0 * sf, 10.0 * sf);
    add_linear_gemms(l, p + ".mlp.down_proj", m.s, m.f, m.h);
    add_ew(l, p + ".mlp.residual_add", 6.0 * sh, 0.0);
    l.activation_bytes_per_sample = llama_attention(m, kind) + llama_mlp(m);
  }

  const int norm = add_layer(w, "model.norm", "norm");
  add_tensor(w, norm, "model.norm.weight", {m.h});
  add_ew(layer_at(w, norm), "model.norm", 4.0 * sh, 6.0 * sh);
  layer_at(w, norm).activation_bytes_per_sample = 2.0 * sh;

  add_lm_head(w, m, tied ? embed : -1, "lm_head.weight");
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
    add_ew(l, "embeddings.LayerNorm", 4.0 * sh, 6.0 * sh);
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
    add_attention_core(l, p + ".attention.self", m.s, m.a, m.d, kind);
    w.attention_head_dim = m.d;
    w.attention_causal = kind.causal;
    if (!kind.fused()) {
      add_ew(l, p + ".attention.self.softmax", 4.0 * as2, 6.0 * as2);
      add_ew(l, p + ".attention.self.dropout", 5.0 * as2, 5.0 * as2);
    }
    add_linear_gemms(l, p + ".attention.output.dense", m.s, m.h, m.h);
    add_ew(l, p + ".attention.output.dropout_add", 7.0 * sh, 5.0 * sh);
    add_ew(l, p + ".attention.output.LayerNorm", 4.0 * sh, 6.0 * sh);
    add_linear_gemms(l, p + ".intermediate.dense", m.s, m.h, m.f);
    add_ew(l, p + ".intermediate.act." + act, 4.0 * sf, 6.0 * sf);
    add_linear_gemms(l, p + ".output.dense", m.s, m.f, m.h);
    add_ew(l, p + ".output.dropout_add", 7.0 * sh, 5.0 * sh);
    add_ew(l, p + ".output.LayerNorm", 4.0 * sh, 6.0 * sh);
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

}  // namespace

Workload build_hf_transformer(const nlohmann::json& config, const std::string& file,
                              std::optional<std::int64_t> seq_len, AttentionImpl attention) {
  if (!config.is_object())
    throw InputError(file, "", "a JSON object (a config.json)", shown(config));
  const ConfigReader c(config, file);
  const std::optional<std::string> type = c.optional_string("model_type");
  if (!type) {
    throw InputError(file, "/model_type", "one of \"gpt2\", \"llama\", \"mistral\", \"bert\"",
                     "nothing (the key is missing)");
  }
  auto built = [&](Workload w) {
    w.attention = attention;
    return w;
  };
  if (*type == "gpt2") return built(build_gpt2(c, seq_len, attention));
  if (*type == "llama" || *type == "mistral") {
    return built(build_llama(c, *type, seq_len, attention));
  }
  if (*type == "bert") return built(build_bert(c, seq_len, attention));
  throw InputError(file, "/model_type", "one of \"gpt2\", \"llama\", \"mistral\", \"bert\"",
                   shown(config["model_type"]));
}

}  // namespace ddpsim::model
