// import_scenario.hpp: what other tools wrote turned into a scenario, as data: the computation of
// `ddpsim import deepspeed|torchtitan|torch|trace` (simulator/cli/import_verb.hpp prints it; the
// Python module returns it).
//
// With a base scenario the imported keys are applied to it and the result is validated as a
// scenario; a value the import wrote that makes it invalid is named as the imported file's.
// DeepSpeed's "auto" values are filled from the base as the Hugging Face Trainer fills them
// (model/imports/hf_auto.hpp). Bad input throws InputError.
//
//   json base = model::read_json_file("base.json");
//   ImportedScenario r = import_scenario(ImportKind::kDeepSpeed, "ds_config.json", &base,
//                                        "base.json", 64);
//   r.scenario;  // the base with the config applied; r.warnings: one line each
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "simulator/measured/trace_replay.hpp"

namespace ddpsim::sim {

enum class ImportKind {
  kDeepSpeed,   ///< a DeepSpeed config JSON (model/imports/deepspeed_import.hpp)
  kTorchtitan,  ///< a torchtitan job TOML (model/imports/torchtitan_import.hpp)
  kTorch,       ///< PyTorch DDP/FSDP knobs JSON (model/imports/torch_import.hpp)
};

struct ImportedScenario {
  /// The imported keys alone (no base), or the base with them applied and validated.
  nlohmann::json scenario;
  /// What the import could not carry over or had to assume, one line each.
  std::vector<std::string> warnings;
};

/// The file at `path` of `kind` as scenario keys. `base` (nullptr: none) is a scenario document
/// named `base_path` in errors, whose folder relative references resolve from. `gpus` is the
/// job's world size (also written as cluster.gpus); unset, the base's cluster.gpus.
ImportedScenario import_scenario(ImportKind kind, const std::string& path,
                                 const nlohmann::json* base, const std::string& base_path,
                                 std::optional<int> gpus);

/// A strict scenario drafted from a DDP job's PyTorch profiler traces (one per rank), onto the
/// base when given (only what the traces tell is applied to it), checked by the scenario reader.
/// Without a base the draft is checked as a scenario named `draft_name`.
DraftedScenario import_trace(const std::vector<std::string>& traces, const nlohmann::json* base,
                             const std::string& base_path,
                             const std::string& draft_name = "(drafted scenario)");

}  // namespace ddpsim::sim
