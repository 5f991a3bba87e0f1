// network.hpp: what the DDP logic (reducer.hpp, executor.cpp) needs of a trained network, so
// that one Reducer and one training loop serve every workload the executor runs (the MLP,
// mlp_network.hpp; the GPT-2 block stack, gpt2.hpp).
//
// Parameters live in one flat float32 array; tensor t is params()[offset(t), offset(t) +
// numel(t)) and tensors are the simulator's Workload tensors in the same order (model.parameters()
// order), so model::assign_buckets's plan indexes them directly. A tied tensor (GPT-2's lm_head
// weight is wte's) shares its target's storage: it is neither bucketed nor reduced. Each network
// owns this rank's data shard and its loss; a micro-batch is named by its index in the shard.
//
//   auto net = make_network(config, rank, world);        // executor.hpp
//   float loss = net->forward_loss(micro_batch, 1.0f / k, on_layer);
//   net->backward(/*accumulate=*/false, [&](int layer) { reducer.layer_ready(layer); });
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ddpsim::exec {

class Network {
 public:
  virtual ~Network() = default;

  virtual std::vector<float>& params() = 0;
  virtual std::vector<float>& grads() = 0;

  /// The Workload's tensors, in its order.
  virtual int tensor_count() const = 0;
  virtual std::int64_t offset(int tensor) const = 0;
  virtual std::int64_t numel(int tensor) const = 0;
  /// True for a tensor tied to an earlier one (no gradient, no bucket of its own).
  virtual bool tied(int tensor) const = 0;

  /// The Workload's layers, in forward order; backward reports them in reverse.
  virtual int layers() const = 0;
  virtual std::string layer_name(int layer) const = 0;
  /// Untied tensors whose gradients are final once layer `layer`'s backward has run (a tied
  /// weight's gradient is final after the last layer that uses it, as autograd accumulates it).
  virtual const std::vector<int>& grads_final_after(int layer) const = 0;

  /// Forward of micro-batch `micro_batch` of this rank's shard and its loss; keeps dLoss/dOutput
  /// multiplied by `loss_scale` for backward. `on_layer(l)` after each forward layer (may be
  /// empty). Returns the (unscaled) loss.
  virtual float forward_loss(std::int64_t micro_batch, float loss_scale,
                             const std::function<void(int)>& on_layer) = 0;
  /// Backward of the last forward_loss: gradients written (or added, with accumulate) into
  /// grads(); `layer_done(l)` after each layer, in reverse layer order.
  virtual void backward(bool accumulate, const std::function<void(int)>& layer_done) = 0;
};

}  // namespace ddpsim::exec
