// mlp.hpp: the executor's network — a real multilayer perceptron trained on the CPU.
//
// Exactly the network model::build_mlp describes (nn.Sequential of nn.Linear fc0, fc1, ... with
// an element-wise activation between them): parameters live in one flat float32 array in
// model.parameters() order (fc0.weight [out, in], fc0.bias [out], fc1.weight, ...), so tensor t
// of the Workload is params()[offset(t), offset(t) + numel(t)). GEMMs are OpenBLAS cblas_sgemm
// with the shapes add_linear_gemms lists (forward Y = X W^T, dgrad dX = dY W, wgrad dW = dY^T X;
// no dgrad for the first layer). Initialisation is nn.Linear's default, U(-1/sqrt(in), 1/sqrt(in))
// for weights and biases, from a seeded generator.
//
//   Mlp net({{8, 16, 4}, true, "relu"}, /*seed=*/1);
//   const float* y = net.forward(x, batch);          // [batch, 4], kept until the next forward
//   float loss = mse_loss(y, target, batch, 4, dy);   // dy = dLoss/dy
//   net.backward(dy, batch, /*accumulate=*/false, [](int layer) { /* its grads are ready */ });
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace ddpsim::exec {

enum class Activation { kRelu, kGelu, kTanh, kNone };
/// "relu" | "gelu" | "tanh" | "none"; throws ddpsim::Error otherwise.
Activation parse_activation(const std::string& name);

struct MlpSpec {
  std::vector<std::int64_t> widths;  ///< input, hidden..., output (>= 2 entries)
  bool bias = true;
  Activation activation = Activation::kRelu;
};

/// Element counts of the network's tensors in model.parameters() order (allocates nothing).
std::vector<std::int64_t> tensor_numels(const MlpSpec& spec);

class Mlp {
 public:
  Mlp(const MlpSpec& spec, std::uint64_t seed);

  int layers() const { return static_cast<int>(spec_.widths.size()) - 1; }
  std::int64_t in_width() const { return spec_.widths.front(); }
  std::int64_t out_width() const { return spec_.widths.back(); }
  /// Tensors in model.parameters() order: layer l owns tensors 2l (weight) and 2l+1 (bias) when
  /// there are biases, tensor l otherwise.
  int tensor_count() const { return static_cast<int>(offsets_.size()); }
  std::int64_t offset(int tensor) const { return offsets_[tensor]; }
  std::int64_t numel(int tensor) const { return numels_[tensor]; }
  int first_tensor(int layer) const { return spec_.bias ? 2 * layer : layer; }
  int tensors_of_layer() const { return spec_.bias ? 2 : 1; }
  std::int64_t param_count() const { return static_cast<std::int64_t>(params_.size()); }

  std::vector<float>& params() { return params_; }
  const std::vector<float>& params() const { return params_; }
  std::vector<float>& grads() { return grads_; }

  /// Forward of `batch` rows of x ([batch, in_width], row-major); returns [batch, out_width].
  /// `on_layer(l)` is called after each layer (for timing); may be empty.
  const float* forward(const float* x, std::int64_t batch,
                       const std::function<void(int)>& on_layer = {});
  /// Backward from dL/dy of the last forward. Weight and bias gradients are written (or added,
  /// with accumulate) into grads(); after layer l's gradients are final, layer_done(l) is called
  /// — layers come in reverse order, as autograd runs them.
  void backward(const float* dy, std::int64_t batch, bool accumulate,
                const std::function<void(int)>& layer_done);

 private:
  MlpSpec spec_;
  std::vector<std::int64_t> offsets_, numels_;
  std::vector<float> params_, grads_;
  // Saved for backward: inputs of each layer and pre-activations.
  std::vector<std::vector<float>> x_, z_;
  std::vector<float> out_, dz_, dx_;
};

/// Mean squared error over batch*width elements (PyTorch MSELoss, reduction="mean");
/// writes dL/dy * scale into dy and returns the loss (unscaled).
float mse_loss(const float* y, const float* target, std::int64_t batch, std::int64_t width,
               float* dy, float scale = 1.0f);
/// Softmax cross-entropy with integer labels, mean over the batch (nn.CrossEntropyLoss).
float cross_entropy_loss(const float* logits, const std::int32_t* labels, std::int64_t batch,
                         std::int64_t classes, float* dy, float scale = 1.0f);

/// A deterministic synthetic regression/classification set: sample i's input is drawn from
/// N(0, 1) by a generator seeded with (seed, i), so any rank can make any sample; targets come
/// from a fixed random teacher Mlp of the same shape (seed + 1), so the loss really falls.
class SyntheticData {
 public:
  SyntheticData(const MlpSpec& spec, std::uint64_t seed);
  /// Fills x [n, in] and targets for the samples with the given global indices.
  void make(const std::vector<std::int64_t>& indices, std::vector<float>& x, std::vector<float>& y,
            std::vector<std::int32_t>& labels);

 private:
  MlpSpec spec_;
  std::uint64_t seed_;
  Mlp teacher_;
};

enum class OptimizerKind { kSgd, kMomentum, kAdam, kAdamW };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kAdam;
  float lr = 1e-3f;
  float momentum = 0.9f;  ///< SGD momentum (PyTorch: buf = m*buf + g; first step buf = g)
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float weight_decay = 0.0f;  ///< AdamW only (decoupled)
};

/// torch.optim.SGD / Adam / AdamW update rules over a flat parameter array.
class Optimizer {
 public:
  Optimizer(const OptimizerConfig& c, std::size_t n);
  void step(std::vector<float>& params, const std::vector<float>& grads);
  void set_lr(float lr) { c_.lr = lr; }
  /// Bytes of optimizer state per parameter (0 SGD, 4 momentum, 8 Adam).
  static int state_bytes_per_param(OptimizerKind k);

 private:
  OptimizerConfig c_;
  std::vector<float> m_, v_;
  std::int64_t t_ = 0;
};

}  // namespace ddpsim::exec
