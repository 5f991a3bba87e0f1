// Fuzz target: a Hugging Face config.json -> the transformer builder (GPT-2, Llama, BERT).
// The workload of an accepted config must be self-consistent: every parameter count positive.
#include <cstdint>
#include <cstdlib>

#include "model/builders/builders.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = ddpsim::fuzz::parse_json(data, size);
  if (!doc) return 0;
  ddpsim::fuzz::expect_only_ddpsim_errors([&] {
    const auto w = ddpsim::model::build_hf_transformer(*doc, "fuzz/config.json", 128);
    if (w.param_count() <= 0) std::abort();
  });
  return 0;
}
