// hardware_io.hpp: a scenario's "hardware" section resolved into a HardwareSpec.
//
// The section names a system preset (scenarios/hardware/<name>.json), a hardware file in the
// preset format (relative to the scenario file), a calibration profile ("profile", or
// "preset": "this-machine" for results/profile-<hostname>.json beside or above the scenario), or
// gives every key itself. Keys beside a preset, file or profile override it, recursively; a GPU
// or link given by its own "preset" is resolved the same way (scenarios/hardware/gpus/,
// scenarios/hardware/links/). Preset files are validated against the hardware rows of
// scenario_keys(). Units are converted once, here: *_gbps and *_gbytes_per_s to bytes/s,
// *_us to seconds, memory_gib to bytes.
//
//   HardwareSpec hw = resolve_hardware({{"preset", "dgx-h100"},
//                                       {"inter_node", {{"bandwidth_gbps", 200}}}},
//                                      "scenario.json", "/hardware");
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/hardware/hardware.hpp"

namespace ddpsim::model {

/// Resolves a hardware section ({"preset": ...} plus overrides, or explicit keys) into a spec.
/// `pointer` is where the section sits in `file` ("/hardware"); `file` also anchors relative
/// paths. A missing preset, file or profile, or a part the result lacks (GPU, gpus_per_node,
/// intra_node, inter_node, a required number), throws InputError naming `file` and the pointer.
HardwareSpec resolve_hardware(const nlohmann::json& section, const std::string& file,
                              const std::string& pointer);

}  // namespace ddpsim::model
