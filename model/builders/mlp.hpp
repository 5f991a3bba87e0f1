// builders/mlp.hpp: a multilayer perceptron, or a list of one-tensor layers, as a Workload.
//
// Tensors are registered in the order PyTorch's model.parameters() yields them (fc0.weight,
// fc0.bias, fc1.weight, ...) and each nn.Linear lists the GEMMs cuBLAS/OpenBLAS run for it
// (builders.hpp has the conventions every builder follows).
//
//   Workload w = build_mlp({{1024, 4096, 1024}});
//   Workload l = build_from_layers({{"embed", 1000000, 2e6, 4096}});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/workload/workload.hpp"

namespace ddpsim::model {

struct MlpOptions {
  std::vector<std::int64_t> widths;  ///< input width, hidden widths..., output width (>= 2 entries)
  bool bias = true;
  std::string activation = "relu";  ///< relu | gelu | tanh | none (element-wise between linears)
};

/// A multilayer perceptron: one nn.Linear per consecutive pair of widths, named fc0, fc1, ...
/// The executor (calibrate/) builds exactly this network, so the two must agree.
Workload build_mlp(const MlpOptions& opts);

/// One entry of the scenario form "layers": [{"name", "params", "fwd_flops_per_sample",
/// "activation_bytes_per_sample"}]; a layer given this way is one parameter tensor.
struct LumpLayer {
  std::string name;
  std::int64_t params = 0;
  double fwd_flops_per_sample = 0;
  double activation_bytes_per_sample = 0;
};
Workload build_from_layers(const std::vector<LumpLayer>& layers);

}  // namespace ddpsim::model
