// The note a sharded prediction under autocast carries when the 16-bit weight copies autograd
// saves dominate its memory (analytic_predict.cpp add_autocast_copy_note).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "model/scenario/scenario.hpp"
#include "simulator/run.hpp"

namespace ddpsim::sim {
namespace {

using nlohmann::json;

bool has_note(const json& parallelism, const std::string& precision) {
  const json d = {{"model", {{"preset", "llama-2-70b"}}},
                  {"hardware", {{"preset", "dgx-h100"}}},
                  {"cluster", {{"gpus", 256}}},
                  {"training", {{"per_gpu_batch", 1}, {"precision", precision}}},
                  {"parallelism", parallelism}};
  const Prediction p = predict(model::parse_scenario(d, "note.json")).predictions.at(0);
  return std::any_of(p.warnings.begin(), p.warnings.end(), [](const std::string& w) {
    return w.rfind("memory: autocast keeps a 16-bit copy of every weight", 0) == 0;
  });
}

TEST(AutocastCopyNote, ShardedAutocastSaysTheWholeModelIsHeldIn16Bits) {
  // 70B under FSDP FULL_SHARD on 256 GPUs with amp_bf16: 2 bytes x 69e9 = 128 GiB of copies
  // against ~3 GiB of sharded state each: the copies are most of the memory.
  EXPECT_TRUE(has_note({{"strategy", "fsdp_full_shard"}}, "amp_bf16"));
  EXPECT_TRUE(has_note({{"strategy", "zero3"}}, "amp_bf16"));
  // No autocast (pure bf16), FSDP2 gathering bf16 parameters, or DDP (every rank holds the
  // whole model anyway): no note.
  EXPECT_FALSE(has_note({{"strategy", "fsdp_full_shard"}}, "bf16"));
  EXPECT_FALSE(
      has_note({{"strategy", "fsdp2"}, {"fsdp2", {{"mixed_precision", {{"param_dtype", "bf16"}}}}}},
               "amp_bf16"));
  EXPECT_FALSE(has_note({{"strategy", "ddp"}}, "amp_bf16"));
}

}  // namespace
}  // namespace ddpsim::sim
