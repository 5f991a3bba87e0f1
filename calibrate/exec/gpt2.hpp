// gpt2.hpp: the executor's transformer — Hugging Face GPT2LMHeadModel (eager attention, no
// dropout) trained on the CPU in fp32 with OpenBLAS GEMMs, forward and backward by hand.
//
// Exactly the Workload model::build_hf_transformer makes of a "gpt2" config.json (tensors in
// named_parameters() order: wte, wpe; per block ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
// mlp.c_proj, weights then biases; ln_f; lm_head.weight tied to wte), so DDP's buckets over it are
// the simulator's. What runs (transformers/models/gpt2/modeling_gpt2.py): x = wte[ids] + wpe[pos];
// per block x += c_proj(attn(ln_1(x))), x += mlp.c_proj(act(mlp.c_fc(ln_2(x)))) with Conv1D
// y = x W + b (W stored [in, out]); attention materialises the causal s x s scores per head
// (q k^T / sqrt(d), masked, softmax, times v: model.attention "eager"); logits = ln_f(x) wte^T;
// loss = cross-entropy of token t+1 given tokens <= t, mean over batch * (s - 1) positions.
// Activation gelu_new / gelu_pytorch_tanh (tanh approximation) or gelu (erf). Initialisation is
// GPT2PreTrainedModel._init_weights: N(0, 0.02) weights and embeddings, zero biases, unit norms,
// c_proj weights N(0, 0.02 / sqrt(2 n_layer)).
//
// Data: synthetic token sequences any rank can make from (seed, sample index): the first token
// uniform, each next one a fixed random permutation of the previous with probability 0.9, else
// uniform — so the loss falls from ln(vocab) as the model learns the permutation.
//
//   Gpt2 net(spec, /*init_seed=*/1, /*data_seed=*/1, shard_samples, /*micro_batch=*/4);
//   float loss = net.forward_loss(0, 1.0f, {});
//   net.backward(false, {});
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/exec/network.hpp"

namespace ddpsim::exec {

struct Gpt2Spec {
  std::int64_t vocab = 0, positions = 0, embd = 0, layers = 0, heads = 0, inner = 0;
  std::int64_t seq = 0;  ///< tokens per sample (<= positions)
  float ln_eps = 1e-5f;
  bool gelu_tanh = true;  ///< gelu_new / gelu_pytorch_tanh; false: exact (erf) gelu
  float init_std = 0.02f;
};

/// The spec of a GPT-2 config.json at `seq` tokens. Throws UnsupportedError (naming `file`) for
/// what the executor does not run: other model types, dropout above 0, untied lm_head, cross
/// attention, activations other than gelu / gelu_new / gelu_pytorch_tanh.
Gpt2Spec gpt2_spec_from_config(const nlohmann::json& config, std::int64_t seq,
                               const std::string& file);

/// Element counts of the Workload's tensors (the tied lm_head counts wte's elements).
std::vector<std::int64_t> gpt2_tensor_numels(const Gpt2Spec& spec);
/// Trained parameters (wte counted once).
std::int64_t gpt2_param_count(const Gpt2Spec& spec);
/// Host bytes one forward + backward of `batch` sequences keeps (activations, scores, logits).
std::int64_t gpt2_activation_bytes(const Gpt2Spec& spec, std::int64_t batch);

/// Token sequences of the synthetic set for the given global sample indices ([n, seq]).
std::vector<std::int32_t> gpt2_synthetic_tokens(const Gpt2Spec& spec, std::uint64_t seed,
                                                const std::vector<std::int64_t>& samples);

class Gpt2 final : public Network {
 public:
  /// `samples`: this rank's global sample indices, micro-batch after micro-batch.
  Gpt2(const Gpt2Spec& spec, std::uint64_t init_seed, std::uint64_t data_seed,
       const std::vector<std::int64_t>& samples, std::int64_t micro_batch);

  std::vector<float>& params() override { return params_; }
  std::vector<float>& grads() override { return grads_; }
  int tensor_count() const override { return static_cast<int>(numels_.size()); }
  std::int64_t offset(int t) const override { return offsets_[static_cast<std::size_t>(t)]; }
  std::int64_t numel(int t) const override { return numels_[static_cast<std::size_t>(t)]; }
  bool tied(int t) const override { return t == lm_head_tensor(); }
  int layers() const override { return static_cast<int>(spec_.layers) + 3; }
  std::string layer_name(int l) const override;
  const std::vector<int>& grads_final_after(int l) const override {
    return final_after_[static_cast<std::size_t>(l)];
  }
  float forward_loss(std::int64_t micro_batch, float loss_scale,
                     const std::function<void(int)>& on_layer) override;
  void backward(bool accumulate, const std::function<void(int)>& layer_done) override;

  /// This rank's shard of the synthetic set ([samples, seq]).
  const std::vector<std::int32_t>& tokens() const { return tokens_; }

  /// Forward and loss of explicit tokens ([batch, seq]); for tests.
  float forward_tokens(const std::int32_t* ids, std::int64_t batch, float loss_scale,
                       const std::function<void(int)>& on_layer = {});

 private:
  int lm_head_tensor() const { return static_cast<int>(2 + 12 * spec_.layers + 2); }
  int block_tensor(std::int64_t block, int k) const { return static_cast<int>(2 + 12 * block + k); }
  float* p(int t) { return params_.data() + offsets_[static_cast<std::size_t>(t)]; }
  float* g(int t) { return grads_.data() + offsets_[static_cast<std::size_t>(t)]; }

  struct BlockActs {
    std::vector<float> in, ln1, mean1, rstd1, qkv, probs, att, x1, ln2, mean2, rstd2, fc, act;
  };

  Gpt2Spec spec_;
  std::int64_t micro_batch_;
  std::vector<std::int64_t> offsets_, numels_;
  std::vector<std::vector<int>> final_after_;
  std::vector<float> params_, grads_;
  std::vector<std::int32_t> tokens_;

  // Saved by the last forward.
  std::int64_t batch_ = 0;
  std::vector<std::int32_t> ids_;
  std::vector<BlockActs> blocks_;
  std::vector<float> out_, lnf_, meanf_, rstdf_, logits_, dlogits_;
  // Backward scratch.
  std::vector<float> dx_, dtmp_, dh_, dqkv_, datt_, dfc_, dscores_;
};

}  // namespace ddpsim::exec
