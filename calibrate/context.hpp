// context.hpp: the "context" block of a profile: where, when and with what it was measured.
//
//   nlohmann::json c = context_json("cpu", "ddpsim-calibrate --quick ...");
//   c["libraries"]["gloo"] = comm->version();
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ddpsim::calib {

/// model::run_context_json("ddpsim-calibrate") (tool, version, git_revision, host, date,
/// libraries) plus command, backend, cpu_model (from /proc/cpuinfo), cpu_cores,
/// host_memory_bytes (/proc/meminfo), libraries.openblas (its build configuration) and
/// load_average (/proc/loadavg's 1/5/15-minute averages at writing).
nlohmann::json context_json(const std::string& backend, const std::string& command);

}  // namespace ddpsim::calib
