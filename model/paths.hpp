// paths.hpp: where ddpsim finds its presets (scenarios/models, scenarios/hardware).
//
// Search order: $DDPSIM_DATA_DIR; a scenarios/ folder beside or above the running binary
// (an installed or copied tree); the source tree the binary was built from.
#pragma once

#include <filesystem>

namespace ddpsim::model {

/// The scenarios/ directory holding models/ and hardware/. Throws Error if none exists.
std::filesystem::path data_dir();

/// Resolves `ref` (as written in `from_file`) relative to the directory of `from_file`;
/// absolute paths are returned unchanged.
std::filesystem::path resolve_relative(const std::filesystem::path& from_file,
                                       const std::string& ref);

}  // namespace ddpsim::model
