#include "model/process_env.hpp"

#include <cstdlib>
#include <system_error>

#include "model/error.hpp"

#ifndef DDPSIM_TORCH_PYTHON_EXECUTABLE
#define DDPSIM_TORCH_PYTHON_EXECUTABLE ""
#endif
#ifndef DDPSIM_SOURCE_PYTHONPATH
#define DDPSIM_SOURCE_PYTHONPATH ""
#endif

namespace ddpsim::model {

namespace fs = std::filesystem;

namespace {

// Whether some folder of the PYTHONPATH-style `list` holds the calibrate.torch package.
bool holds_package(const std::string& list) {
  std::error_code ec;
  for (std::size_t at = 0; at <= list.size();) {
    std::size_t end = list.find(':', at);
    if (end == std::string::npos) end = list.size();
    const fs::path dir = list.substr(at, end - at);
    if (!dir.empty() && fs::exists(dir / "calibrate" / "torch" / "__init__.py", ec)) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

std::string self_exe(const std::string& fallback) {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fallback : p.string();
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::string torch_python() {
  const std::string found = DDPSIM_TORCH_PYTHON_EXECUTABLE;
  return env_or("DDPSIM_TORCH_PYTHON", found.empty() ? "python3" : found);
}

std::vector<std::string> python_path_candidates(const fs::path& exe) {
  std::vector<std::string> out;
  if (!exe.parent_path().empty()) {
    out.push_back((exe.parent_path().parent_path() / "share" / "ddpsim" / "python")
                      .lexically_normal()
                      .string());
  }
  out.emplace_back(DDPSIM_SOURCE_PYTHONPATH);
  return out;
}

std::string python_path() {
  if (const std::string env = env_or("DDPSIM_PYTHONPATH", ""); !env.empty()) {
    if (!holds_package(env)) {
      throw Error("DDPSIM_PYTHONPATH=" + env +
                  " holds no calibrate/torch package (set it to ROOT:ROOT/python of a ddpsim "
                  "checkout or to the share/ddpsim/python folder of an installed one)");
    }
    return env;
  }
  std::string tried;
  for (const std::string& c : python_path_candidates(self_exe())) {
    if (holds_package(c)) return c;
    tried += (tried.empty() ? "" : ", ") + c;
  }
  throw Error("cannot find ddpsim's Python package calibrate.torch (looked in " + tried +
              "); set DDPSIM_PYTHONPATH to ROOT:ROOT/python of a ddpsim checkout");
}

std::vector<std::string> torch_python_command(const std::string& module) {
  static const std::string inherited = env_or("PYTHONPATH", "");
  const std::string path = python_path();
  ::setenv("PYTHONPATH", (inherited.empty() ? path : path + ":" + inherited).c_str(), 1);
  return {torch_python(), "-m", module};
}

}  // namespace ddpsim::model
