// scenario_input.hpp: the scenario a command reads, as the command line names it:
//
//   ddpsim predict SCENARIO.json --set training.per_gpu_batch=8 --set /cluster/gpus=64
//   cat scenario.json | ddpsim plan - --set plan.max_gpus=128
//
// "-" reads standard input (errors name "<stdin>"; relative paths in it are relative to the
// current folder). Each --set KEY=VALUE, in order, sets one key of the document before it is
// validated: KEY is a JSON pointer ("/training/per_gpu_batch") or the dotted path a sweep uses
// ("training.per_gpu_batch"); VALUE is JSON (8, true, "fsdp2", [8, 16], {"preset": "dgx-h100"})
// or else taken as a string (fsdp2). A --set that is not KEY=VALUE is one error line (exit 2).
#pragma once

#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"

namespace ddpsim::cli {

/// The scenario document at `path` ("-": standard input) with `sets` applied; `label` receives
/// the name errors use.
nlohmann::json read_scenario_document(const std::string& path, const std::vector<std::string>& sets,
                                      std::string& label);

/// read_scenario_document, then the profile as the hardware (when given), parsed.
model::Scenario load_cli_scenario(const std::string& path, const std::vector<std::string>& sets,
                                  const std::string& profile = "");

}  // namespace ddpsim::cli
