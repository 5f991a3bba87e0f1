// Fuzz target: a PyTorch profiler (Kineto) trace, read by the streaming SAX reader
// (model/imports/kineto_events.hpp) and imported (model/imports/kineto_import.hpp): a section or a
// ddpsim::Error, nothing else; the section must pass the profile's key table.
#include <cstdint>
#include <sstream>
#include <string>

#include "model/imports/kineto_events.hpp"
#include "model/imports/kineto_import.hpp"
#include "model/imports/measurement_import.hpp"
#include "model/profile/profile.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ddpsim::fuzz::expect_only_ddpsim_errors([&] {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    const auto trace = ddpsim::model::read_kineto_trace(in, "fuzz/trace.json");
    const auto section = ddpsim::model::import_kineto_trace(trace, "fuzz/trace.json");
    (void)ddpsim::model::Profile::from_json(
        ddpsim::model::imported_profile(nullptr, section, "fuzz"), "fuzz/trace.json");
  });
  return 0;
}
