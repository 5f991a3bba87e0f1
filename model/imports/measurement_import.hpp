// measurement_import.hpp: measurements users already have, turned into profile sections:
// nccl-tests output here, PyTorch profiler (Kineto) traces in kineto_import.hpp, and
// imported_profile, which wraps either section in a whole profile document.
//
// nccl-tests (NVIDIA/nccl-tests, e.g. all_reduce_perf):
//   - the stdout log: "# nThread T nGpus G ... iters: I ..." header, "#  Rank R ... on HOST"
//     device lines (one per rank; their count is the rank count, distinct hosts the node count;
//     without them T*G ranks on one node), "# Collective test starting: all_reduce_perf" (the
//     op; older logs lack it: pass `op`), the column header naming size count type redop root
//     and two groups of time algbw busbw #wrong (out-of-place, then in-place; per-iteration
//     columns i_min/i_max become time_us_min/time_us_max), then one row per size;
//   - the `-J FILE` JSON (format version 2): "config" (nthreads, ngpus, iterations, devices),
//     "results" [{size, count, type, redop, root, out_of_place, in_place}], "args"[0] (the
//     program, hence the op), "nccl_version".
//   Both become a profile "collectives" section (model/profile/profile.hpp) with source "nccl-tests
//   log FILE"; sizes, times and bandwidths are copied as printed.
//
//   nlohmann::json c = import_nccl_tests_file("all_reduce.log");          // {"ops": {...}}
//   nlohmann::json profile = imported_profile(c, nullptr, "ddpsim-calibrate import nccl-tests
//   ...");
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ddpsim::model {

/// What a log may not state, from the command line (`import nccl-tests --ranks N --nodes M`):
/// a table cut out of a larger log has no rank lines. 0: from the log. Where the log states it
/// too (rank lines, their hosts; -J's devices), the two must agree.
struct NcclTestsLayout {
  int ranks = 0;
  int nodes = 0;
};

/// Parses nccl-tests stdout. `file` is named in errors (InputError with "line N" as the
/// pointer); `op` names the collective when the log does not ("all_reduce", ...; empty: from
/// the log). Throws InputError when there is no table, a row is malformed or the op is unknown.
nlohmann::json import_nccl_tests_log(const std::string& text, const std::string& file,
                                     const std::string& op = "",
                                     const NcclTestsLayout& layout = {});
/// Parses nccl-tests' -J output (already read as JSON). Errors name JSON pointers.
nlohmann::json import_nccl_tests_json(const nlohmann::json& doc, const std::string& file,
                                      const std::string& op = "",
                                      const NcclTestsLayout& layout = {});
/// Reads `path` and dispatches on its content (a JSON object: -J output; else a log).
nlohmann::json import_nccl_tests_file(const std::string& path, const std::string& op = "",
                                      const NcclTestsLayout& layout = {});

/// A whole profile document (format ddpsim-profile, backend "import") holding the given
/// sections; a null section is left out. It passes Profile::from_json.
nlohmann::json imported_profile(const nlohmann::json& collectives,
                                const nlohmann::json& layer_times, const std::string& command);

}  // namespace ddpsim::model
