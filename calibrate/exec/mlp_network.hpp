// mlp_network.hpp: the MLP (mlp.hpp) as a Network — with this rank's shard of the synthetic
// regression/classification set (SyntheticData) and its loss (MSE or softmax cross-entropy).
//
//   MlpNetwork net(spec, init_seed, data_seed, shard_indices, per_gpu_batch, Loss::kMse);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/exec/mlp.hpp"
#include "calibrate/exec/network.hpp"

namespace ddpsim::exec {

enum class Loss { kMse, kCrossEntropy };

class MlpNetwork final : public Network {
 public:
  /// `samples`: this rank's global sample indices, micro-batch after micro-batch.
  MlpNetwork(const MlpSpec& spec, std::uint64_t init_seed, std::uint64_t data_seed,
             const std::vector<std::int64_t>& samples, std::int64_t micro_batch, Loss loss);

  std::vector<float>& params() override { return net_.params(); }
  std::vector<float>& grads() override { return net_.grads(); }
  int tensor_count() const override { return net_.tensor_count(); }
  std::int64_t offset(int t) const override { return net_.offset(t); }
  std::int64_t numel(int t) const override { return net_.numel(t); }
  bool tied(int) const override { return false; }
  int layers() const override { return net_.layers(); }
  std::string layer_name(int l) const override { return "fc" + std::to_string(l); }
  const std::vector<int>& grads_final_after(int l) const override {
    return layer_tensors_[static_cast<std::size_t>(l)];
  }
  float forward_loss(std::int64_t micro_batch, float loss_scale,
                     const std::function<void(int)>& on_layer) override;
  void backward(bool accumulate, const std::function<void(int)>& layer_done) override;

 private:
  Mlp net_;
  std::int64_t micro_batch_;
  Loss loss_;
  std::vector<std::vector<int>> layer_tensors_;
  std::vector<float> xs_, ys_, dy_;
  std::vector<std::int32_t> labels_;
};

}  // namespace ddpsim::exec
