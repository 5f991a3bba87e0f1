// DeepSpeed config import: DeepSpeed's batch rule with hand-computed numbers, the key mapping,
// and bad inputs (the message names the file and the JSON pointer); apply_import_patch. The
// PyTorch knobs are torch_import_test.cpp's.
#include "model/imports/deepspeed_import.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "tests/model/import_test_helpers.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

using import_test::any_contains;
using import_test::expect_input_error;

// ---- DeepSpeed's batch rule: train_batch_size = micro x accumulation x world size ----

TEST(DeepSpeedBatch, TwoOfThreeGiveTheThird) {
  // train 64, micro 4, world 8: accumulation = 64 // 4 // 8 = 2.
  DeepSpeedBatch b = resolve_deepspeed_batch(64, 4, std::nullopt, 8, "ds.json");
  EXPECT_EQ(b.grad_accumulation, 2);
  EXPECT_EQ(b.micro_batch_per_gpu, 4);
  // train 64, accumulation 2, world 8: micro = 64 // 8 // 2 = 4.
  b = resolve_deepspeed_batch(64, std::nullopt, 2, 8, "ds.json");
  EXPECT_EQ(b.micro_batch_per_gpu, 4);
  // micro 4, accumulation 2, world 8: train = 4 x 2 x 8 = 64.
  b = resolve_deepspeed_batch(std::nullopt, 4, 2, 8, "ds.json");
  EXPECT_EQ(b.train_batch_size, 64);
  // All three and no world size: the world size is implied, 64 / (4 x 2) = 8.
  b = resolve_deepspeed_batch(64, 4, 2, std::nullopt, "ds.json");
  ASSERT_TRUE(b.world_size.has_value());
  EXPECT_EQ(*b.world_size, 8);
  // Only train 64 on 8 GPUs: accumulation 1, micro 64 // 8 = 8.
  b = resolve_deepspeed_batch(64, std::nullopt, std::nullopt, 8, "ds.json");
  EXPECT_EQ(b.grad_accumulation, 1);
  EXPECT_EQ(b.micro_batch_per_gpu, 8);
  // Only micro 4 on 8 GPUs: accumulation 1, train 32.
  b = resolve_deepspeed_batch(std::nullopt, 4, std::nullopt, 8, "ds.json");
  EXPECT_EQ(b.grad_accumulation, 1);
  EXPECT_EQ(b.train_batch_size, 32);
  // micro and accumulation without a world size: fine, the global batch stays unknown (0).
  b = resolve_deepspeed_batch(std::nullopt, 4, 2, std::nullopt, "ds.json");
  EXPECT_EQ(b.train_batch_size, 0);
  EXPECT_FALSE(b.world_size.has_value());
}

TEST(DeepSpeedBatch, InconsistentNumbersNameTheKey) {
  // 4 x 3 x 8 = 96, not 64.
  expect_input_error([] { resolve_deepspeed_batch(64, 4, 3, 8, "ds.json"); },
                     {"ds.json", "/train_batch_size", "4 x 3 x 8 = 96", "got 64"});
  // Floor division as DeepSpeed does: 100 // 3 // 8 = 4, then 3 x 4 x 8 = 96 != 100.
  expect_input_error([] { resolve_deepspeed_batch(100, 3, std::nullopt, 8, "ds.json"); },
                     {"/train_batch_size", "3 x 4 x 8 = 96", "got 100"});
  // 8 // 4 // 8 = 0 accumulation steps.
  expect_input_error([] { resolve_deepspeed_batch(8, 4, std::nullopt, 8, "ds.json"); },
                     {"/train_batch_size", "gradient_accumulation_steps is >= 1"});
  // Implied world size must be whole: 63 is not a multiple of 4 x 2.
  expect_input_error([] { resolve_deepspeed_batch(63, 4, 2, std::nullopt, "ds.json"); },
                     {"/train_batch_size", "a multiple of", "= 8"});
  // Deriving needs the world size.
  expect_input_error([] { resolve_deepspeed_batch(64, 4, std::nullopt, std::nullopt, "ds.json"); },
                     {"/gradient_accumulation_steps", "--gpus"});
  expect_input_error(
      [] {
        resolve_deepspeed_batch(std::nullopt, std::nullopt, std::nullopt, std::nullopt, "ds.json");
      },
      {"/train_micro_batch_size_per_gpu", "neither"});
}

// ---- the mapping ----

json full_config() {
  return json::parse(R"({
    "train_batch_size": 512,
    "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 2,
    "steps_per_print": 10,
    "bf16": {"enabled": true},
    "zero_optimization": {"stage": 2, "overlap_comm": true, "reduce_bucket_size": 5e8,
                          "allgather_bucket_size": 2e8, "contiguous_gradients": true},
    "communication_data_type": "fp32",
    "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "weight_decay": 0.1}},
    "scheduler": {"type": "WarmupLR", "params": {"warmup_max_lr": 3e-4, "warmup_num_steps": 2000,
                                                  "warmup_type": "linear"}}
  })");
}

TEST(DeepSpeedImport, FullConfigMapsEveryKey) {
  // 512 = 8 x 2 x 32: the world size 32 is implied and written as cluster.gpus.
  const ImportResult r = import_deepspeed_config(full_config(), "ds.json", std::nullopt);
  const json expected = json::parse(R"({
    "cluster": {"gpus": 32},
    "training": {"per_gpu_batch": 8, "grad_accumulation": 2, "precision": "bf16",
                 "optimizer": "adamw", "optimizer_impl": "fused", "grad_reduce_dtype": "fp32",
                 "lr": {"base": 3e-4, "base_batch": 512, "warmup_steps": 2000}},
    "parallelism": {"strategy": "zero2", "overlap": true, "reduce_bucket_size": 500000000,
                    "allgather_bucket_size": 200000000}
  })");
  EXPECT_EQ(r.patch, expected) << r.patch.dump(2);
  // AdamW runs as DeepSpeed's FusedAdam; with torch_adam, as torch.optim.AdamW (foreach).
  json torch_adam = full_config();
  torch_adam["optimizer"]["params"]["torch_adam"] = true;
  EXPECT_EQ(import_deepspeed_config(torch_adam, "ds.json", std::nullopt)
                .patch.at("training")
                .at("optimizer_impl"),
            "foreach");
  // steps_per_print and the optimizer's weight_decay change nothing: ignored, not warned.
  EXPECT_NE(std::find(r.ignored.begin(), r.ignored.end(), "/steps_per_print"), r.ignored.end());
  EXPECT_NE(std::find(r.ignored.begin(), r.ignored.end(), "/optimizer/params/weight_decay"),
            r.ignored.end());
  EXPECT_FALSE(any_contains(r.warnings, "/steps_per_print"));
  // The warmup shape differs from ddpsim's (linear from 0 vs from the base rate): said once.
  EXPECT_TRUE(any_contains(r.warnings, "ds.json: /scheduler/params: WarmupLR ramps linearly"));
  // With the world size given, cluster.gpus is not written (it came from the caller).
  const ImportResult g = import_deepspeed_config(full_config(), "ds.json", 32);
  EXPECT_FALSE(g.patch.contains("cluster"));
}

TEST(DeepSpeedImport, StagesAndTheirOverlapDefaults) {
  auto with_stage = [](int stage) {
    json c = {{"train_micro_batch_size_per_gpu", 4}, {"zero_optimization", {{"stage", stage}}}};
    return import_deepspeed_config(c, "ds.json", std::nullopt).patch.at("parallelism");
  };
  // zero/config.py: overlap_comm None -> True for stage 3, False otherwise.
  EXPECT_EQ(with_stage(1).at("strategy"), "zero1");
  EXPECT_EQ(with_stage(1).at("overlap"), false);
  EXPECT_EQ(with_stage(2).at("strategy"), "zero2");
  EXPECT_EQ(with_stage(2).at("overlap"), false);
  EXPECT_EQ(with_stage(3).at("strategy"), "zero3");
  EXPECT_EQ(with_stage(3).at("overlap"), true);
  // use_multi_rank_bucket_allreduce (zero/config.py, default true) passes through when given.
  EXPECT_FALSE(with_stage(2).contains("use_multi_rank_bucket_allreduce"));
  json c = {{"train_micro_batch_size_per_gpu", 4},
            {"zero_optimization", {{"stage", 2}, {"use_multi_rank_bucket_allreduce", false}}}};
  const ImportResult m = import_deepspeed_config(c, "ds.json", std::nullopt);
  EXPECT_EQ(m.patch.at("parallelism").at("use_multi_rank_bucket_allreduce"), false);
  EXPECT_TRUE(m.warnings.empty());
  // Stage 0: DDP all-reduced after the backward in 5e8-element buffers: fp32 gradients are
  // 5e8 x 4 B = 2e9 B = 1907.3486328125 MiB; fp16 ones 953.67431640625 MiB.
  const json p0 = with_stage(0);
  EXPECT_EQ(p0.at("strategy"), "ddp");
  EXPECT_EQ(p0.at("overlap"), false);
  EXPECT_DOUBLE_EQ(p0.at("bucket_cap_mb").get<double>(), 1907.3486328125);
  json fp16 = {{"train_micro_batch_size_per_gpu", 4}, {"fp16", {{"enabled", true}}}};
  const ImportResult r = import_deepspeed_config(fp16, "ds.json", std::nullopt);
  EXPECT_DOUBLE_EQ(r.patch.at("parallelism").at("bucket_cap_mb").get<double>(), 953.67431640625);
  EXPECT_EQ(r.patch.at("training").at("precision"), "fp16");
}

TEST(DeepSpeedImport, OptimizerTypes) {
  auto opt = [](json o) {
    json c = {{"train_micro_batch_size_per_gpu", 1}, {"optimizer", std::move(o)}};
    return import_deepspeed_config(c, "ds.json", std::nullopt);
  };
  // DeepSpeed's "Adam" runs in AdamW mode unless adam_w_mode is false (ADAM_W_MODE_DEFAULT).
  EXPECT_EQ(opt({{"type", "Adam"}}).patch["training"]["optimizer"], "adamw");
  EXPECT_EQ(
      opt({{"type", "Adam"}, {"params", {{"adam_w_mode", false}}}}).patch["training"]["optimizer"],
      "adam");
  EXPECT_EQ(opt({{"type", "SGD"}, {"params", {{"momentum", 0.9}}}}).patch["training"]["optimizer"],
            "momentum");
  EXPECT_EQ(opt({{"type", "sgd"}}).patch["training"]["optimizer"], "sgd");
  const ImportResult onebit = opt({{"type", "OneBitAdam"}});
  EXPECT_EQ(onebit.patch["training"]["optimizer"], "adam");
  EXPECT_TRUE(any_contains(onebit.warnings, "/optimizer/type"));
  const ImportResult unknown = opt({{"type", "Shampoo"}});
  EXPECT_FALSE(unknown.patch["training"].contains("optimizer"));
  EXPECT_TRUE(any_contains(unknown.warnings, "\"Shampoo\" is not a modelled optimizer"));
}

TEST(DeepSpeedImport, SchedulerDefaultsAndLrWithoutWorldSize) {
  // WarmupLR: warmup_num_steps defaults to 1000 and is used as max(2, n).
  json c = {{"train_batch_size", 64},
            {"train_micro_batch_size_per_gpu", 8},
            {"optimizer", {{"type", "AdamW"}, {"params", {{"lr", 1e-3}}}}},
            {"scheduler", {{"type", "WarmupLR"}}}};
  ImportResult r = import_deepspeed_config(c, "ds.json", 8);
  EXPECT_EQ(r.patch["training"]["lr"]["warmup_steps"], 1000);
  EXPECT_EQ(r.patch["training"]["lr"]["base_batch"], 64);
  c["scheduler"]["params"] = {{"warmup_num_steps", 1}};
  r = import_deepspeed_config(c, "ds.json", 8);
  EXPECT_EQ(r.patch["training"]["lr"]["warmup_steps"], 2);
  // Without train_batch_size and a world size there is no base_batch: a warning, no lr.
  json d = {{"train_micro_batch_size_per_gpu", 8},
            {"optimizer", {{"type", "AdamW"}, {"params", {{"lr", 1e-3}}}}}};
  r = import_deepspeed_config(d, "ds.json", std::nullopt);
  EXPECT_FALSE(r.patch["training"].contains("lr"));
  EXPECT_TRUE(any_contains(r.warnings, "ds.json: /optimizer/params/lr: training.lr is not"));
}

TEST(DeepSpeedImport, UnknownKeysWarnWithTheirPointer) {
  json c = full_config();
  c["activation_checkpointing"] = {{"partition_activations", true}};
  c["zero_optimization"]["round_robin_gradients"] = true;
  c["zero_optimization"]["contiguous_gradients"] = false;
  c["my~odd/key"] = 1;
  const ImportResult r = import_deepspeed_config(c, "ds.json", std::nullopt);
  // DeepSpeed's activation checkpointing maps to the scenario key, its partitioning (model
  // parallelism only) warned about.
  EXPECT_EQ(r.patch["training"]["activation_checkpointing"], true);
  EXPECT_TRUE(any_contains(r.warnings, "ds.json: /activation_checkpointing: imported as"));
  EXPECT_TRUE(any_contains(r.warnings, "/activation_checkpointing/partition_activations: splits"));
  EXPECT_TRUE(any_contains(r.warnings, "/zero_optimization/round_robin_gradients: not modelled"));
  EXPECT_TRUE(any_contains(r.warnings, "/zero_optimization/contiguous_gradients: false is not"));
  EXPECT_TRUE(any_contains(r.warnings, "/my~0odd~1key"));  // RFC 6901 escaping
}

// ZeRO-Offload: offload_optimizer device "cpu" -> parallelism.offload (its host Adam rate comes
// from the base scenario); offload_param only at stage 3, ignored with a warning below it.
TEST(DeepSpeedImport, OffloadMapsToParallelismOffload) {
  json c = full_config();
  c["zero_optimization"]["stage"] = 3;
  c["zero_optimization"]["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
  c["zero_optimization"]["offload_param"] = {{"device", "cpu"}};
  ImportResult r = import_deepspeed_config(c, "ds.json", std::nullopt);
  EXPECT_EQ(r.patch["parallelism"]["offload"], json({{"param", true}}));
  EXPECT_TRUE(any_contains(r.warnings, "host_adam_params_per_s"));
  c["zero_optimization"]["stage"] = 2;
  r = import_deepspeed_config(c, "ds.json", std::nullopt);
  EXPECT_EQ(r.patch["parallelism"]["offload"], json({{"param", false}}));
  EXPECT_TRUE(any_contains(r.warnings, "/zero_optimization/offload_param: ignored at stage 2"));
}

TEST(DeepSpeedImport, BadInputsNameFileAndPointer) {
  auto run = [](json c) { import_deepspeed_config(c, "ds.json", std::nullopt); };
  json c = full_config();
  c["zero_optimization"]["offload_optimizer"] = {{"device", "nvme"}};
  expect_input_error([&] { run(c); }, {"ds.json", "/zero_optimization/offload_optimizer/device",
                                       "NVMe", "\"nvme\""});
  // device "none" is no offload at all.
  c["zero_optimization"]["offload_optimizer"] = {{"device", "none"}};
  EXPECT_NO_THROW(run(c));
  c = full_config();
  c["zero_optimization"]["offload_param"] = {{"device", "nvme"}, {"nvme_path", "/tmp"}};
  expect_input_error([&] { run(c); }, {"/zero_optimization/offload_param/device"});
  c = full_config();
  c["zero_optimization"]["stage"] = 4;
  expect_input_error([&] { run(c); }, {"/zero_optimization/stage", "0, 1, 2 or 3", "got 4"});
  c = full_config();
  c["fp16"] = {{"enabled", true}};
  expect_input_error([&] { run(c); }, {"/bf16/enabled", "DeepSpeed refuses both"});
  c = full_config();
  c["train_micro_batch_size_per_gpu"] = "auto";
  expect_input_error([&] { run(c); }, {"/train_micro_batch_size_per_gpu", "Hugging Face"});
  c = full_config();
  c["gradient_accumulation_steps"] = 2.5;
  expect_input_error([&] { run(c); }, {"/gradient_accumulation_steps", "an integer >= 1", "2.5"});
  c = full_config();
  c["optimizer"]["params"]["lr"] = -1;
  expect_input_error([&] { run(c); }, {"/optimizer/params/lr", "a number > 0"});
  c = full_config();
  c["communication_data_type"] = "int8";
  expect_input_error([&] { run(c); }, {"/communication_data_type", "fp16, bf16 or fp32"});
  c = full_config();
  c["zero_optimization"] = 3;
  expect_input_error([&] { run(c); }, {"/zero_optimization", "an object"});
  expect_input_error([&] { run(json::array()); }, {"ds.json", "a DeepSpeed config object"});
}

TEST(DeepSpeedImport, ExampleFileAppliedToAScenarioParses) {
  const std::string path =
      std::string(DDPSIM_SCENARIO_DIR) + "/examples/imports/ds_config_zero2.json";
  const ImportResult r = import_deepspeed_file(path, 64);
  // 512 = 4 x 2 x 64.
  EXPECT_EQ(r.patch["training"]["per_gpu_batch"], 4);
  EXPECT_EQ(r.patch["training"]["grad_accumulation"], 2);
  EXPECT_EQ(r.patch["parallelism"]["strategy"], "zero2");
  const json base = {{"model", {{"preset", "gpt2-xl"}}},
                     {"hardware", {{"preset", "dgx-h100"}}},
                     {"cluster", {{"gpus", 64}}},
                     {"training", {{"per_gpu_batch", 1}, {"precision", "fp32"}}}};
  json doc = apply_import_patch(base, r.patch);
  EXPECT_EQ(doc["model"]["preset"], "gpt2-xl");  // the base survives the merge
  EXPECT_EQ(doc["training"]["precision"], "bf16");
  // Validate like `ddpsim import` does: keys this build's table lacks are left out of the check.
  for (const char* key : {"reduce_bucket_size", "allgather_bucket_size"}) {
    if (scenario_keys().find(std::string("/parallelism/") + key) == nullptr) {
      doc["parallelism"].erase(key);
    }
  }
  const Scenario s = parse_scenario(doc, "merged.json");
  EXPECT_EQ(s.parallelism.strategy, Strategy::kZero2);
  EXPECT_EQ(s.training.per_gpu_batch, 4);
  EXPECT_EQ(s.training.grad_accumulation, 2);
  ASSERT_TRUE(s.training.lr.has_value());
  EXPECT_EQ(s.training.lr->base_batch, 512);
  EXPECT_EQ(s.training.lr->warmup_steps, 2000);
}

TEST(DeepSpeedImport, MalformedFileNamesTheFile) {
  const auto path = std::filesystem::temp_directory_path() / "ddpsim_ds_bad.json";
  std::ofstream(path) << "{\"train_batch_size\": 8,}";
  expect_input_error([&] { import_deepspeed_file(path.string(), 8); },
                     {path.string(), "valid JSON"});
  std::filesystem::remove(path);
}

TEST(ImportPatch, MergesRecursively) {
  const json base = {{"training", {{"per_gpu_batch", 1}, {"precision", "fp32"}}}, {"name", "x"}};
  const json patch = {{"training", {{"precision", "bf16"}}}, {"parallelism", {{"overlap", false}}}};
  const json out = apply_import_patch(base, patch);
  EXPECT_EQ(out, json::parse(R"({"name": "x", "training": {"per_gpu_batch": 1,
      "precision": "bf16"}, "parallelism": {"overlap": false}})"));
}

}  // namespace
}  // namespace ddpsim::model
