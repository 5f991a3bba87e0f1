// context.hpp: the "context" block of a profile: where, when and with what it was measured.
//
//   nlohmann::json c = context_json("cpu", "ddpsim-calibrate --quick ...");
//   c["libraries"]["gloo"] = comm->version();
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ddpsim::calib {

/// tool, version, git_revision, host, date (UTC, ISO 8601), command, backend, cpu_model (from
/// /proc/cpuinfo), cpu_cores, host_memory_bytes (/proc/meminfo), libraries {openblas (its
/// build configuration), nlohmann_json}.
nlohmann::json context_json(const std::string& backend, const std::string& command);

/// The host name (gethostname), "unknown" when it cannot be read.
std::string host_name();

/// Writes `content` to `path` through a temporary file in the same folder and rename(2), so a
/// reader never sees half a profile; creates parent folders. Throws ddpsim::Error naming the path.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace ddpsim::calib
