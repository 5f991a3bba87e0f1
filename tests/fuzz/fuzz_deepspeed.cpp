// Fuzz target: a DeepSpeed config JSON -> the scenario patch (ddpsim import deepspeed), with and
// without a world size; and the same bytes as a PyTorch knobs file (ddpsim import torch).
#include <cstdint>

#include "model/imports/deepspeed_import.hpp"
#include "model/imports/torch_import.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = ddpsim::fuzz::parse_json(data, size);
  if (!doc) return 0;
  ddpsim::fuzz::expect_only_ddpsim_errors(
      [&] { (void)ddpsim::model::import_deepspeed_config(*doc, "fuzz/ds_config.json", {}); });
  ddpsim::fuzz::expect_only_ddpsim_errors(
      [&] { (void)ddpsim::model::import_deepspeed_config(*doc, "fuzz/ds_config.json", 64); });
  ddpsim::fuzz::expect_only_ddpsim_errors(
      [&] { (void)ddpsim::model::import_torch_knobs(*doc, "fuzz/knobs.json"); });
  return 0;
}
