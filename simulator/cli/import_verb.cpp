// `ddpsim import deepspeed|torch|trace` (import_verb.hpp): simulator/import_scenario.hpp's
// results printed.
#include "simulator/cli/import_verb.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/json_file.hpp"
#include "simulator/import_scenario.hpp"

namespace ddpsim::cli {

using nlohmann::json;

namespace {

// The scenario on stdout, or written atomically to `out`.
void write_scenario(const json& doc, const std::string& out) {
  if (!out.empty()) {
    model::write_file_atomic(out, doc.dump(2) + "\n");
    std::cout << "wrote " << one_line(out) << "\n";
  } else {
    std::cout << doc.dump(2) << "\n";
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
  const sim::ImportKind k = kind == "torchtitan"  ? sim::ImportKind::kTorchtitan
                            : kind == "deepspeed" ? sim::ImportKind::kDeepSpeed
                                                  : sim::ImportKind::kTorch;
  const sim::ImportedScenario r =
      sim::import_scenario(k, path, base ? &*base : nullptr, base_path, gpus);
  for (const auto& w : r.warnings) print_error("ddpsim", "warning: " + w);
  write_scenario(r.scenario, out);
  return 0;
}

// `ddpsim import trace`: a strict scenario drafted from profiler traces (what they cannot tell
// is named on stderr, one line each), checked by the scenario reader before it is written.
int run_import_trace(const std::vector<std::string>& traces, const std::string& base_path,
                     const std::string& out) {
  std::vector<std::string> inputs = traces;
  if (!base_path.empty()) inputs.push_back(base_path);
  model::check_output_path("--out", out, inputs);
  std::optional<json> base;
  if (!base_path.empty()) base = model::read_json_file(base_path);
  const sim::DraftedScenario d = sim::import_trace(traces, base ? &*base : nullptr, base_path,
                                                   out.empty() ? "(drafted scenario)" : out);
  for (const auto& u : d.unknown) print_error("ddpsim", "unknown: " + u);
  print_error("ddpsim", d.summary);
  write_scenario(d.scenario, out);
  return 0;
}

}  // namespace ddpsim::cli
