#include "calibrate/exec/gpt2.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "calibrate/exec/gelu_erf.hpp"
#include "calibrate/exec/seeding.hpp"
#include "calibrate/exec/vector_kernels.hpp"
#include "model/error.hpp"

namespace ddpsim::exec {
namespace {

using json = nlohmann::json;

// Tensor k of a block, in named_parameters() order.
enum BlockTensor {
  kLn1W,
  kLn1B,
  kAttnW,
  kAttnB,
  kAttnProjW,
  kAttnProjB,
  kLn2W,
  kLn2B,
  kFcW,
  kFcB,
  kMlpProjW,
  kMlpProjB,
  kBlockTensors
};

int I(std::int64_t v) { return static_cast<int>(v); }

// Conv1D forward: y[n, out] = x[n, in] W[in, out] + b.
void conv1d_forward(const float* x, std::int64_t n, std::int64_t in, const float* w, const float* b,
                    std::int64_t out, float* y) {
  for (std::int64_t r = 0; r < n; ++r) std::copy_n(b, out, y + r * out);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, I(n), I(out), I(in), 1.0f, x, I(in), w,
              I(out), 1.0f, y, I(out));
}

// Conv1D backward: dW += x^T dy, db += column sums of dy, dx = dy W^T (when dx is given).
void conv1d_backward(const float* dy, const float* x, std::int64_t n, std::int64_t in,
                     std::int64_t out, const float* w, float* dw, float* db, float* dx) {
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, I(in), I(out), I(n), 1.0f, x, I(in), dy,
              I(out), 1.0f, dw, I(out));
  for (std::int64_t r = 0; r < n; ++r) {
    const float* row = dy + r * out;
    for (std::int64_t j = 0; j < out; ++j) db[j] += row[j];
  }
  if (dx != nullptr) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, I(n), I(in), I(out), 1.0f, dy, I(out), w,
                I(out), 0.0f, dx, I(in));
  }
}

// nn.LayerNorm over the last dimension (biased variance, eps inside the square root).
void layernorm_forward(const float* x, std::int64_t n, std::int64_t h, const float* w,
                       const float* b, float eps, float* y, float* mean, float* rstd) {
  for (std::int64_t r = 0; r < n; ++r) {
    const float* xr = x + r * h;
    double s = 0;
    for (std::int64_t j = 0; j < h; ++j) s += xr[j];
    const double mu = s / static_cast<double>(h);
    double v = 0;
    for (std::int64_t j = 0; j < h; ++j) v += (xr[j] - mu) * (xr[j] - mu);
    const float rs = static_cast<float>(1.0 / std::sqrt(v / static_cast<double>(h) + eps));
    mean[r] = static_cast<float>(mu);
    rstd[r] = rs;
    float* yr = y + r * h;
    for (std::int64_t j = 0; j < h; ++j) yr[j] = (xr[j] - mean[r]) * rs * w[j] + b[j];
  }
}

// LayerNorm backward: dw += sum dy*xhat, db += sum dy, dx = rstd (dxhat - mean(dxhat) - xhat
// mean(dxhat xhat)) with dxhat = dy w; dx is written, not added.
void layernorm_backward(const float* dy, const float* x, std::int64_t n, std::int64_t h,
                        const float* w, const float* mean, const float* rstd, float* dw, float* db,
                        float* dx) {
  for (std::int64_t r = 0; r < n; ++r) {
    const float* xr = x + r * h;
    const float* dyr = dy + r * h;
    double s1 = 0, s2 = 0;
    for (std::int64_t j = 0; j < h; ++j) {
      const float xhat = (xr[j] - mean[r]) * rstd[r];
      const float dxhat = dyr[j] * w[j];
      dw[j] += dyr[j] * xhat;
      db[j] += dyr[j];
      s1 += dxhat;
      s2 += static_cast<double>(dxhat) * xhat;
    }
    const float m1 = static_cast<float>(s1 / static_cast<double>(h));
    const float m2 = static_cast<float>(s2 / static_cast<double>(h));
    float* dxr = dx + r * h;
    for (std::int64_t j = 0; j < h; ++j) {
      const float xhat = (xr[j] - mean[r]) * rstd[r];
      dxr[j] = rstd[r] * (dyr[j] * w[j] - m1 - xhat * m2);
    }
  }
}

void refuse(const std::string& file, const std::string& why) {
  throw UnsupportedError(file + ": the executor cannot run this GPT-2: " + why);
}

}  // namespace

Gpt2Spec gpt2_spec_from_config(const json& c, std::int64_t seq, const std::string& file) {
  if (c.value("model_type", std::string()) != "gpt2") {
    refuse(file, "model_type " + c.value("model_type", std::string("(none)")) +
                     "; the executor's transformer is GPT2LMHeadModel (model_type gpt2)");
  }
  for (const char* k : {"attn_pdrop", "embd_pdrop", "resid_pdrop"}) {
    // GPT2Config's default is 0.1: the executor runs no dropout, so it must be 0 explicitly.
    if (c.value(k, 0.1) != 0.0) {
      refuse(file, fmt::format("{} is {} (GPT2Config's default 0.1 when absent); the executor "
                               "runs no dropout: set it to 0",
                               k, c.value(k, 0.1)));
    }
  }
  if (!c.value("tie_word_embeddings", true)) refuse(file, "an untied lm_head");
  if (c.value("add_cross_attention", false)) refuse(file, "cross attention");
  Gpt2Spec s;
  const std::string act = c.value("activation_function", std::string("gelu_new"));
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") {
    s.gelu_tanh = true;
  } else if (act == "gelu") {
    s.gelu_tanh = false;
  } else {
    refuse(file, "activation_function " + act + " (gelu, gelu_new, gelu_pytorch_tanh run)");
  }
  s.vocab = c.at("vocab_size").get<std::int64_t>();
  s.positions = c.at("n_positions").get<std::int64_t>();
  s.embd = c.at("n_embd").get<std::int64_t>();
  s.layers = c.at("n_layer").get<std::int64_t>();
  s.heads = c.at("n_head").get<std::int64_t>();
  s.inner = c.contains("n_inner") && !c.at("n_inner").is_null()
                ? c.at("n_inner").get<std::int64_t>()
                : 4 * s.embd;
  s.ln_eps = static_cast<float>(c.value("layer_norm_epsilon", 1e-5));
  s.init_std = static_cast<float>(c.value("initializer_range", 0.02));
  s.seq = seq;
  return s;
}

std::vector<std::int64_t> gpt2_tensor_numels(const Gpt2Spec& s) {
  const std::int64_t h = s.embd, f = s.inner;
  std::vector<std::int64_t> n = {s.vocab * h, s.positions * h};
  for (std::int64_t i = 0; i < s.layers; ++i) {
    for (std::int64_t v : {h, h, h * 3 * h, 3 * h, h * h, h, h, h, h * f, f, f * h, h}) {
      n.push_back(v);
    }
  }
  n.push_back(h);
  n.push_back(h);
  n.push_back(s.vocab * h);  // lm_head.weight, tied to wte
  return n;
}

std::int64_t gpt2_param_count(const Gpt2Spec& s) {
  const auto n = gpt2_tensor_numels(s);
  return std::accumulate(n.begin(), n.end() - 1, std::int64_t{0});
}

std::int64_t gpt2_activation_bytes(const Gpt2Spec& s, std::int64_t batch) {
  const std::int64_t rows = batch * s.seq, h = s.embd, f = s.inner;
  const std::int64_t per_block = rows * (8 * h + 2 * f + 4) + batch * s.heads * s.seq * s.seq;
  // Blocks, ln_f and the output, logits and their gradient, backward scratch.
  const std::int64_t floats = s.layers * per_block + rows * (2 * h + 2 * s.vocab + 2) +
                              rows * (6 * h + 2 * f) + s.seq * s.seq;
  return 4 * floats + 4 * rows;
}

std::vector<std::int32_t> gpt2_synthetic_tokens(const Gpt2Spec& s, std::uint64_t seed,
                                                const std::vector<std::int64_t>& samples) {
  std::vector<std::int32_t> perm(static_cast<std::size_t>(s.vocab));
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 pg(splitmix64(seed + 1));
  std::shuffle(perm.begin(), perm.end(), pg);
  std::vector<std::int32_t> out(samples.size() * static_cast<std::size_t>(s.seq));
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::mt19937_64 gen(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(samples[i]))));
    std::uniform_int_distribution<std::int32_t> token(0, static_cast<std::int32_t>(s.vocab - 1));
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::int32_t* row = out.data() + i * static_cast<std::size_t>(s.seq);
    row[0] = token(gen);
    for (std::int64_t t = 1; t < s.seq; ++t) {
      row[t] = u(gen) < 0.9f ? perm[static_cast<std::size_t>(row[t - 1])] : token(gen);
    }
  }
  return out;
}

Gpt2::Gpt2(const Gpt2Spec& spec, std::uint64_t init_seed, std::uint64_t data_seed,
           const std::vector<std::int64_t>& samples, std::int64_t micro_batch)
    : spec_(spec), micro_batch_(micro_batch) {
  DDPSIM_ASSERT(spec.embd % spec.heads == 0 && spec.seq >= 2 && spec.seq <= spec.positions,
                "a GPT-2 spec the executor cannot run");
  numels_ = gpt2_tensor_numels(spec);
  std::int64_t total = 0;
  for (std::size_t t = 0; t + 1 < numels_.size(); ++t) {
    offsets_.push_back(total);
    total += numels_[t];
  }
  offsets_.push_back(0);  // lm_head.weight is wte
  params_.assign(static_cast<std::size_t>(total), 0.0f);
  grads_.assign(static_cast<std::size_t>(total), 0.0f);

  // GPT2PreTrainedModel._init_weights.
  std::mt19937_64 gen(splitmix64(init_seed));
  std::normal_distribution<float> normal(0.0f, spec.init_std);
  std::normal_distribution<float> proj(
      0.0f, spec.init_std / std::sqrt(2.0f * static_cast<float>(spec.layers)));
  auto fill = [&](int t, auto& dist) {
    for (std::int64_t i = 0; i < numel(t); ++i) p(t)[i] = dist(gen);
  };
  fill(0, normal);
  fill(1, normal);
  for (std::int64_t b = 0; b < spec.layers; ++b) {
    std::fill_n(p(block_tensor(b, kLn1W)), spec.embd, 1.0f);
    std::fill_n(p(block_tensor(b, kLn2W)), spec.embd, 1.0f);
    fill(block_tensor(b, kAttnW), normal);
    fill(block_tensor(b, kAttnProjW), proj);
    fill(block_tensor(b, kFcW), normal);
    fill(block_tensor(b, kMlpProjW), proj);
  }
  std::fill_n(p(lm_head_tensor() - 2), spec.embd, 1.0f);  // ln_f.weight

  // Gradients final after each layer: embeddings wte and wpe (wte also collects the lm_head's
  // gradient, so it is final only here), each block its twelve, ln_f its two, lm_head none.
  final_after_.resize(static_cast<std::size_t>(layers()));
  final_after_[0] = {0, 1};
  for (std::int64_t b = 0; b < spec.layers; ++b) {
    for (int k = 0; k < kBlockTensors; ++k) {
      final_after_[static_cast<std::size_t>(b + 1)].push_back(block_tensor(b, k));
    }
  }
  final_after_[static_cast<std::size_t>(spec.layers + 1)] = {lm_head_tensor() - 2,
                                                             lm_head_tensor() - 1};
  tokens_ = gpt2_synthetic_tokens(spec, data_seed, samples);
  blocks_.resize(static_cast<std::size_t>(spec.layers));
}

std::string Gpt2::layer_name(int l) const {
  if (l == 0) return "transformer.embeddings";
  if (l <= spec_.layers) return "transformer.h." + std::to_string(l - 1);
  if (l == spec_.layers + 1) return "transformer.ln_f";
  return "lm_head";
}

float Gpt2::forward_loss(std::int64_t micro_batch, float loss_scale,
                         const std::function<void(int)>& on_layer) {
  const std::size_t first = static_cast<std::size_t>(micro_batch * micro_batch_ * spec_.seq);
  DDPSIM_ASSERT(first + static_cast<std::size_t>(micro_batch_ * spec_.seq) <= tokens_.size(),
                "micro-batch outside this rank's shard");
  return forward_tokens(tokens_.data() + first, micro_batch_, loss_scale, on_layer);
}

float Gpt2::forward_tokens(const std::int32_t* ids, std::int64_t batch, float loss_scale,
                           const std::function<void(int)>& on_layer) {
  const std::int64_t T = spec_.seq, h = spec_.embd, f = spec_.inner, a = spec_.heads, d = h / a,
                     V = spec_.vocab, n = batch * T;
  batch_ = batch;
  ids_.assign(ids, ids + n);
  auto step = [&](int l) {
    if (on_layer) on_layer(l);
  };

  // The residual stream entering block b is blocks_[b].in (kept for backward); after the last
  // block it is out_ (ln_f's input). Each stage writes straight into the next one's.
  const auto stream = [&](std::int64_t b) -> std::vector<float>& {
    std::vector<float>& v = b < spec_.layers ? blocks_[static_cast<std::size_t>(b)].in : out_;
    v.resize(static_cast<std::size_t>(n * h));
    return v;
  };
  // Embeddings: wte[id] + wpe[position].
  std::vector<float>& x0 = stream(0);
  for (std::int64_t r = 0; r < n; ++r) {
    const float* te = p(0) + static_cast<std::int64_t>(ids[r]) * h;
    const float* pe = p(1) + (r % T) * h;
    for (std::int64_t j = 0; j < h; ++j) x0[r * h + j] = te[j] + pe[j];
  }
  step(0);

  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (std::int64_t b = 0; b < spec_.layers; ++b) {
    BlockActs& A = blocks_[static_cast<std::size_t>(b)];
    A.ln1.resize(A.in.size());
    A.mean1.resize(static_cast<std::size_t>(n));
    A.rstd1.resize(static_cast<std::size_t>(n));
    layernorm_forward(A.in.data(), n, h, p(block_tensor(b, kLn1W)), p(block_tensor(b, kLn1B)),
                      spec_.ln_eps, A.ln1.data(), A.mean1.data(), A.rstd1.data());
    A.qkv.resize(static_cast<std::size_t>(n * 3 * h));
    conv1d_forward(A.ln1.data(), n, h, p(block_tensor(b, kAttnW)), p(block_tensor(b, kAttnB)),
                   3 * h, A.qkv.data());
    // Eager attention, one (sequence, head) at a time.
    A.probs.resize(static_cast<std::size_t>(batch * a * T * T));
    A.att.resize(static_cast<std::size_t>(n * h));
    for (std::int64_t s = 0; s < batch; ++s) {
      for (std::int64_t hd = 0; hd < a; ++hd) {
        const float* q = A.qkv.data() + s * T * 3 * h + hd * d;
        float* P = A.probs.data() + (s * a + hd) * T * T;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, I(T), I(T), I(d), scale, q, I(3 * h),
                    q + h, I(3 * h), 0.0f, P, I(T));
        for (std::int64_t t = 0; t < T; ++t) {
          float* row = P + t * T;
          const float sum = exp_shifted_sum(row, max_of(row, t + 1), row, t + 1);
          const float inv = 1.0f / sum;
          for (std::int64_t u = 0; u <= t; ++u) row[u] *= inv;
          std::fill(row + t + 1, row + T, 0.0f);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, I(T), I(d), I(T), 1.0f, P, I(T),
                    q + 2 * h, I(3 * h), 0.0f, A.att.data() + s * T * h + hd * d, I(h));
      }
    }
    A.x1.resize(static_cast<std::size_t>(n * h));
    conv1d_forward(A.att.data(), n, h, p(block_tensor(b, kAttnProjW)),
                   p(block_tensor(b, kAttnProjB)), h, A.x1.data());
    for (std::int64_t i = 0; i < n * h; ++i) A.x1[i] += A.in[i];
    A.ln2.resize(static_cast<std::size_t>(n * h));
    A.mean2.resize(static_cast<std::size_t>(n));
    A.rstd2.resize(static_cast<std::size_t>(n));
    layernorm_forward(A.x1.data(), n, h, p(block_tensor(b, kLn2W)), p(block_tensor(b, kLn2B)),
                      spec_.ln_eps, A.ln2.data(), A.mean2.data(), A.rstd2.data());
    A.fc.resize(static_cast<std::size_t>(n * f));
    conv1d_forward(A.ln2.data(), n, h, p(block_tensor(b, kFcW)), p(block_tensor(b, kFcB)), f,
                   A.fc.data());
    A.act.resize(A.fc.size());
    if (spec_.gelu_tanh) {
      gelu_tanh_forward(A.fc.data(), A.act.data(), n * f);
    } else {
      for (std::size_t i = 0; i < A.fc.size(); ++i) A.act[i] = gelu_erf(A.fc[i]);
    }
    std::vector<float>& next = stream(b + 1);
    conv1d_forward(A.act.data(), n, f, p(block_tensor(b, kMlpProjW)), p(block_tensor(b, kMlpProjB)),
                   h, next.data());
    for (std::int64_t i = 0; i < n * h; ++i) next[i] += A.x1[i];
    step(static_cast<int>(b + 1));
  }

  const int lnf_w = lm_head_tensor() - 2;
  lnf_.resize(out_.size());
  meanf_.resize(static_cast<std::size_t>(n));
  rstdf_.resize(static_cast<std::size_t>(n));
  layernorm_forward(out_.data(), n, h, p(lnf_w), p(lnf_w + 1), spec_.ln_eps, lnf_.data(),
                    meanf_.data(), rstdf_.data());
  step(static_cast<int>(spec_.layers + 1));
  logits_.resize(static_cast<std::size_t>(n * V));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, I(n), I(V), I(h), 1.0f, lnf_.data(), I(h),
              p(0), I(h), 0.0f, logits_.data(), I(V));
  step(static_cast<int>(spec_.layers + 2));

  // Cross-entropy of token t+1 at position t (the last position predicts nothing), in float
  // with the vectorizable exp, as ATen's log_softmax / nll_loss run on the CPU.
  dlogits_.assign(logits_.size(), 0.0f);
  const double count = static_cast<double>(batch * (T - 1));
  const float g = static_cast<float>(loss_scale / count);
  double sum = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    if (r % T == T - 1) continue;
    const float* z = logits_.data() + r * V;
    float* dz = dlogits_.data() + r * V;
    const std::int32_t label = ids[r + 1];
    const float zmax = max_of(z, V);
    const float denom = exp_shifted_sum(z, zmax, dz, V);
    sum += std::log(static_cast<double>(denom)) - (z[label] - zmax);
    const float inv = g / denom;
    for (std::int64_t j = 0; j < V; ++j) dz[j] *= inv;
    dz[label] -= g;
  }
  return static_cast<float>(sum / count);
}

void Gpt2::backward(bool accumulate, const std::function<void(int)>& layer_done) {
  const std::int64_t T = spec_.seq, h = spec_.embd, f = spec_.inner, a = spec_.heads, d = h / a,
                     V = spec_.vocab, n = batch_ * T;
  auto done = [&](int l) {
    if (layer_done) layer_done(l);
  };
  // Every weight gradient below is added (beta = 1), as .grad accumulates under no_sync.
  if (!accumulate) std::fill(grads_.begin(), grads_.end(), 0.0f);

  // lm_head (tied to wte): dwte += dlogits^T ln_f(x); d ln_f(x) = dlogits wte.
  dh_.resize(static_cast<std::size_t>(n * h));
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, I(V), I(h), I(n), 1.0f, dlogits_.data(),
              I(V), lnf_.data(), I(h), 1.0f, g(0), I(h));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, I(n), I(h), I(V), 1.0f, dlogits_.data(),
              I(V), p(0), I(h), 0.0f, dh_.data(), I(h));
  done(static_cast<int>(spec_.layers + 2));

  const int lnf_w = lm_head_tensor() - 2;
  dx_.resize(static_cast<std::size_t>(n * h));  // gradient of the residual stream
  layernorm_backward(dh_.data(), out_.data(), n, h, p(lnf_w), meanf_.data(), rstdf_.data(),
                     g(lnf_w), g(lnf_w + 1), dx_.data());
  done(static_cast<int>(spec_.layers + 1));

  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  dtmp_.resize(static_cast<std::size_t>(n * h));
  for (std::int64_t b = spec_.layers - 1; b >= 0; --b) {
    BlockActs& A = blocks_[static_cast<std::size_t>(b)];
    // x2 = x1 + c_proj(act(c_fc(ln_2(x1)))).
    dfc_.resize(static_cast<std::size_t>(n * f));
    conv1d_backward(dx_.data(), A.act.data(), n, f, h, p(block_tensor(b, kMlpProjW)),
                    g(block_tensor(b, kMlpProjW)), g(block_tensor(b, kMlpProjB)), dfc_.data());
    if (spec_.gelu_tanh) {
      gelu_tanh_backward(A.fc.data(), dfc_.data(), n * f);
    } else {
      for (std::size_t i = 0; i < dfc_.size(); ++i) dfc_[i] *= gelu_erf_grad(A.fc[i]);
    }
    conv1d_backward(dfc_.data(), A.ln2.data(), n, h, f, p(block_tensor(b, kFcW)),
                    g(block_tensor(b, kFcW)), g(block_tensor(b, kFcB)), dh_.data());
    layernorm_backward(dh_.data(), A.x1.data(), n, h, p(block_tensor(b, kLn2W)), A.mean2.data(),
                       A.rstd2.data(), g(block_tensor(b, kLn2W)), g(block_tensor(b, kLn2B)),
                       dtmp_.data());
    for (std::int64_t i = 0; i < n * h; ++i) dx_[i] += dtmp_[i];  // now d x1

    // x1 = x + c_proj(attn(ln_1(x))).
    datt_.resize(static_cast<std::size_t>(n * h));
    conv1d_backward(dx_.data(), A.att.data(), n, h, h, p(block_tensor(b, kAttnProjW)),
                    g(block_tensor(b, kAttnProjW)), g(block_tensor(b, kAttnProjB)), datt_.data());
    dqkv_.resize(static_cast<std::size_t>(n * 3 * h));
    dscores_.resize(static_cast<std::size_t>(T * T));
    for (std::int64_t s = 0; s < batch_; ++s) {
      for (std::int64_t hd = 0; hd < a; ++hd) {
        const float* q = A.qkv.data() + s * T * 3 * h + hd * d;
        const float* P = A.probs.data() + (s * a + hd) * T * T;
        const float* dO = datt_.data() + s * T * h + hd * d;
        float* dq = dqkv_.data() + s * T * 3 * h + hd * d;
        float* dS = dscores_.data();
        // dP = dO v^T; dv = P^T dO.
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, I(T), I(T), I(d), 1.0f, dO, I(h),
                    q + 2 * h, I(3 * h), 0.0f, dS, I(T));
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, I(T), I(d), I(T), 1.0f, P, I(T), dO,
                    I(h), 0.0f, dq + 2 * h, I(3 * h));
        // Softmax backward: dS = P (dP - sum_u P dP); masked entries have P = 0.
        for (std::int64_t t = 0; t < T; ++t) {
          const float* pr = P + t * T;
          float* dr = dS + t * T;
          float dot = 0;
          for (std::int64_t u = 0; u <= t; ++u) dot += pr[u] * dr[u];
          for (std::int64_t u = 0; u <= t; ++u) dr[u] = pr[u] * (dr[u] - dot);
          std::fill(dr + t + 1, dr + T, 0.0f);
        }
        // S = scale q k^T: dq = scale dS k, dk = scale dS^T q.
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, I(T), I(d), I(T), scale, dS, I(T),
                    q + h, I(3 * h), 0.0f, dq, I(3 * h));
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, I(T), I(d), I(T), scale, dS, I(T), q,
                    I(3 * h), 0.0f, dq + h, I(3 * h));
      }
    }
    conv1d_backward(dqkv_.data(), A.ln1.data(), n, h, 3 * h, p(block_tensor(b, kAttnW)),
                    g(block_tensor(b, kAttnW)), g(block_tensor(b, kAttnB)), dh_.data());
    layernorm_backward(dh_.data(), A.in.data(), n, h, p(block_tensor(b, kLn1W)), A.mean1.data(),
                       A.rstd1.data(), g(block_tensor(b, kLn1W)), g(block_tensor(b, kLn1B)),
                       dtmp_.data());
    for (std::int64_t i = 0; i < n * h; ++i) dx_[i] += dtmp_[i];  // now d x (block input)
    done(static_cast<int>(b + 1));
  }

  // Embeddings: scatter-add into the rows used.
  for (std::int64_t r = 0; r < n; ++r) {
    float* te = g(0) + static_cast<std::int64_t>(ids_[static_cast<std::size_t>(r)]) * h;
    float* pe = g(1) + (r % T) * h;
    const float* dr = dx_.data() + r * h;
    for (std::int64_t j = 0; j < h; ++j) {
      te[j] += dr[j];
      pe[j] += dr[j];
    }
  }
  done(0);
}

}  // namespace ddpsim::exec
