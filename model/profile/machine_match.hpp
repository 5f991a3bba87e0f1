// machine_match.hpp: the rule that says whether a calibration profile describes the machine
// reading it (machine_fingerprint.hpp holds the fingerprints).
//
// Must match (a difference makes the profile another machine's):
//   cpu_model, usable_cores (affinity and cgroup quota), and the version number of each
//   measuring library both sides have (openblas, gloo, nccl, cuda).
// Only warn (the measurement may still hold, say so):
//   host, logical_cpus, memory_bytes (more than 1% apart), memory_limit_bytes, kernel,
//   compiler, a library the profile names and this build lacks, and a profile older than
//   kMaxProfileAgeDays. A library the profile does not name (its measurement did not use it)
//   is not compared.
// A profile without a "machine" section (written before fingerprints) is an unknown machine:
// one mismatch, field "machine".
// Its users: "preset": "this-machine" refuses a mismatch (hardware_io.cpp), an explicitly named
// profile is used with a warning, ddpsim validate recalibrates instead of using its default
// results/profile-<host>.json.
//
//   MachineMatch r = compare_machines(machine_from_json(p.document()), probe_machine());
//   if (!r.same_machine()) throw InputError(p.file(), "/machine/" + r.mismatches[0].field, ...);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/profile/machine_fingerprint.hpp"

namespace ddpsim::model {

/// A profile older than this (days, by the fingerprints' dates) gets a warning.
inline constexpr double kMaxProfileAgeDays = 30;

/// One field that differs, both values as text ("\"AMD EPYC\"", "2", "none").
struct MachineDifference {
  std::string field;    ///< key under /machine ("cpu_model", "libraries/openblas", "date")
  std::string profile;  ///< the profile's value
  std::string here;     ///< this machine's value
};

struct MachineMatch {
  std::vector<MachineDifference> mismatches;  ///< must-match fields that differ
  std::vector<MachineDifference> warnings;    ///< warn-only fields that differ
  bool same_machine() const { return mismatches.empty(); }
};

/// The rule above; `profile` is machine_from_json of the profile (nullopt: unknown machine).
MachineMatch compare_machines(const std::optional<MachineFingerprint>& profile,
                              const MachineFingerprint& here);

/// "cpu_model: profile \"AMD EPYC\", this machine \"Intel Xeon\"".
std::string describe(const MachineDifference& d);

}  // namespace ddpsim::model
