// PyTorch DDP/FSDP knob import (model/imports/torch_import.hpp): the DDP arguments one to one,
// FSDP's strategies, prefetch and mixed precision, and bad inputs (the message names the file and
// the JSON pointer).
#include "model/imports/torch_import.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "tests/model/import_test_helpers.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

using import_test::any_contains;
using import_test::expect_input_error;

TEST(TorchKnobs, DdpArgumentsMapOneToOne) {
  const json k = json::parse(R"({"ddp": {"bucket_cap_mb": 50, "gradient_as_bucket_view": true,
      "static_graph": true, "find_unused_parameters": false, "broadcast_buffers": false,
      "comm_hook": "powerSGD_hook", "powerSGD_state": {"matrix_approximation_rank": 4},
      "device_ids": [0]}})");
  const ImportResult r = import_torch_knobs(k, "knobs.json");
  const json expected = json::parse(R"({"parallelism": {"strategy": "ddp", "bucket_cap_mb": 50,
      "gradient_as_bucket_view": true, "static_graph": true, "find_unused_parameters": false,
      "broadcast_buffers": false, "comm_hook": "powersgd:4"}})");
  EXPECT_EQ(r.patch, expected) << r.patch.dump(2);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(import_torch_knobs({{"ddp", {{"comm_hook", "bf16_compress_hook"}}}}, "k.json")
                .patch["parallelism"]["comm_hook"],
            "bf16");
}

TEST(TorchKnobs, FsdpStrategiesPrefetchAndMixedPrecision) {
  auto strategy = [](const char* s) {
    return import_torch_knobs({{"fsdp", {{"sharding_strategy", s}}}}, "k.json")
        .patch["parallelism"]["strategy"];
  };
  EXPECT_EQ(strategy("FULL_SHARD"), "fsdp_full_shard");
  EXPECT_EQ(strategy("ShardingStrategy.SHARD_GRAD_OP"), "fsdp_shard_grad_op");
  EXPECT_EQ(strategy("HYBRID_SHARD"), "fsdp_hybrid");
  EXPECT_EQ(strategy("NO_SHARD"), "ddp");
  const json k = json::parse(R"({"fsdp": {"backward_prefetch": "BACKWARD_POST",
      "forward_prefetch": true, "mixed_precision": {"param_dtype": "torch.bfloat16"}}})");
  const ImportResult r = import_torch_knobs(k, "k.json");
  EXPECT_EQ(r.patch["parallelism"]["strategy"], "fsdp_full_shard");  // None -> FULL_SHARD
  EXPECT_EQ(r.patch["parallelism"]["fsdp_prefetch"], "backward_post");
  // fp32 sharded parameters computed in bf16 = autocast's bytes; reduce_dtype falls back to
  // param_dtype.
  EXPECT_EQ(r.patch["training"]["precision"], "amp_bf16");
  EXPECT_EQ(r.patch["training"]["grad_reduce_dtype"], "bf16");
  EXPECT_TRUE(any_contains(r.warnings, "k.json: /fsdp/forward_prefetch: true is not modelled"));
  EXPECT_EQ(import_torch_knobs({{"fsdp", {{"backward_prefetch", nullptr}}}}, "k.json")
                .patch["parallelism"]["fsdp_prefetch"],
            "none");
}

TEST(TorchKnobs, BadInputsNameFileAndPointer) {
  expect_input_error(
      [] {
        import_torch_knobs({{"ddp", json::object()}, {"fsdp", json::object()}}, "k.json");
      },
      {"k.json", "exactly one of", "both"});
  expect_input_error([] { import_torch_knobs(json::object(), "k.json"); }, {"neither"});
  expect_input_error(
      [] {
        import_torch_knobs({{"fsdp", {{"sharding_strategy", "_HYBRID_SHARD_ZERO2"}}}}, "k.json");
      },
      {"/fsdp/sharding_strategy", "FULL_SHARD, SHARD_GRAD_OP"});
  expect_input_error(
      [] {
        import_torch_knobs({{"fsdp", {{"cpu_offload", {{"offload_params", true}}}}}}, "k.json");
      },
      {"/fsdp/cpu_offload/offload_params", "not modelled"});
  expect_input_error(
      [] {
        import_torch_knobs({{"ddp", {{"bucket_cap_mb", 0}}}}, "k.json");
      },
      {"/ddp/bucket_cap_mb", "a number > 0"});
  expect_input_error(
      [] {
        import_torch_knobs({{"fsdp", {{"mixed_precision", {{"param_dtype", "int8"}}}}}}, "k.json");
      },
      {"/fsdp/mixed_precision/param_dtype", "torch.bfloat16"});
  expect_input_error(
      [] {
        import_torch_knobs({{"ddp", {{"comm_hook", "quantize"}}}}, "k.json");
      },
      {"/ddp/comm_hook"});
  expect_input_error(
      [] {
        import_torch_knobs({{"ddp", json::object()}, {"extra", 1}}, "k.json");
      },
      {"/extra", "only \"ddp\" or \"fsdp\""});
}

}  // namespace
}  // namespace ddpsim::model
