// profile_hardware.hpp: a calibration profile (profile.hpp) read as a hardware description in
// the preset format (scenarios/hardware/*.json), which is how a scenario's "hardware":
// {"profile": ...} and "preset": "this-machine" use one (hardware_io.hpp merges the keys beside
// it over the result).
//
//   Profile p = Profile::load("results/profile-vm.json");
//   nlohmann::json hw = hardware_json_from_profile(p, "scenario.json", "/hardware");
//   // hw["gpu"]["peak_tflops"]["fp32"]: the best measured GEMM throughput, TFLOP/s
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/profile/profile.hpp"

namespace ddpsim::model {

/// The profile read as a hardware description in the preset format (scenarios/hardware/*.json):
/// the measured GEMM peak per dtype with efficiency 1, the measured memory bandwidth with
/// efficiency 1, one "node" of ranks() devices joined by the measured all-reduce (bus bandwidth
/// from the largest-size segment, per-step latency from the smallest), the same link as
/// inter_node (one host measures no network: override it beside the profile). Throws InputError
/// naming `file`/`pointer` when the profile lacks what a hardware section needs.
nlohmann::json hardware_json_from_profile(const Profile& p, const std::string& file,
                                          const std::string& pointer);

}  // namespace ddpsim::model
