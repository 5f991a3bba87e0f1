// builders.hpp: turn a model description into a Workload (see workload.hpp).
//
// Every builder registers tensors in the order PyTorch's model.parameters() yields them and
// lists each layer's GEMMs with the shapes cuBLAS/OpenBLAS really run. Parameter counts are
// tested against published totals (GPT-2 small 124,439,808; Llama-2-7B 6,738,415,616;
// ResNet-50 25,557,032).
//
//   auto w = build_mlp({{1024, 4096, 1024}});
//   auto g = build_hf_transformer(json::parse(text), "config.json", 1024);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/workload.hpp"

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

/// Decoder-only transformer (GPT-2 and Llama families) or encoder (BERT) from a Hugging Face
/// config.json. `file` is only used in error messages. seq_len defaults to the config's maximum
/// positions. Bad or missing keys throw InputError naming file and JSON pointer.
Workload build_hf_transformer(const nlohmann::json& config, const std::string& file,
                              std::optional<std::int64_t> seq_len);

/// Convolutional networks from an architecture description (torchvision ResNet and VGG):
/// {"architecture": "resnet", "depth": 50} or {"architecture": "vgg", "depth": 16, ...}.
Workload build_cnn(const nlohmann::json& spec, const std::string& file);

}  // namespace ddpsim::model
