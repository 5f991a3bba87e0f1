// `ddpsim import deepspeed|torch|trace` (import_verb.hpp).
#include "simulator/cli/import_verb.hpp"

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/imports/deepspeed_import.hpp"
#include "model/imports/hf_auto.hpp"
#include "model/imports/torch_import.hpp"
#include "model/imports/torchtitan_import.hpp"
#include "model/scenario/scenario.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "model/schema.hpp"
#include "simulator/measured/trace_replay.hpp"

namespace ddpsim::cli {

using nlohmann::json;

namespace {

// Every value an import produced, checked against its scenario key (type and range) and, when
// wrong, named as the imported file's: the value came from it, not from a base scenario (a
// DeepSpeed micro-batch of 2e9 was reported at the base's /training/per_gpu_batch). Keys this
// build's table does not know are the caller's warning.
void check_imported_values(const json& patch, const std::string& path) {
  for (const auto& [section, keys] : patch.items()) {
    if (!keys.is_object()) continue;
    for (const auto& [key, value] : keys.items()) {
      const std::string pointer = "/" + section + "/" + key;
      const model::KeySpec* spec = model::scenario_keys().find(pointer);
      if (spec == nullptr) continue;
      try {
        model::validate_value(value, *spec, model::scenario_keys(), path, pointer);
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

// `ddpsim import deepspeed|torch|torchtitan`: the patch alone, or BASE.json with the patch applied
// and the result validated as a scenario. Warnings go to stderr, one line each.
int run_import(const std::string& kind, const std::string& path, const std::string& base_path,
               std::optional<int> gpus, const std::string& out) {
  model::check_output_path("--out", out, {path, base_path});
  std::optional<json> base;
  if (!base_path.empty()) base = model::read_json_file(base_path);
  model::ImportResult r;
  // The job's world size: --gpus, else the base scenario's cluster.gpus.
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
  if (kind == "torchtitan") {
    // data_parallel_shard_degree -1 takes every rank of the world.
    r = model::import_torchtitan_file(path, world);
  } else if (kind == "deepspeed") {
    if (world_from_base) {
      if (base->contains("sweep") && base->at("sweep").is_object() &&
          base->at("sweep").contains("cluster.gpus")) {
        r.warnings.push_back(base_path +
                             ": /sweep/cluster.gpus: the DeepSpeed batch rule used cluster.gpus "
                             "= " +
                             std::to_string(*world) +
                             "; other sweep points keep per_gpu_batch and grad_accumulation, so "
                             "their global batch differs from train_batch_size");
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
  } else {
    r = model::import_torch_knobs_file(path);
  }
  if (gpus) r.patch["cluster"]["gpus"] = *gpus;
  // A torchtitan job names its model: the base's own model section gives way to the preset.
  if (kind == "torchtitan" && base && base->is_object() && base->contains("model")) {
    (*base)["model"] = json::object();
  }
  json imported = r.patch;
  if (gpus) imported["cluster"].erase("gpus");  // --gpus is checked by its option
  check_imported_values(imported, path);

  json doc = base ? model::apply_import_patch(*base, r.patch) : r.patch;
  if (base) {
    // Validate what we print. A patch key the scenario table of this build does not know (keys
    // added alongside the importers, e.g. the DeepSpeed bucket sizes) is kept in the output but
    // left out of the check, with a warning, rather than failing the whole import.
    json check = doc;
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
  for (const auto& w : r.warnings) std::fprintf(stderr, "ddpsim: warning: %s\n", w.c_str());
  if (!out.empty()) {
    model::write_file_atomic(out, doc.dump(2) + "\n");
    std::cout << "wrote " << out << "\n";
  } else {
    std::cout << doc.dump(2) << "\n";
  }
  return 0;
}

// `ddpsim import trace`: a strict scenario drafted from profiler traces (what they cannot tell
// is named on stderr, one line each), checked by the scenario reader before it is written.
int run_import_trace(const std::vector<std::string>& traces, const std::string& base_path,
                     const std::string& out) {
  std::vector<std::string> inputs = traces;
  if (!base_path.empty()) inputs.push_back(base_path);
  model::check_output_path("--out", out, inputs);
  sim::DraftedScenario d;
  if (base_path.empty()) {
    d = sim::draft_scenario(sim::load_traced_job(traces));
    model::parse_scenario(d.scenario, out.empty() ? "(drafted scenario)" : out);
  } else {
    const json base_doc = model::read_json_file(base_path);
    const model::Scenario base = model::parse_scenario(base_doc, base_path);
    d = sim::draft_onto(sim::load_traced_job(traces), base_doc, base);
    // A rule of the merged scenario broken by what the trace set (its world size against the
    // base's gpus_per_node): the trace's, named with the base it does not fit.
    parse_merged(d.scenario, base_path, d.patch, traces.front(),
                 "a traced job that fits the base scenario ");
  }
  for (const auto& u : d.unknown) std::fprintf(stderr, "ddpsim: unknown: %s\n", u.c_str());
  std::fprintf(stderr, "ddpsim: %s\n", d.summary.c_str());
  if (!out.empty()) {
    model::write_file_atomic(out, d.scenario.dump(2) + "\n");
    std::cout << "wrote " << out << "\n";
  } else {
    std::cout << d.scenario.dump(2) << "\n";
  }
  return 0;
}

}  // namespace ddpsim::cli
