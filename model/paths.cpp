#include "model/paths.hpp"

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <system_error>
#include <vector>

#include "model/error.hpp"
#include "model/process_env.hpp"

namespace ddpsim::model {

namespace {
bool is_data_dir(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_directory(p / "models", ec) &&
         std::filesystem::is_directory(p / "hardware", ec);
}

std::mutex g_packaged_mutex;
std::filesystem::path g_packaged_dir;  // set_packaged_data_dir's folder (guarded by the mutex)
}  // namespace

void set_packaged_data_dir(const std::filesystem::path& dir) {
  const std::lock_guard<std::mutex> lock(g_packaged_mutex);
  g_packaged_dir = dir;
}

std::vector<std::filesystem::path> data_dir_candidates(const std::filesystem::path& exe) {
  std::vector<std::filesystem::path> out;
  const auto bin = exe.parent_path();
  if (!bin.empty()) out.push_back((bin.parent_path() / "share" / "ddpsim").lexically_normal());
  for (auto dir = bin; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    out.push_back(dir / "scenarios");
  }
  out.emplace_back(DDPSIM_INSTALL_DATA_DIR);
  out.emplace_back(DDPSIM_SOURCE_DATA_DIR);
  return out;
}

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("DDPSIM_DATA_DIR"); env != nullptr && *env != '\0') {
    if (!is_data_dir(env)) {
      throw Error(std::string("DDPSIM_DATA_DIR=") + env +
                  " does not hold models/ and hardware/ preset folders");
    }
    return env;
  }
  {
    const std::lock_guard<std::mutex> lock(g_packaged_mutex);
    if (!g_packaged_dir.empty() && is_data_dir(g_packaged_dir)) return g_packaged_dir;
  }
  // Without /proc, self_exe() is empty: only the configured folders.
  const auto candidates = data_dir_candidates(self_exe());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& dir = candidates[i];
    if (is_data_dir(dir)) return dir;
    // The installed layout's own folder (P/share/ddpsim beside P/bin) that exists but lost a
    // preset folder: an error, not a quiet fall-back to whatever checkout the library was built
    // from (its presets may differ from the installed ones, or be gone tomorrow).
    std::error_code ec;
    if (i == 0 && !self_exe().empty() && std::filesystem::is_directory(dir, ec)) {
      std::string missing;
      for (const char* sub : {"models", "hardware"}) {
        if (!std::filesystem::is_directory(dir / sub, ec)) {
          missing += std::string(missing.empty() ? "" : " and ") + sub + "/";
        }
      }
      throw Error(dir.string() + ": the installed ddpsim's preset folder has no " + missing +
                  " (reinstall it, or set DDPSIM_DATA_DIR to a folder holding models/ and "
                  "hardware/)");
    }
  }
  throw Error(
      "cannot find the ddpsim presets (scenarios/models, scenarios/hardware); set "
      "DDPSIM_DATA_DIR to the scenarios/ folder of a ddpsim checkout or to the share/ddpsim "
      "folder of an installed one");
}

std::filesystem::path resolve_relative(const std::filesystem::path& from_file,
                                       const std::string& ref) {
  std::filesystem::path p(ref);
  if (p.is_absolute()) return p;
  return from_file.parent_path() / p;
}

}  // namespace ddpsim::model
