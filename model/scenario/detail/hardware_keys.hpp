// detail/hardware_keys.hpp: the rows of a scenario's "hardware" section, which the hardware
// preset files (scenarios/hardware/**) share: validated against them re-rooted (hardware_io.cpp).
// Not part of the public API.
#pragma once

#include <string>
#include <vector>

#include "model/schema.hpp"

namespace ddpsim::model::detail {

/// Appends the rows of a hardware section at pointer `h` ("/hardware"): system, GPU, links,
/// network and collective constants, and the calibration profile.
void add_hardware_keys(std::vector<KeySpec>& t, const std::string& h);

}  // namespace ddpsim::model::detail
