#include "calibrate/context.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "calibrate/cpu_kernels.hpp"
#include "model/error.hpp"

#ifndef DDPSIM_GIT_REVISION
#define DDPSIM_GIT_REVISION "unknown"
#endif

namespace ddpsim::calib {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == 0) return "unknown";
  return buf;
}

namespace {

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The value after "key<spaces>:" on the first matching line of a /proc file.
std::string proc_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return "";
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp);
    out << content;
    out.flush();
    if (!out) throw Error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error("cannot rename " + tmp + " to " + path);
  }
}

nlohmann::json context_json(const std::string& backend, const std::string& command) {
  nlohmann::json c;
  c["tool"] = "ddpsim-calibrate";
  c["version"] = DDPSIM_VERSION;
  c["git_revision"] = DDPSIM_GIT_REVISION;
  c["host"] = host_name();
  c["date"] = utc_now();
  c["command"] = command;
  c["backend"] = backend;
  const std::string model = proc_field("/proc/cpuinfo", "model name");
  c["cpu_model"] = model.empty() ? "unknown" : model;
  c["cpu_cores"] = std::thread::hardware_concurrency();
  // MemTotal is in kB (KiB) in /proc/meminfo.
  const std::string mem = proc_field("/proc/meminfo", "MemTotal");
  c["host_memory_bytes"] = mem.empty() ? 0.0 : std::stod(mem) * 1024.0;
  c["libraries"] = {{"openblas", blas_config()},
                    {"nlohmann_json", std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                                          std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                                          std::to_string(NLOHMANN_JSON_VERSION_PATCH)}};
  return c;
}

}  // namespace ddpsim::calib
