// nccl_logs.hpp: public nccl-tests logs (scenarios/data/nccl-tests/index.json and the logs
// beside it) against the collective model, run as each log was run: its GPUs per node and
// nodes, the NCCL release it printed, the GPUs one thread launched (-g N), a forced algorithm,
// and its fabric's NICs beside its GPU's system preset, or the instance's own system preset where
// the index names one ("preset": "aws-p5"). Geomean |busbw error| per log and size band
// (results/FIDELITY.md).
//
//   auto bands = nccl_log_bands(model::data_dir() / "data" / "nccl-tests");
#pragma once

#include <filesystem>
#include <vector>

#include "simulator/fidelity/fidelity.hpp"

namespace ddpsim::sim {

/// One band per (log, size band); empty when `dir` has no index.json. A log whose GPU has no
/// system preset, or whose op ddpsim does not model (sendrecv), is left out.
std::vector<BusbwBand> nccl_log_bands(const std::filesystem::path& dir);

/// The user's correction tested on public logs: for every pair of multi-node logs of one fabric
/// (index.json "fabric_group": the same instance family and network), the first imported as a
/// collectives profile beside its system preset, its NIC fitted (fabric_fit.hpp), and the second
/// predicted on that NIC. One band per (fitted log, tested log, size band).
std::vector<BusbwBand> fabric_fit_bands(const std::filesystem::path& dir);

}  // namespace ddpsim::sim
