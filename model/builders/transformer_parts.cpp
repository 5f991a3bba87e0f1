// The parts of the transformer builders (detail/transformer_parts.hpp) with their derivations.
#include "model/builders/detail/transformer_parts.hpp"

#include <string>
#include <utility>

namespace ddpsim::model::detail {

using nlohmann::json;

std::string shown_brief(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

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
  // A long-context config (Llama 3.1: 131,072 positions) says what inference may read, not what
  // a training run uses (Llama 3 pre-trains at 8,192: torchtitan's llama3 train_configs set
  // seq_len = 8192): defaulting to it would price a 16x longer sequence without a word.
  if (*max_positions > kLongestDefaultSeqLen) {
    throw InputError(file, "/seq_len",
                     "a seq_len with the model (\"seq_len\": N beside the config): its " + max_key +
                         " (" + std::to_string(*max_positions) +
                         ") is longer than a training run uses (" +
                         std::to_string(kLongestDefaultSeqLen) +
                         " is the longest ddpsim takes "
                         "as a default)",
                     "no seq_len");
  }
  return *max_positions;
}

// Every family counts activations in 16-bit following Korthikanti et al. (transformer.cpp's file
// comment).
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

void add_ew(Layer& l, const std::string& name, double fwd_bytes, double bwd_bytes, int fwd_kernels,
            int bwd_kernels) {
  l.elementwise.push_back({name, GemmRole::kForward, fwd_bytes, 0.0, fwd_kernels});
  l.elementwise.push_back({name + ".bwd", GemmRole::kInputGrad, bwd_bytes, 0.0, bwd_kernels});
}

void add_residual(Layer& l, const std::string& name, double sh, bool dropout) {
  if (dropout) {
    add_ew(l, name, 7.0 * sh, 5.0 * sh);
  } else {
    l.elementwise.push_back({name, GemmRole::kForward, 6.0 * sh, 0.0});
  }
}

void add_grad_accumulation(Layer& l, const std::string& name, double elements, int adds,
                           double element_bytes) {
  // Compiled, each sum joins the backward kernel that produces one of its operands: that kernel
  // also reads the other operand (element_bytes) and launches nothing more.
  l.elementwise.push_back({name, GemmRole::kInputGrad,
                           3.0 * element_bytes * elements * static_cast<double>(adds), 0.0, adds,
                           element_bytes * elements * static_cast<double>(adds), 0});
}

void set_compiled(Layer& l, double fwd_bytes, int fwd_kernels, double bwd_bytes, int bwd_kernels) {
  const std::size_t n = l.elementwise.size();
  ElementwiseOp& f = l.elementwise[n - 2];
  ElementwiseOp& b = l.elementwise[n - 1];
  f.compiled_bytes_per_sample = fwd_bytes;
  f.compiled_kernels = fwd_kernels;
  b.compiled_bytes_per_sample = bwd_bytes;
  b.compiled_kernels = bwd_kernels;
}

void add_layer_norm(Layer& l, const std::string& name, double sh) {
  add_ew(l, name, 4.0 * sh, 6.0 * sh);
  l.elementwise.push_back({name + ".bwd.gamma_beta", GemmRole::kInputGrad, 4.0 * sh, 0.0});
}

void add_bias_grad(Layer& l, const std::string& name, double rows_x_out, int kernels) {
  l.elementwise.push_back(
      {name + ".bias_grad", GemmRole::kInputGrad, 2.0 * rows_x_out, 0.0, kernels});
}

void add_rms_norm(Layer& l, const std::string& name, double sh) {
  add_ew(l, name, 36.0 * sh, 80.0 * sh, 8, 15);
  // Compiled: one kernel reads x and writes y (2 + 2 bytes per element; the fp32 upcast and the
  // row's rstd stay in registers); backward one kernel reads dY and x and writes dX (6), a
  // second reduces dY x x_hat over the rows for the weight's gradient (re-reads both: 4).
  set_compiled(l, 4.0 * sh, 1, 10.0 * sh, 2);
  // The fp32 copy's two gradients are summed in eager; compiled, the copy never materialises.
  add_grad_accumulation(l, name + ".fp32_input", sh, 1, 4.0);
  l.elementwise.back().compiled_bytes_per_sample = 0;
}

void add_rotary(Layer& l, const std::string& name, double qk_elements) {
  // Kernels: q and k each, forward mul, neg, cat, mul, add; backward two muls, neg, two
  // slice_backward, two sums.
  add_ew(l, name, 20.0 * qk_elements, 34.0 * qk_elements, 10, 14);
  // Compiled: one kernel each way reads q and k and writes them rotated (2 + 2 bytes per
  // element); cos and sin are [s, d] and cached.
  set_compiled(l, 4.0 * qk_elements, 1, 4.0 * qk_elements, 1);
}

void add_activation(Layer& l, const std::string& name, const std::string& act, double elements) {
  if (act == "gelu_new") {
    // The capture: 8 kernels forward; backward 7 multiplies, pow, tanh_backward, 2 sums.
    add_ew(l, name, 36.0 * elements, 56.0 * elements, 8, 11);
    // Compiled: one kernel each way: read x, write y (4); read dY and x, write dX (6).
    set_compiled(l, 4.0 * elements, 1, 6.0 * elements, 1);
  } else {
    add_ew(l, name, 4.0 * elements, 6.0 * elements);
  }
}

void add_conv1d_gemms(Layer& l, const std::string& name, std::int64_t rows, std::int64_t in,
                      std::int64_t out) {
  l.gemms.push_back(
      {name + ".fwd", GemmRole::kForward, {rows, out, in, 1, false, false}, BatchDim::kM});
  l.gemms.push_back(
      {name + ".dgrad", GemmRole::kInputGrad, {rows, in, out, 1, false, true}, BatchDim::kM});
  l.gemms.push_back(
      {name + ".wgrad", GemmRole::kWeightGrad, {in, out, rows, 1, true, false}, BatchDim::kK});
}

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

double fused_attention_stats(const Dims& m) { return 4.0 * dbl(m.a) * dbl(m.s); }

// ---- Activation counts (bytes per sample, Korthikanti et al. 2022 sec. 4.1) ----

double korthikanti_attention(const Dims& m, AttentionKind kind, Dropouts drop) {
  const double sh = dbl(m.s) * dbl(m.h);
  const double as2 = dbl(m.a) * dbl(m.s) * dbl(m.s);
  // Fused: the paper's 5as^2 (softmax output, dropout mask and output) is never stored; the
  // output-projection input 2sh it already counts is the kernel's output O, which its backward
  // reads too. Eager without attention dropout keeps the softmax output alone (2as^2); without
  // residual dropout there is no output mask (sh).
  const double scores = kind.fused() ? fused_attention_stats(m) : (kind.dropout ? 5.0 : 2.0) * as2;
  return (drop.residual ? 13.0 : 12.0) * sh + scores;
}

double korthikanti_mlp(const Dims& m, Dropouts drop) {
  const double sh = dbl(m.s) * dbl(m.h);
  const double sf = dbl(m.s) * dbl(m.f);
  return (drop.residual ? 5.0 : 4.0) * sh + 4.0 * sf;
}

double llama_attention(const Dims& m, AttentionKind kind) {
  const double s = dbl(m.s);
  return 4.0 * s * dbl(m.h) + 4.0 * s * dbl(m.a * m.d) + 4.0 * s * dbl(m.kv * m.d) +
         (kind.fused() ? fused_attention_stats(m) : 2.0 * dbl(m.a) * s * s);
}

double llama_mlp(const Dims& m) {
  const double s = dbl(m.s);
  return 4.0 * s * dbl(m.h) + 8.0 * s * dbl(m.f);
}

double lm_head_activations(const Dims& m) {
  return 2.0 * dbl(m.s) * dbl(m.h) + 4.0 * dbl(m.s) * dbl(m.V);
}

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

}  // namespace ddpsim::model::detail
