// Fuzz target: a torchtitan job file (TOML) -> the scenario patch (ddpsim import torchtitan),
// without a world size and with one.
#include <cstdint>
#include <string>

#include "model/imports/torchtitan_import.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ddpsim::fuzz::expect_only_ddpsim_errors([&] {
    const nlohmann::json job = ddpsim::model::parse_toml_text(text, "fuzz/job.toml");
    ddpsim::fuzz::expect_only_ddpsim_errors(
        [&] { (void)ddpsim::model::import_torchtitan_config(job, "fuzz/job.toml", {}); });
    ddpsim::fuzz::expect_only_ddpsim_errors(
        [&] { (void)ddpsim::model::import_torchtitan_config(job, "fuzz/job.toml", 64); });
  });
  return 0;
}
