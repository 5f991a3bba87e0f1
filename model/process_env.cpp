#include "model/process_env.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace ddpsim::model {

namespace fs = std::filesystem;

std::string self_exe(const std::string& fallback) {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fallback : p.string();
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

}  // namespace ddpsim::model
