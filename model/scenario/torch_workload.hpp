// torch_workload.hpp: ddpsim's workload of a scenario in the form the torch runner and the torch
// calibration (calibrate/torch/workload_model.py) build their torch.nn.Module from: every
// parameter tensor with name, shape, layer and tied-to, every layer's name and kind, the
// sequence length, buffer bytes, and a "source" block (the MLP's options, or the Hugging Face
// config.json the transformer was built from with model.attention). Used by ddpsim-validate
// --runner torch and ddpsim-calibrate --backend torch.
//
//   nlohmann::json w = torch_workload_json(scenario);
#pragma once

#include <nlohmann/json.hpp>

#include "model/scenario/scenario.hpp"

namespace ddpsim::model {

/// Throws UnsupportedError for model forms the torch runner cannot build (presets, "layers").
nlohmann::json torch_workload_json(const Scenario& s);

}  // namespace ddpsim::model
