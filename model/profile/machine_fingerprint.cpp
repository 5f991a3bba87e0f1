#include "model/profile/machine_fingerprint.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "model/run_context.hpp"

// Set by model/CMakeLists.txt from the headers of the libraries this build links (configure
// time); absent for a library that is not built.
#ifndef DDPSIM_OPENBLAS_VERSION
#define DDPSIM_OPENBLAS_VERSION ""
#endif
#ifndef DDPSIM_GLOO_VERSION
#define DDPSIM_GLOO_VERSION ""
#endif
#ifndef DDPSIM_NCCL_VERSION
#define DDPSIM_NCCL_VERSION ""
#endif
#ifndef DDPSIM_CUDA_VERSION
#define DDPSIM_CUDA_VERSION ""
#endif

namespace ddpsim::model {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t\r\n"));
  s.erase(s.find_last_not_of(" \t\r\n") + 1);
  return s;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return trim(ss.str());
}

// The value after "key<spaces>:" on the first line of a /proc file that starts with `key`.
std::string proc_field(const fs::path& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return trim(line.substr(colon + 1));
  }
  return "";
}

// The folders of this process's cgroup under one hierarchy mounted at `base`, innermost first
// and up to `base` (a limit set on an ancestor applies too). A container often mounts its own
// cgroup as the hierarchy's root, so a path that does not exist under `base` means `base` alone.
std::vector<fs::path> cgroup_dirs(const fs::path& base, const std::string& path) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::path p = base / fs::path(path).relative_path();
  if (path.empty() || path == "/" || !fs::is_directory(p, ec)) return {base};
  while (true) {
    out.push_back(p);
    if (p == base || !p.has_parent_path() || p.parent_path() == p) break;
    p = p.parent_path();
  }
  return out;
}

struct CgroupPaths {
  std::string v2;                             // the "0::" line's path, empty if none
  std::map<std::string, std::string> v1;      // controller -> path
  std::map<std::string, std::string> mounts;  // controller -> hierarchy folder name ("cpu,cpuacct")
};

CgroupPaths self_cgroups(const fs::path& proc) {
  CgroupPaths c;
  std::ifstream in(proc / "self" / "cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':');
    const auto b = line.find(':', a == std::string::npos ? 0 : a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (line.substr(0, a) == "0" && controllers.empty()) {
      c.v2 = path;
      continue;
    }
    std::stringstream ss(controllers);
    std::string one;
    while (std::getline(ss, one, ',')) {
      c.v1[one] = path;
      c.mounts[one] = controllers;
    }
  }
  return c;
}

// The smallest limit over this process's cgroup folders of one kind: `parse` reads a folder
// (nullopt: no limit there).
template <typename Parse>
std::optional<double> smallest(const std::vector<fs::path>& dirs, Parse parse) {
  std::optional<double> best;
  for (const fs::path& d : dirs) {
    const std::optional<double> v = parse(d);
    if (v && (!best || *v < *best)) best = v;
  }
  return best;
}

// v1 hierarchy folder of `controller`: named after its controllers ("cpu,cpuacct") or after the
// controller alone (a symlink Debian and systemd add).
fs::path v1_base(const fs::path& root, const CgroupPaths& c, const std::string& controller) {
  std::error_code ec;
  auto it = c.mounts.find(controller);
  if (it != c.mounts.end() && fs::is_directory(root / it->second, ec)) return root / it->second;
  return root / controller;
}

// "gcc 12.2.0": the compiler of this build.
std::string compiler_name() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

template <typename T>
T get(const json& o, const char* k, T def) {
  auto it = o.find(k);
  return it == o.end() ? def : it->template get<T>();
}

}  // namespace

namespace detail {

std::optional<double> parse_cpu_max(const std::string& text) {
  std::istringstream in(text);
  std::string quota;
  double period = 100000;
  if (!(in >> quota) || quota == "max") return std::nullopt;
  in >> period;
  try {
    const double q = std::stod(quota);
    if (q <= 0 || period <= 0) return std::nullopt;
    return q / period;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<double> parse_cfs_quota(const std::string& quota, const std::string& period) {
  try {
    const double q = std::stod(quota);
    const double p = std::stod(period);
    if (q <= 0 || p <= 0) return std::nullopt;  // -1: no quota
    return q / p;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<double> parse_memory_limit(const std::string& text) {
  const std::string t = trim(text);
  if (t.empty() || t == "max") return std::nullopt;
  try {
    const double v = std::stod(t);
    // cgroup v1 writes "unlimited" as the largest page-aligned signed 64-bit value.
    if (v <= 0 || v >= std::ldexp(1.0, 60)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace detail

std::map<std::string, std::string> build_libraries() {
  std::map<std::string, std::string> l;
  const std::pair<const char*, const char*> built[] = {{"openblas", DDPSIM_OPENBLAS_VERSION},
                                                       {"gloo", DDPSIM_GLOO_VERSION},
                                                       {"nccl", DDPSIM_NCCL_VERSION},
                                                       {"cuda", DDPSIM_CUDA_VERSION}};
  for (const auto& [name, version] : built) {
    if (version[0] != 0) l[name] = version;
  }
  l["compiler"] = compiler_name();
  return l;
}

MachineFingerprint probe_machine(const ProbeRoots& roots) {
  MachineFingerprint m;
  m.host = host_name();
  m.date = utc_now();
  const fs::path proc(roots.proc), cg(roots.cgroup);
  m.cpu_model = proc_field(proc / "cpuinfo", "model name");
  if (m.cpu_model.empty()) m.cpu_model = "unknown";
  m.logical_cpus = static_cast<int>(std::max(0L, sysconf(_SC_NPROCESSORS_ONLN)));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) m.affinity_cpus = CPU_COUNT(&set);

  const CgroupPaths self = self_cgroups(proc);
  std::error_code ec;
  const bool unified = fs::exists(cg / "cgroup.controllers", ec);
  if (unified) {
    m.cpu_quota_cores = smallest(cgroup_dirs(cg, self.v2), [](const fs::path& d) {
      return detail::parse_cpu_max(read_text(d / "cpu.max"));
    });
    m.memory_limit_bytes = smallest(cgroup_dirs(cg, self.v2), [](const fs::path& d) {
      return detail::parse_memory_limit(read_text(d / "memory.max"));
    });
    m.cpu_quota_source = m.cpu_quota_cores ? "cgroup v2 cpu.max" : "none";
  } else {
    const fs::path cpu = v1_base(cg, self, "cpu");
    m.cpu_quota_cores = smallest(
        cgroup_dirs(cpu, self.v1.count("cpu") ? self.v1.at("cpu") : ""), [](const fs::path& d) {
          return detail::parse_cfs_quota(read_text(d / "cpu.cfs_quota_us"),
                                         read_text(d / "cpu.cfs_period_us"));
        });
    const fs::path mem = v1_base(cg, self, "memory");
    m.memory_limit_bytes =
        smallest(cgroup_dirs(mem, self.v1.count("memory") ? self.v1.at("memory") : ""),
                 [](const fs::path& d) {
                   return detail::parse_memory_limit(read_text(d / "memory.limit_in_bytes"));
                 });
    m.cpu_quota_source = m.cpu_quota_cores ? "cgroup v1 cpu.cfs_quota_us" : "none";
  }
  const double cpus = m.affinity_cpus > 0 ? m.affinity_cpus : m.logical_cpus;
  m.usable_cores = m.cpu_quota_cores ? std::min(cpus, *m.cpu_quota_cores) : cpus;

  const std::string mem = proc_field(proc / "meminfo", "MemTotal");  // kB (KiB)
  try {
    m.memory_bytes = mem.empty() ? 0.0 : std::stod(mem) * 1024.0;
  } catch (const std::exception&) {
    m.memory_bytes = 0;
  }
  utsname u{};
  m.kernel = uname(&u) == 0 ? u.release : "unknown";
  m.libraries = build_libraries();
  return m;
}

json to_json(const MachineFingerprint& m) {
  json j;
  j["host"] = m.host;
  j["date"] = m.date;
  j["cpu_model"] = m.cpu_model;
  j["logical_cpus"] = m.logical_cpus;
  if (m.affinity_cpus > 0) j["affinity_cpus"] = m.affinity_cpus;
  if (m.cpu_quota_cores) j["cpu_quota_cores"] = *m.cpu_quota_cores;
  j["cpu_quota_source"] = m.cpu_quota_source;
  j["usable_cores"] = m.usable_cores;
  j["memory_bytes"] = m.memory_bytes;
  if (m.memory_limit_bytes) j["memory_limit_bytes"] = *m.memory_limit_bytes;
  j["kernel"] = m.kernel;
  j["libraries"] = m.libraries;
  return j;
}

std::optional<MachineFingerprint> machine_from_json(const json& profile_doc) {
  if (!profile_doc.contains("machine")) return std::nullopt;
  const json& j = profile_doc.at("machine");
  MachineFingerprint m;
  m.host = get<std::string>(j, "host", "");
  m.date = get<std::string>(j, "date", "");
  m.cpu_model = j.at("cpu_model").get<std::string>();
  m.logical_cpus = j.at("logical_cpus").get<int>();
  m.affinity_cpus = get<int>(j, "affinity_cpus", 0);
  if (j.contains("cpu_quota_cores")) m.cpu_quota_cores = j.at("cpu_quota_cores").get<double>();
  m.cpu_quota_source = get<std::string>(j, "cpu_quota_source", "none");
  m.usable_cores = j.at("usable_cores").get<double>();
  m.memory_bytes = get<double>(j, "memory_bytes", 0.0);
  if (j.contains("memory_limit_bytes")) {
    m.memory_limit_bytes = j.at("memory_limit_bytes").get<double>();
  }
  m.kernel = get<std::string>(j, "kernel", "");
  m.libraries = j.value("libraries", std::map<std::string, std::string>{});
  return m;
}

}  // namespace ddpsim::model
