#include "model/paths.hpp"

#include <cstdlib>
#include <fstream>
#include <system_error>

#include "model/error.hpp"

namespace ddpsim::model {

namespace {
bool is_data_dir(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_directory(p / "models", ec) &&
         std::filesystem::is_directory(p / "hardware", ec);
}
}  // namespace

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("DDPSIM_DATA_DIR"); env != nullptr && *env != '\0') {
    if (!is_data_dir(env)) {
      throw Error(std::string("DDPSIM_DATA_DIR=") + env +
                  " does not hold models/ and hardware/ preset folders");
    }
    return env;
  }
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (auto dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
         dir = dir.parent_path()) {
      if (is_data_dir(dir / "scenarios")) return dir / "scenarios";
    }
  }
  if (is_data_dir(DDPSIM_SOURCE_DATA_DIR)) return DDPSIM_SOURCE_DATA_DIR;
  throw Error(
      "cannot find the ddpsim presets (scenarios/models, scenarios/hardware); set "
      "DDPSIM_DATA_DIR to the scenarios/ folder of a ddpsim checkout");
}

std::filesystem::path resolve_relative(const std::filesystem::path& from_file,
                                       const std::string& ref) {
  std::filesystem::path p(ref);
  if (p.is_absolute()) return p;
  return from_file.parent_path() / p;
}

}  // namespace ddpsim::model
