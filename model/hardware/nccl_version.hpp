// nccl_version.hpp: an NCCL release as a scenario names it ("2.18.5"), for the collective model's
// per-release constants (simulator/collectives/detail/nccl_versions.hpp).
//
//   auto v = parse_nccl_version("2.18.5");  // {2, 18, 5}
//   nccl_version_known("2.17.1");           // false: older than the releases ddpsim models
#pragma once

#include <optional>
#include <string>

namespace ddpsim::model {

struct NcclVersion {
  int major = 2, minor = 30, patch = 7;
};

/// "MAJOR.MINOR.PATCH" (a "-1" package suffix or "+cuda12.2" build tag is ignored); nullopt for
/// anything else.
std::optional<NcclVersion> parse_nccl_version(const std::string& text);

/// A release whose constants ddpsim holds: 2.18.0 .. 2.30.x.
bool nccl_version_known(const std::string& text);

}  // namespace ddpsim::model
