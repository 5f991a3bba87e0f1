// zoo.hpp: the model zoo (scenarios/models/<name>.json) and model files.
//
// A model file names a builder and its configuration:
//   {"name": "gpt2-xl", "description": "...", "source": "...", "builder": "hf_transformer",
//    "config": {<Hugging Face config.json>}, "seq_len": 1024, "expected_params": 1557611200}
//   {"name": "resnet50", ..., "builder": "cnn", "config": {"architecture": "resnet", "depth": 50}}
// expected_params is checked on every load, so a zoo file cannot drift from its source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/workload/workload.hpp"

namespace ddpsim::model {

/// The preset names that are part of the contract (scripts outside the project use them).
const std::vector<std::string>& model_preset_names();

/// Loads scenarios/models/<name>.json; unknown names throw InputError at `pointer` of `file`.
/// `attention` applies to transformers (model.attention); other builders ignore it.
Workload load_model_preset(const std::string& name, const std::string& file,
                           const std::string& pointer, std::optional<std::int64_t> seq_len,
                           AttentionImpl attention = AttentionImpl::kSdpa);

/// Loads a model file (the zoo format) from a path.
Workload load_model_file(const std::string& path, std::optional<std::int64_t> seq_len,
                         AttentionImpl attention = AttentionImpl::kSdpa);

}  // namespace ddpsim::model
