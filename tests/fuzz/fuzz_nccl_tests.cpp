// Fuzz target: an nccl-tests log (text) or its -J JSON -> the profile "collectives" section, whose
// fit must then succeed or fail with ddpsim::Error only.
#include <cstdint>
#include <string>

#include "model/imports/measurement_import.hpp"
#include "model/profile/profile.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ddpsim::fuzz::expect_only_ddpsim_errors([&] {
    auto section = ddpsim::model::import_nccl_tests_log(text, "fuzz/nccl-tests.log");
    ddpsim::model::add_collective_fits(section);
  });
  if (auto doc = ddpsim::fuzz::parse_json(data, size)) {
    ddpsim::fuzz::expect_only_ddpsim_errors([&] {
      auto section = ddpsim::model::import_nccl_tests_json(*doc, "fuzz/nccl-tests.json");
      ddpsim::model::add_collective_fits(section);
    });
  }
  return 0;
}
