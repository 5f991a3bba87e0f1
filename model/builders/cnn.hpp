// builders/cnn.hpp: convolutional networks (torchvision ResNet and VGG) as Workloads.
//
// Architectures follow torchvision/models/resnet.py (ResNet v1.5) and vgg.py; every convolution
// is listed as its im2col GEMM (builders.hpp has the conventions every builder
// follows). Parameter counts are tested against torchvision's (ResNet-50 25,557,032).
//
//   Workload r = build_cnn({{"architecture", "resnet"}, {"depth", 50}}, "resnet50.json");
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/workload/workload.hpp"

namespace ddpsim::model {

/// Convolutional networks from an architecture description (torchvision ResNet and VGG):
/// {"architecture": "resnet", "depth": 50} or {"architecture": "vgg", "depth": 16, ...}.
/// Bad or missing keys throw InputError naming `file` and the JSON pointer.
Workload build_cnn(const nlohmann::json& spec, const std::string& file);

}  // namespace ddpsim::model
