// fill_hf_auto: a DeepSpeed config written for the Hugging Face Trainer ("auto" everywhere) filled
// from a base scenario as the Trainer fills it (transformers integrations/deepspeed.py
// trainer_config_process / trainer_config_finalize), checked against hand-computed values.
#include "model/imports/hf_auto.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/imports/deepspeed_import.hpp"
#include "model/json_file.hpp"
#include "model/scenario/scenario.hpp"
#include "tests/test_data_dir.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

using test_data::kData;
const std::string kZero3 = kData + "/deepspeed/ds_config_zero3.json";

// A base scenario: Llama-2-7B's config (hidden_size 4096), micro-batch 4, accumulation 8, bf16,
// lr 3e-4 with 100 warmup steps.
json base() {
  return {{"model", {{"hf_config", "hf/llama-2-7b-config.json"}, {"seq_len", 4096}}},
          {"hardware", {{"preset", "dgx-a100"}}},
          {"cluster", {{"gpus", 64}}},
          {"training",
           {{"per_gpu_batch", 4},
            {"grad_accumulation", 8},
            {"precision", "bf16"},
            {"lr", {{"base", 3e-4}, {"base_batch", 2048}, {"warmup_steps", 100}}}}}};
}

// The Trainer's ZeRO-3 test file: micro 4, accumulation 8, train_batch_size 64 x 4 x 8 = 2048;
// fp16.enabled false (bf16 run); lr and warmup_max_lr 3e-4, warmup_num_steps 100;
// reduce_bucket_size 4096^2 = 16,777,216, stage3_prefetch_bucket_size 0.9 x 4096^2 =
// 15,099,494 (floored), stage3_param_persistence_threshold 10 x 4096 = 40,960; the keys that
// change no step (betas, eps, weight_decay, warmup_min_lr, gradient_clipping) are erased.
TEST(HfAuto, TheTrainersZero3ConfigFilledFromABase) {
  const json b = base();
  std::vector<std::string> notes;
  const json c = fill_hf_auto(read_json_file(kZero3), kZero3, &b, kData + "/base.json", 64, &notes);
  // The file has an fp16 section only: a bf16 base gets fp16 off and a note that DeepSpeed then
  // runs without bf16 (the Trainer fills only the sections a file has).
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("/bf16"), std::string::npos) << notes[0];
  EXPECT_EQ(c["train_micro_batch_size_per_gpu"], 4);
  EXPECT_EQ(c["gradient_accumulation_steps"], 8);
  EXPECT_EQ(c["train_batch_size"], 2048);
  EXPECT_EQ(c["fp16"]["enabled"], false);
  EXPECT_EQ(c["optimizer"]["params"]["lr"], 3e-4);
  EXPECT_EQ(c["scheduler"]["params"]["warmup_max_lr"], 3e-4);
  EXPECT_EQ(c["scheduler"]["params"]["warmup_num_steps"], 100);
  EXPECT_EQ(c["zero_optimization"]["reduce_bucket_size"], 16777216);
  EXPECT_EQ(c["zero_optimization"]["stage3_prefetch_bucket_size"], 15099494);
  EXPECT_EQ(c["zero_optimization"]["stage3_param_persistence_threshold"], 40960);
  for (const char* gone : {"betas", "eps", "weight_decay"}) {
    EXPECT_FALSE(c["optimizer"]["params"].contains(gone)) << gone;
  }
  EXPECT_FALSE(c["scheduler"]["params"].contains("warmup_min_lr"));
  EXPECT_FALSE(c.contains("gradient_clipping"));
  // Values that are not "auto" are untouched.
  EXPECT_EQ(c["zero_optimization"]["stage3_max_live_parameters"], 1e9);
}

// The same real file end to end: its offload_optimizer and offload_param (device "cpu") become
// parallelism.offload {param: true} on stage 3, and with the host Adam rate the base gives the
// merged scenario parses: optimizer states and parameter partitions live on the host.
TEST(HfAuto, TheTrainersZero3OffloadImportsAsZeroOffload) {
  json b = base();
  b["parallelism"] = {{"offload", {{"host_adam_params_per_s", 2e8}}}};
  const json c = fill_hf_auto(read_json_file(kZero3), kZero3, &b, kData + "/base.json", 64);
  const ImportResult r = import_deepspeed_config(c, kZero3, 64);
  EXPECT_EQ(r.patch["parallelism"]["strategy"], "zero3");
  EXPECT_EQ(r.patch["parallelism"]["offload"]["param"], true);
  json doc = apply_import_patch(b, r.patch);
  doc["model"]["hf_config"] = kData + "/hf/llama-2-7b-config.json";
  const Scenario s = parse_scenario(doc, kData + "/base.json");
  ASSERT_TRUE(s.parallelism.offload.has_value());
  EXPECT_TRUE(s.parallelism.offload->param);
  EXPECT_DOUBLE_EQ(s.parallelism.offload->host_adam_params_per_s, 2e8);
}

// The Trainer's ZeRO-2 file: offload_optimizer on the CPU with overlap_comm and 2e8-element
// buckets -> zero2, parallelism.offload {param: false}, overlap true, both bucket sizes 2e8.
TEST(HfAuto, TheTrainersZero2OffloadFile) {
  const std::string zero2 = kData + "/deepspeed/ds_config_zero2.json";
  json b = base();
  b["parallelism"] = {{"offload", {{"host_adam_params_per_s", 2e8}}}};
  const json c = fill_hf_auto(read_json_file(zero2), zero2, &b, kData + "/base.json", 64);
  const ImportResult r = import_deepspeed_config(c, zero2, 64);
  EXPECT_EQ(r.patch["parallelism"]["strategy"], "zero2");
  EXPECT_EQ(r.patch["parallelism"]["offload"], json({{"param", false}}));
  EXPECT_EQ(r.patch["parallelism"]["overlap"], true);
  EXPECT_EQ(r.patch["parallelism"]["reduce_bucket_size"], 200000000);
  json doc = apply_import_patch(b, r.patch);
  doc["model"]["hf_config"] = kData + "/hf/llama-2-7b-config.json";
  const Scenario s = parse_scenario(doc, kData + "/base.json");
  EXPECT_EQ(s.parallelism.strategy, Strategy::kZero2);
  ASSERT_TRUE(s.parallelism.offload.has_value());
}

// Without a base every "auto" that needs one is named in one message: the first as the pointer,
// the others after it, each with what would fill it.
TEST(HfAuto, WhatCannotBeFilledIsNamedInOneMessage) {
  try {
    (void)fill_hf_auto(read_json_file(kZero3), kZero3, nullptr, "", std::nullopt);
    ADD_FAILURE() << "no base: expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/fp16/enabled");
    const std::string m = e.what();
    for (const char* p : {"/optimizer/params/lr", "/zero_optimization/reduce_bucket_size",
                          "/train_batch_size", "training.per_gpu_batch", "--scenario"}) {
      EXPECT_NE(m.find(p), std::string::npos) << p << ": " << m;
    }
  }
  // An "auto" the Trainer never fills is named as such.
  json c = {{"zero_optimization", {{"stage", 2}, {"allgather_bucket_size", "auto"}}}};
  const json b = base();
  try {
    (void)fill_hf_auto(c, "ds.json", &b, kData + "/base.json", 64);
    ADD_FAILURE() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/zero_optimization/allgather_bucket_size");
    EXPECT_NE(std::string(e.what()).find("not a key the Hugging Face Trainer fills"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace ddpsim::model
