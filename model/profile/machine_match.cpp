#include "model/profile/machine_match.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <iomanip>
#include <regex>
#include <sstream>

namespace ddpsim::model {

namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string cores(double c) { return fmt::format("{:g}", c); }

std::string optional_bytes(const std::optional<double>& b) {
  return b ? fmt::format("{:.0f}", *b) : std::string("none");
}

// The version number inside a library string: "0.3.21" of "OpenBLAS 0.3.21 DYNAMIC_ARCH Zen".
std::string version_number(const std::string& s) {
  static const std::regex v(R"((\d+\.\d+(\.\d+)*))");
  std::smatch m;
  return std::regex_search(s, m, v) ? m.str(1) : s;
}

// Seconds since the epoch of an ISO 8601 UTC date ("2026-12-04T09:41:07Z"); nullopt if not one.
std::optional<double> epoch_s(const std::string& date) {
  std::tm tm{};
  std::istringstream in(date);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  return static_cast<double>(timegm(&tm));
}

// The libraries whose version sets the measured numbers (a different compiler changes only
// ddpsim-exec's own loops: a warning).
bool measuring_library(const std::string& name) {
  return name == "openblas" || name == "gloo" || name == "nccl" || name == "cuda";
}

}  // namespace

MachineMatch compare_machines(const std::optional<MachineFingerprint>& profile,
                              const MachineFingerprint& here) {
  MachineMatch r;
  if (!profile) {
    r.mismatches.push_back(
        {"machine", "none (written before profiles had a fingerprint: an unknown machine)",
         quoted(here.cpu_model) + ", " + cores(here.usable_cores) + " usable cores"});
    return r;
  }
  const MachineFingerprint& p = *profile;
  auto must = [&](const char* f, std::string a, std::string b) {
    if (a != b) r.mismatches.push_back({f, std::move(a), std::move(b)});
  };
  auto warn = [&](std::string f, std::string a, std::string b) {
    if (a != b) r.warnings.push_back({std::move(f), std::move(a), std::move(b)});
  };
  must("cpu_model", quoted(p.cpu_model), quoted(here.cpu_model));
  if (std::abs(p.usable_cores - here.usable_cores) > 1e-6) {
    r.mismatches.push_back({"usable_cores", cores(p.usable_cores), cores(here.usable_cores)});
  }
  std::map<std::string, std::pair<std::string, std::string>> libs;
  for (const auto& [k, v] : p.libraries) libs[k].first = v;
  for (const auto& [k, v] : here.libraries) libs[k].second = v;
  for (const auto& [k, v] : libs) {
    const std::string field = "libraries/" + k;
    const auto& [a, b] = v;
    if (a.empty()) {
      continue;  // the measurement did not use it (a CPU calibration of a CUDA build: no nccl)
    } else if (b.empty()) {
      warn(field, quoted(a), "none (not built)");
    } else if (measuring_library(k) && version_number(a) != version_number(b)) {
      r.mismatches.push_back({field, quoted(a), quoted(b)});
    } else if (!measuring_library(k)) {
      warn(field, quoted(a), quoted(b));
    }
  }
  warn("host", quoted(p.host), quoted(here.host));
  warn("logical_cpus", std::to_string(p.logical_cpus), std::to_string(here.logical_cpus));
  if (std::abs(p.memory_bytes - here.memory_bytes) > 0.01 * std::max(p.memory_bytes, 1.0)) {
    r.warnings.push_back({"memory_bytes", fmt::format("{:.0f}", p.memory_bytes),
                          fmt::format("{:.0f}", here.memory_bytes)});
  }
  warn("memory_limit_bytes", optional_bytes(p.memory_limit_bytes),
       optional_bytes(here.memory_limit_bytes));
  warn("kernel", quoted(p.kernel), quoted(here.kernel));
  const auto t0 = epoch_s(p.date), t1 = epoch_s(here.date);
  if (!t0 || !t1) {
    r.warnings.push_back({"date", quoted(p.date) + " (age unknown)", quoted(here.date)});
  } else if ((*t1 - *t0) / 86400.0 > kMaxProfileAgeDays) {
    r.warnings.push_back({"date",
                          fmt::format("{} ({:.0f} days old, more than {:g})", p.date,
                                      (*t1 - *t0) / 86400.0, kMaxProfileAgeDays),
                          here.date});
  }
  return r;
}

std::string describe(const MachineDifference& d) {
  return d.field + ": profile " + d.profile + ", this machine " + d.here;
}

}  // namespace ddpsim::model
