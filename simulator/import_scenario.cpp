// What other tools wrote turned into a scenario (import_scenario.hpp).
#include "simulator/import_scenario.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/error.hpp"
#include "model/imports/deepspeed_import.hpp"
#include "model/imports/hf_auto.hpp"
#include "model/imports/torch_import.hpp"
#include "model/imports/torchtitan_import.hpp"
#include "model/json_file.hpp"
#include "model/scenario/scenario.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "model/schema.hpp"

namespace ddpsim::sim {

using nlohmann::json;

namespace {

// Every value an import produced, checked against its scenario key (type and range) and, when
// wrong, named as the imported file's: the value came from it, not from a base scenario (a
// DeepSpeed micro-batch of 2e9 was reported at the base's /training/per_gpu_batch). An object
// is checked merged onto the base's object at that key, as it will be applied: a member the key
// requires may come from the base (ZeRO-Offload's parallelism.offload {param} takes
// host_adam_params_per_s from it). Keys this build's table does not know are the caller's
// warning.
void check_imported_values(const json& patch, const std::string& path, const json* base) {
  for (const auto& [section, keys] : patch.items()) {
    if (!keys.is_object()) continue;
    for (const auto& [key, value] : keys.items()) {
      const std::string pointer = "/" + section + "/" + key;
      const model::KeySpec* spec = model::scenario_keys().find(pointer);
      if (spec == nullptr) continue;
      json checked = value;
      if (value.is_object() && base != nullptr && base->is_object()) {
        const json::json_pointer at(pointer);
        if (base->contains(at) && base->at(at).is_object()) {
          checked = model::apply_import_patch(base->at(at), value);
        }
      }
      try {
        model::validate_value(checked, *spec, model::scenario_keys(), path, pointer);
      } catch (const InputError& e) {
        throw InputError(path, "",
                         "values that make a valid scenario; its scenario key " + section + "." +
                             key + " would be " + e.expected(),
                         e.got());
      }
    }
  }
}

// Parses `merged` (a base scenario with `patch` applied) as the base's; an error at a key the
// patch wrote is the imported file's, named with the base: "IMPORTED: /: expected <what>BASE:
// /pointer would be ...". Other errors stay the base's.
void parse_merged(const json& merged, const std::string& base_path, const json& patch,
                  const std::string& imported_file, const std::string& what) {
  try {
    model::parse_scenario(merged, base_path);
  } catch (const InputError& e) {
    if (e.file() == base_path && !e.pointer().empty() &&
        patch.contains(json::json_pointer(e.pointer()))) {
      throw InputError(imported_file, "",
                       what + base_path + ": " + e.pointer() + " would be " + e.expected(),
                       e.got());
    }
    throw;
  }
}

}  // namespace

ImportedScenario import_scenario(ImportKind kind, const std::string& path, const json* base_doc,
                                 const std::string& base_path, std::optional<int> gpus) {
  std::optional<json> base;
  if (base_doc != nullptr) base = *base_doc;
  model::ImportResult r;
  // The job's world size: gpus, else the base scenario's cluster.gpus.
  std::optional<std::int64_t> world;
  bool world_from_base = false;
  if (gpus) {
    world = *gpus;
  } else if (base && base->is_object() && base->contains("cluster") &&
             base->at("cluster").is_object() && base->at("cluster").contains("gpus") &&
             base->at("cluster").at("gpus").is_number_integer()) {
    world = base->at("cluster").at("gpus").get<std::int64_t>();
    world_from_base = true;
  }
  switch (kind) {
    case ImportKind::kTorchtitan:
      // data_parallel_shard_degree -1 takes every rank of the world.
      r = model::import_torchtitan_file(path, world);
      break;
    case ImportKind::kDeepSpeed: {
      if (world_from_base) {
        if (base->contains("sweep") && base->at("sweep").is_object() &&
            base->at("sweep").contains("cluster.gpus")) {
          r.warnings.push_back(base_path +
                               ": /sweep/cluster.gpus: the DeepSpeed batch rule used "
                               "cluster.gpus = " +
                               std::to_string(*world) +
                               "; other sweep points keep per_gpu_batch and grad_accumulation, "
                               "so their global batch differs from train_batch_size");
        }
      }
      // The Hugging Face Trainer's "auto" values, filled from the base as the Trainer would.
      std::vector<std::string> notes;
      const json config = model::fill_hf_auto(model::read_json_file(path), path,
                                              base ? &*base : nullptr, base_path, world, &notes);
      model::ImportResult d = model::import_deepspeed_config(config, path, world);
      r.warnings.insert(r.warnings.end(), notes.begin(), notes.end());
      d.warnings.insert(d.warnings.begin(), r.warnings.begin(), r.warnings.end());
      r = std::move(d);
      break;
    }
    case ImportKind::kTorch:
      r = model::import_torch_knobs_file(path);
      break;
  }
  if (gpus) r.patch["cluster"]["gpus"] = *gpus;
  // A torchtitan job names its model: the base's own model section gives way to the preset.
  if (kind == ImportKind::kTorchtitan && base && base->is_object() && base->contains("model")) {
    (*base)["model"] = json::object();
  }
  json imported = r.patch;
  if (gpus) imported["cluster"].erase("gpus");  // the world size is checked by its caller
  check_imported_values(imported, path, base ? &*base : nullptr);

  ImportedScenario out;
  out.scenario = base ? model::apply_import_patch(*base, r.patch) : r.patch;
  if (base) {
    // Validate what is returned. A patch key the scenario table of this build does not know
    // (keys added alongside the importers, e.g. the DeepSpeed bucket sizes) is kept in the
    // output but left out of the check, with a warning, rather than failing the whole import.
    json check = out.scenario;
    for (const auto& [section, keys] : r.patch.items()) {
      if (!keys.is_object()) continue;
      for (const auto& [key, value] : keys.items()) {
        const std::string pointer = "/" + section + "/" + key;
        if (model::scenario_keys().find(pointer) == nullptr) {
          check[section].erase(key);
          r.warnings.push_back(section + "." + key +
                               " is not a scenario key in this build: written, but not "
                               "validated and ignored by predict");
        }
      }
    }
    // A rule across keys (a bucket cap below one byte) broken by a value the import wrote.
    parse_merged(check, base_path, imported, path, "values that make a valid scenario with ");
  }
  out.warnings = std::move(r.warnings);
  return out;
}

DraftedScenario import_trace(const std::vector<std::string>& traces, const json* base_doc,
                             const std::string& base_path, const std::string& draft_name) {
  if (traces.empty()) {
    throw InputError("(traces)", "", "at least one profiler trace", "none");
  }
  DraftedScenario d;
  if (base_doc == nullptr) {
    d = draft_scenario(load_traced_job(traces));
    model::parse_scenario(d.scenario, draft_name);
  } else {
    const model::Scenario base = model::parse_scenario(*base_doc, base_path);
    d = draft_onto(load_traced_job(traces), *base_doc, base);
    // A rule of the merged scenario broken by what the trace set (its world size against the
    // base's gpus_per_node): the trace's, named with the base it does not fit.
    parse_merged(d.scenario, base_path, d.patch, traces.front(),
                 "a traced job that fits the base scenario ");
  }
  return d;
}

}  // namespace ddpsim::sim
