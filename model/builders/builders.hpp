// builders.hpp: turn a model description into a Workload (see workload.hpp); every builder.
//
// Every builder registers tensors in the order PyTorch's model.parameters() yields them and
// lists each layer's GEMMs with the shapes cuBLAS/OpenBLAS really run. Parameter counts are
// tested against published totals (GPT-2 small 124,439,808; Llama-2-7B 6,738,415,616;
// ResNet-50 25,557,032). Each family has its own header; this one includes them all:
//   builders/mlp.hpp          build_mlp (nn.Linear stacks), build_from_layers ("layers" form)
//   builders/transformer.hpp  build_hf_transformer (Hugging Face config.json)
//   builders/cnn.hpp          build_cnn (torchvision ResNet and VGG)
//
//   auto w = build_mlp({{1024, 4096, 1024}});
//   auto g = build_hf_transformer(json::parse(text), "config.json", 1024);
#pragma once

#include "model/builders/cnn.hpp"
#include "model/builders/mlp.hpp"
#include "model/builders/transformer.hpp"
