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
#include "model/run_context.hpp"

namespace ddpsim::calib {

namespace {

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

nlohmann::json context_json(const std::string& backend, const std::string& command) {
  nlohmann::json c = model::run_context_json("ddpsim-calibrate");
  c["command"] = command;
  c["backend"] = backend;
  const std::string model = proc_field("/proc/cpuinfo", "model name");
  c["cpu_model"] = model.empty() ? "unknown" : model;
  c["cpu_cores"] = std::thread::hardware_concurrency();
  // MemTotal is in kB (KiB) in /proc/meminfo.
  const std::string mem = proc_field("/proc/meminfo", "MemTotal");
  c["host_memory_bytes"] = mem.empty() ? 0.0 : std::stod(mem) * 1024.0;
  c["libraries"]["openblas"] = blas_config();
  // How loaded the machine was: /proc/loadavg's 1, 5 and 15 minute averages when the profile is
  // written (the 15-minute one spans most of a full calibration). On a shared 2-core VM another
  // job's load slows GEMMs and collectives several-fold (results/CALIBRATION.md).
  std::ifstream la("/proc/loadavg");
  std::string l1, l5, l15;
  if (la >> l1 >> l5 >> l15) c["load_average"] = l1 + " " + l5 + " " + l15;
  return c;
}

}  // namespace ddpsim::calib
