// detail/sweep_bands.hpp: what the published nccl-tests rows (fidelity.cpp) and the public logs
// (nccl_logs.cpp) share: the system preset of a GPU name, and the geomean / max |busbw error| of
// a sweep's points per size band.
#pragma once

#include <string>
#include <vector>

#include "simulator/fidelity/fidelity.hpp"

namespace ddpsim::sim::detail {

/// The system preset of a GPU as rows and logs name it ("H100 80GB HBM3 (ND H100 v5)", "NVIDIA
/// B200"), case-insensitively; empty when ddpsim has none.
std::string preset_for_gpu(const std::string& gpu);

/// One point of a sweep: its message size and (ddpsim - measured) / measured busbw.
struct SweepPoint {
  double bytes = 0;
  double rel = 0;
};

/// One BusbwBand per size band that has points, in band order (< 64 KiB .. >= 64 MiB), each named
/// `sweep` on `preset`.
std::vector<BusbwBand> sweep_bands(const std::string& sweep, const std::string& preset,
                                   const std::vector<SweepPoint>& points);

}  // namespace ddpsim::sim::detail
