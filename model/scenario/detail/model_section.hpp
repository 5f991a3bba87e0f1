// detail/model_section.hpp: a scenario's "model" section built into a workload (a zoo preset, a
// model file, a Hugging Face config, an MLP or explicit layers), for parse_scenario
// (model/scenario/scenario.cpp). Not part of the public API.
//
//   std::string label;
//   std::shared_ptr<const Workload> w = build_workload(doc.at("model"), file, label);
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "model/workload/workload.hpp"

namespace ddpsim::model::detail {

/// "/model": the one form it gives (preset, file, hf_config, mlp or layers) built into a
/// workload; `label` is set to how reports name it ("preset gpt2-xl", "mlp 64-128-10").
std::shared_ptr<const Workload> build_workload(const nlohmann::json& model, const std::string& file,
                                               std::string& label);

}  // namespace ddpsim::model::detail
