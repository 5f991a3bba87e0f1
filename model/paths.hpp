// paths.hpp: where ddpsim finds its presets (scenarios/models, scenarios/hardware).
//
// Search order (the first folder holding models/ and hardware/ wins):
//   1. $DDPSIM_DATA_DIR (an error if it is set and holds neither);
//   1b. the folder set_packaged_data_dir() named: the presets a program embedding the library
//      ships with itself (the Python package's ddpsim/data), whatever the running binary is;
//   2. <folder of the running binary>/../share/ddpsim: the installed layout (cmake --install puts
//      the programs in P/bin and scenarios/ in P/share/ddpsim), before anything in a checkout
//      that may lie above an install prefix; a P/share/ddpsim that exists without models/ or
//      hardware/ is an error naming what it lacks, not a reason to read another tree;
//   3. a scenarios/ folder beside the binary or in any folder above it (a checkout, a copied tree);
//   4. <install prefix>/share/ddpsim as configured when the library was built, for programs of
//      other projects that link the installed library from elsewhere;
//   5. the source tree the library was built from.
//
//   auto gpt2 = data_dir() / "models" / "gpt2-xl.json";
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ddpsim::model {

/// The scenarios/ directory holding models/ and hardware/. Throws Error if none exists.
std::filesystem::path data_dir();

/// Step 1b of the search order: `dir` (used when it holds models/ and hardware/; empty: none).
/// The Python package sets its own copy at import, since the running binary is the
/// interpreter. Thread-safe.
void set_packaged_data_dir(const std::filesystem::path& dir);

/// Steps 2 to 5 of the search order above for a program at `exe` (an absolute path), in order,
/// whether or not they exist. data_dir() takes the first that holds models/ and hardware/.
std::vector<std::filesystem::path> data_dir_candidates(const std::filesystem::path& exe);

/// Resolves `ref` (as written in `from_file`) relative to the directory of `from_file`;
/// absolute paths are returned unchanged.
std::filesystem::path resolve_relative(const std::filesystem::path& from_file,
                                       const std::string& ref);

}  // namespace ddpsim::model
