// import_verb.hpp: `ddpsim import`, what other tools wrote turned into scenario keys:
//
//   ddpsim import deepspeed DS_CONFIG.json [--scenario BASE.json] [--gpus N] [--out OUT.json]
//   ddpsim import torch KNOBS.json [--scenario BASE.json] [--out OUT.json]
//   ddpsim import trace RANK0.pt.trace.json[.gz] [MORE...] [--scenario BASE.json] [--out OUT.json]
//
// With a base scenario the keys are applied to it and the result is validated as a scenario;
// a value the import wrote that makes it invalid is named as the imported file's. Warnings, and
// what a trace cannot tell (simulator/measured/trace_replay.hpp), go to stderr, one line each.
// Both return the exit code (0); bad input throws InputError.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ddpsim::cli {

/// `ddpsim import deepspeed|torch` (`kind`): the patch alone, or the base with it applied.
int run_import(const std::string& kind, const std::string& path, const std::string& base_path,
               std::optional<int> gpus, const std::string& out);

/// `ddpsim import trace`: a strict scenario drafted from profiler traces (onto the base, when
/// given), checked by the scenario reader before it is written.
int run_import_trace(const std::vector<std::string>& traces, const std::string& base_path,
                     const std::string& out);

}  // namespace ddpsim::cli
