// run_context.hpp: the "context" block every result file of ddpsim starts with (predictions,
// plans, validations, profiles, executor runs): which tool and version wrote it, from which git
// revision, on which host, when (UTC), with which libraries. Each tool adds its own keys
// (engine, device, command, backend, ...) to the block run_context_json() returns.
//
//   nlohmann::json c = model::run_context_json("ddpsim");
//   c["engine"] = "analytic";
//   std::string out = "results/profile-" + model::host_name() + ".json";
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ddpsim::model {

/// The host name (gethostname), "unknown" when it cannot be read or is empty.
std::string host_name();

/// The current UTC time formatted by strftime's `format` (default ISO 8601,
/// "2026-12-04T09:41:07Z"; "%Y%m%d" gives "20261204").
std::string utc_now(const char* format = "%Y-%m-%dT%H:%M:%SZ");

/// The git revision (12 hex digits) of the source tree at configure time, "unknown" outside a
/// checkout.
const char* git_revision();

/// {"tool": tool, "version", "git_revision", "host", "date" (utc_now()), "libraries":
/// {"nlohmann_json", "boost", "fmt"}}: the libraries model/ links, "major.minor.patch".
nlohmann::json run_context_json(const std::string& tool);

}  // namespace ddpsim::model
