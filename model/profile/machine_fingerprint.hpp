// machine_fingerprint.hpp: which machine a calibration profile measured. `ddpsim calibrate`
// writes probe_machine() into every profile as its "machine" section; a profile is only used as
// "this machine's" when its fingerprint matches the machine reading it (machine_match.hpp).
//
// The fingerprint: host name and UTC date; CPU model (/proc/cpuinfo "model name"), logical CPUs
// (sysconf), the CPUs this process may run on (sched_getaffinity), the cgroup CPU quota as cores
// (v2 cpu.max "quota period", v1 cpu.cfs_quota_us / cpu.cfs_period_us; absent when unlimited) and
// usable_cores = min(affinity CPUs, quota); memory (MemTotal) and the cgroup memory limit (v2
// memory.max, v1 memory.limit_in_bytes; absent when unlimited); kernel (uname release); the
// versions of the libraries that set the measured numbers (openblas, gloo, nccl, cuda: those this
// build links, as their headers said at configure time; a calibration records what it ran) and
// the compiler.
//
//   MachineFingerprint here = probe_machine();
//   doc["machine"] = to_json(here);
//   std::optional<MachineFingerprint> m = machine_from_json(profile.document());
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ddpsim::model {

struct MachineFingerprint {
  std::string host;
  std::string date;  ///< UTC, ISO 8601 ("2026-12-04T09:41:07Z")
  std::string cpu_model;
  int logical_cpus = 0;
  int affinity_cpus = 0;                     ///< sched_getaffinity's CPU count (0: unknown)
  std::optional<double> cpu_quota_cores;     ///< cgroup quota / period; none: no quota
  std::string cpu_quota_source;              ///< which file gave it ("none" when no cgroup limit)
  double usable_cores = 0;                   ///< min(affinity_cpus, cpu_quota_cores)
  double memory_bytes = 0;                   ///< MemTotal
  std::optional<double> memory_limit_bytes;  ///< cgroup memory limit; none: unlimited
  std::string kernel;                        ///< uname -r
  std::map<std::string, std::string> libraries;  ///< openblas, gloo, nccl, cuda, compiler
};

/// Where probe_machine reads /proc and /sys (tests point it at a fake tree). sched_getaffinity,
/// sysconf and uname always describe the running process.
struct ProbeRoots {
  std::string proc = "/proc";
  std::string cgroup = "/sys/fs/cgroup";
};

/// This machine, now. Never throws: an unreadable field is "unknown" or 0.
MachineFingerprint probe_machine(const ProbeRoots& roots = {});

/// The versions of the measuring libraries this build links ({"openblas": "0.3.21", "gloo":
/// "0.5.0", ...}; only those built) and "compiler" ("gcc 12.2.0").
std::map<std::string, std::string> build_libraries();

/// The "machine" section of a profile (keys as profile_keys() lists them under /machine).
nlohmann::json to_json(const MachineFingerprint& m);
/// The "machine" section of a validated profile document; nullopt when it has none (a profile
/// written before fingerprints: an unknown machine).
std::optional<MachineFingerprint> machine_from_json(const nlohmann::json& profile_doc);

namespace detail {
/// Cores allowed by a cgroup v2 cpu.max line ("150000 100000" -> 1.5; "max 100000" -> none).
std::optional<double> parse_cpu_max(const std::string& text);
/// Cores allowed by cgroup v1 cfs quota and period (quota -1 or unreadable -> none).
std::optional<double> parse_cfs_quota(const std::string& quota, const std::string& period);
/// A memory limit in bytes ("max", empty or >= 2^60 (v1's "unlimited") -> none).
std::optional<double> parse_memory_limit(const std::string& text);
}  // namespace detail

}  // namespace ddpsim::model
