// detail/transformer_parts.hpp: what the transformer families of transformer.cpp share: typed
// reading of a Hugging Face config.json, the model's dimensions, the layer, GEMM and element-wise
// helpers, the attention core and the activation counts (Korthikanti et al. 2022; the
// derivations are with each function). Not part of the public API.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "model/error.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::model::detail {

/// A value as it appears in the file, short enough for a one-line error.
std::string shown_brief(const nlohmann::json& v);

/// Typed access to the keys the builders use. Keys it is not asked about are ignored: HF configs
/// carry many model-specific keys that do not change parameters or GEMM shapes.
class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& config, const std::string& file)
      : config_(config), file_(file) {}

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
    if (!it->is_number_integer())
      throw InputError(file_, "/" + key, in_range(min), shown_brief(*it));
    if (it->is_number_unsigned() &&
        it->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxExtent))
      throw InputError(file_, "/" + key, in_range(min), shown_brief(*it));
    const std::int64_t v = it->get<std::int64_t>();
    if (v < min || v > kMaxExtent)
      throw InputError(file_, "/" + key, in_range(min), shown_brief(*it));
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
      throw InputError(file_, "/" + key, "a probability in [0, 1)", shown_brief(*it));
    }
    return it->get<double>();
  }

  /// A finite number > 0, or nullopt when absent or null (Gemma2's soft-capping values).
  std::optional<double> optional_number(const std::string& key) const {
    auto it = config_.find(key);
    if (it == config_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number() || !(it->get<double>() > 0) || !std::isfinite(it->get<double>())) {
      throw InputError(file_, "/" + key, "a number > 0", shown_brief(*it));
    }
    return it->get<double>();
  }

  bool bool_or(const std::string& key, bool fallback) const {
    auto it = config_.find(key);
    if (it == config_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw InputError(file_, "/" + key, "true or false", shown_brief(*it));
    return it->get<bool>();
  }

  std::optional<std::string> optional_string(const std::string& key) const {
    auto it = config_.find(key);
    if (it == config_.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) throw InputError(file_, "/" + key, "a string", shown_brief(*it));
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
  const nlohmann::json& config_;
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

inline double dbl(std::int64_t v) { return static_cast<double>(v); }

/// The sequence length: the caller's, or the config's maximum. Learned position tables (GPT-2,
/// BERT) cannot index past `max_positions`; RoPE models (Llama) can, so `bounded` says which.
/// The longest context a config's position count may set as seq_len by default (Llama 3 and
/// most open models pre-train at 8,192 or less); longer ones must be given seq_len.
inline constexpr std::int64_t kLongestDefaultSeqLen = 8192;

std::int64_t resolve_seq_len(const std::string& file, std::optional<std::int64_t> seq_len,
                             std::optional<std::int64_t> max_positions, const std::string& max_key,
                             bool bounded);

// Every family counts activations in 16-bit following Korthikanti et al. (transformer.cpp's file
// comment).
Workload start_workload(std::string name, std::string source, std::int64_t seq_len);

int add_layer(Workload& w, std::string name, std::string kind);

inline Layer& layer_at(Workload& w, int li) { return w.layers[static_cast<std::size_t>(li)]; }

/// Forward and backward element-wise ops; bytes per sample, zero FLOPs (transformer.cpp's file
/// comment).
void add_ew(Layer& l, const std::string& name, double fwd_bytes, double bwd_bytes,
            int fwd_kernels = 1, int bwd_kernels = 1);

/// A block output joining the residual stream. With dropout: the dropout reads 2sh and writes
/// 2sh and its 1-byte mask, fused with the add here as 7sh forward (read 2 + 2, write 2, mask 1),
/// backward reads dY and the mask and writes dX (5sh). Without: the add alone (read 4sh, write
/// 2sh); its backward passes the gradient through, no kernel (the sum of the two gradients of
/// its input is add_grad_accumulation's).
void add_residual(Layer& l, const std::string& name, double sh, bool dropout);

/// What eager PyTorch runs besides the GEMMs, each checked against the aten capture of the
/// reference models (python/ddpsim_torch/reference, tests/python/test_aten_capture.py; bf16
/// captures: bytes per element of the tensor named):
///
/// Autograd's gradient accumulation: a tensor read by k ops receives k gradients, which the
/// engine sums as they arrive (torch/csrc/autograd/input_buffer.cpp InputBuffer::add: an add
/// kernel, reading two gradients and writing one: 3 x 2 = 6 bytes per element in 16 bits).
/// `adds` such sums over a tensor of `elements`, backward only.
void add_grad_accumulation(Layer& l, const std::string& name, double elements, int adds,
                           double element_bytes = 2.0);

/// nn.LayerNorm on CUDA: one forward kernel (reads X, writes Y: 4 bytes per element) and two
/// backward kernels (aten/src/ATen/native/cuda/layer_norm_kernel.cu LayerNormBackwardKernelImpl:
/// the input gradient reads dY and X and writes dX, 6; GammaBetaBackward reads dY and X again
/// for the weight and bias gradients, 4): 4 forward, 10 backward per element of sh.
void add_layer_norm(Layer& l, const std::string& name, double sh);

/// A Linear's (or Conv1D's) bias gradient: dY summed over the rows (autograd's AddmmBackward:
/// `grad.sum(0)`), a reduction reading `rows x out` 16-bit elements (its output is negligible).
void add_bias_grad(Layer& l, const std::string& name, double rows_x_out, int kernels = 1);

/// Sets the compiled costs (ElementwiseOp::compiled_bytes_per_sample, compiled_kernels) of the
/// forward and backward op add_ew appended last.
void set_compiled(Layer& l, double fwd_bytes, int fwd_kernels, double bwd_bytes, int bwd_kernels);

/// HF Llama's RMSNorm (LlamaRMSNorm.forward: to(float32), pow(2), mean(-1), + eps, rsqrt, mul,
/// to(input dtype), * weight): 8 kernels moving 36 bytes per element forward (the capture:
/// 36 n + 24 r + 2 d for n elements in r rows), and the 15 ops of their backward formulas plus
/// the engine's sum of the fp32 copy's two gradients (pow and mul read it): 80 + 12 = 92 bytes
/// per element.
void add_rms_norm(Layer& l, const std::string& name, double sh);

/// HF's rotary embedding on q and k (apply_rotary_pos_emb: q * cos + rotate_half(q) * sin, with
/// rotate_half = cat(-x2, x1) over the two halves): per element of q and k, forward two
/// multiplies (4 each), the half negated (2 over the whole), the cat (4), the add (6): 20 bytes;
/// backward the two multiplies (8), the negation (2), rotate_half's two slice_backward (each
/// writes its zero-filled full tensor and the slice: 12), the engine's two sums (q feeds the cos
/// product and both slices: 12): 34 bytes. `qk_elements` is s x (a + kv) x d.
void add_rotary(Layer& l, const std::string& name, double qk_elements);

/// HF GPT-2's gelu_new (NewGELUActivation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))), a
/// Python composite of 8 kernels: 36 bytes per element forward, and 56 backward (the backward
/// formulas of pow, tanh and six multiplies, and the engine's two sums: x feeds four ops). Other
/// activations (gelu, gelu_pytorch_tanh, relu, silu) are one kernel each way: 4 and 6.
void add_activation(Layer& l, const std::string& name, const std::string& act, double elements);

/// HF GPT-2's Conv1D stores W as [in, out] and computes Y = addmm(b, X, W): same M, N, K as
/// nn.Linear, other transposes, and the weight gradient dW = X^T dY comes out [in, out].
void add_conv1d_gemms(Layer& l, const std::string& name, std::int64_t rows, std::int64_t in,
                      std::int64_t out);

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
                        std::int64_t d, AttentionKind kind);

/// The activations a fused attention kernel keeps instead of the scores: its row statistics
/// (logsumexp, fp32, one per query row and head: 4as bytes; PyTorch's
/// _scaled_dot_product_flash_attention returns it for backward). Dropout inside the kernel keeps
/// only its RNG seed and offset, no mask.
double fused_attention_stats(const Dims& m);

// ---- Activation counts (bytes per sample, Korthikanti et al. 2022 sec. 4.1) ----

/// Attention block of GPT-2 / BERT, with its LayerNorm: 11sh + 5as^2 in the paper (QKV input
/// 2sh, Q and K 4sh, softmax output 2as^2, its dropout mask as^2, dropout output 2as^2, V 2sh,
/// output-projection input 2sh, output dropout mask sh), plus the LayerNorm's input 2sh.
double korthikanti_attention(const Dims& m, AttentionKind kind, Dropouts drop = {});

/// MLP block of GPT-2 / BERT, with its LayerNorm: first linear's input 2sh, GeLU input 2sf,
/// second linear's input 2sf, dropout mask sh, LayerNorm input 2sh. At f = 4h this is the
/// paper's 19sh + 2sh = 21sh, so a block is s*h*(34 + 5as/h).
double korthikanti_mlp(const Dims& m, Dropouts drop = {});

/// Llama attention, adapted (no dropout, RMSNorm, RoPE, GQA): RMSNorm input 2sh, q/k/v input
/// 2sh, rotated Q 2s*a*d and K 2s*kv*d (RoPE's backward needs only the cos/sin buffers), softmax
/// output 2as^2 (serves both the softmax backward and P V's, with no dropout in between), V
/// 2s*kv*d, o_proj input 2s*a*d. With a*d = h and kv = a: 12sh + 2as^2.
double llama_attention(const Dims& m, AttentionKind kind);

/// Llama gated MLP, adapted: RMSNorm input 2sh, gate/up input 2sh, SiLU input (gate output) 2sf,
/// SiLU output and up output 4sf (both operands of the product), down_proj input 2sf:
/// 4sh + 8sf.
double llama_mlp(const Dims& m);

/// Output side of a decoder (Korthikanti sec. 4.3): final norm input 2sh (on the norm layer),
/// lm_head input 2sh and the fp32 logits kept by the cross-entropy 4sV (on the lm_head layer).
double lm_head_activations(const Dims& m);

/// The lm_head: logits GEMM [s, h] x [h, V] and the fp32 cross-entropy (reads the bf16 logits,
/// writes fp32 log-probabilities; its backward reads those and writes the bf16 gradient).
void add_lm_head(Workload& w, const Dims& m, int tied_to, const std::string& weight_name);

}  // namespace ddpsim::model::detail
