#include "calibrate/exec/mlp_network.hpp"

namespace ddpsim::exec {

MlpNetwork::MlpNetwork(const MlpSpec& spec, std::uint64_t init_seed, std::uint64_t data_seed,
                       const std::vector<std::int64_t>& samples, std::int64_t micro_batch,
                       Loss loss)
    : net_(spec, init_seed), micro_batch_(micro_batch), loss_(loss) {
  for (int l = 0; l < net_.layers(); ++l) {
    std::vector<int> ts;
    for (int t = net_.first_tensor(l); t < net_.first_tensor(l) + net_.tensors_of_layer(); ++t) {
      ts.push_back(t);
    }
    layer_tensors_.push_back(std::move(ts));
  }
  SyntheticData data(spec, data_seed);
  data.make(samples, xs_, ys_, labels_);
  dy_.resize(static_cast<std::size_t>(micro_batch * net_.out_width()));
}

float MlpNetwork::forward_loss(std::int64_t micro_batch, float loss_scale,
                               const std::function<void(int)>& on_layer) {
  const std::int64_t row0 = micro_batch * micro_batch_;
  const std::int64_t in = net_.in_width(), out = net_.out_width();
  const float* y = net_.forward(xs_.data() + row0 * in, micro_batch_, on_layer);
  return loss_ == Loss::kMse
             ? mse_loss(y, ys_.data() + row0 * out, micro_batch_, out, dy_.data(), loss_scale)
             : cross_entropy_loss(y, labels_.data() + row0, micro_batch_, out, dy_.data(),
                                  loss_scale);
}

void MlpNetwork::backward(bool accumulate, const std::function<void(int)>& layer_done) {
  net_.backward(dy_.data(), micro_batch_, accumulate, layer_done);
}

}  // namespace ddpsim::exec
