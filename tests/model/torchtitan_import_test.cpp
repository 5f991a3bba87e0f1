// `ddpsim import torchtitan`: real torchtitan job files (tests/data/torchtitan, README there)
// into scenario keys, and what is refused or named.
#include "model/imports/torchtitan_import.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

std::string data(const std::string& name) {
  return std::string(DDPSIM_TEST_DATA_DIR) + "/torchtitan/" + name;
}

bool has_warning(const ImportResult& r, const std::string& part) {
  for (const std::string& w : r.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

// llama3_8b.toml: "8B", local batch 1, seq 8192, shard -1 over 64 GPUs, op-level SAC, AdamW
// 3e-4 with 200 warmup steps, compile off, float8 converter commented out.
TEST(TorchtitanImport, Llama3EightBAsShipped) {
  const ImportResult r = import_torchtitan_file(data("llama3_8b.toml"), 64);
  const json& p = r.patch;
  EXPECT_EQ(p["model"], json({{"preset", "llama-3.1-8b"}, {"seq_len", 8192}}));
  EXPECT_EQ(p["cluster"]["gpus"], 64);
  EXPECT_EQ(p["training"]["per_gpu_batch"], 1);
  EXPECT_EQ(p["training"]["grad_accumulation"], 1);
  EXPECT_EQ(p["training"]["precision"], "amp_bf16");
  EXPECT_EQ(p["training"]["optimizer"], "adamw");
  EXPECT_EQ(p["training"]["activation_checkpointing"],
            json({{"mode", "selective"}, {"option", "op"}}));
  EXPECT_FALSE(p["training"].contains("compile"));
  EXPECT_FALSE(p["training"].contains("float8"));  // the converter is commented out
  EXPECT_EQ(p["training"]["lr"], json({{"base", 3e-4}, {"base_batch", 64}, {"warmup_steps", 200}}));
  EXPECT_EQ(p["parallelism"]["strategy"], "fsdp2");
  EXPECT_EQ(p["parallelism"]["fsdp2"]["mesh"], json({{"shard", 64}, {"replicate", 1}}));
  EXPECT_EQ(p["parallelism"]["fsdp2"]["units"], "torchtitan");
  EXPECT_EQ(p["parallelism"]["fsdp2"]["mixed_precision"],
            json({{"param_dtype", "bf16"}, {"reduce_dtype", "fp32"}}));
  // Not modelled, named by TOML path: gradient clipping.
  EXPECT_TRUE(has_warning(r, "training.max_norm")) << r.warnings.size();
  // No effect: logging and checkpoint folders.
  EXPECT_NE(std::find(r.ignored.begin(), r.ignored.end(), "metrics"), r.ignored.end());
  // The patch on a base is a scenario the reader accepts.
  const json base = {{"hardware", {{"preset", "dgx-a100"}}},
                     {"model", {{"preset", "gpt2-xl"}}},
                     {"cluster", {{"gpus", 64}}},
                     {"training", {{"per_gpu_batch", 4}}}};
  json doc = base;
  doc["model"] = json::object();
  doc = apply_import_patch(doc, p);
  const Scenario s = parse_scenario(doc, "imported.json");
  EXPECT_EQ(s.training.activation_checkpointing.mode, CheckpointMode::kSelectiveOp);
  EXPECT_EQ(s.workload->param_count(), 8'030'261'248);
}

// llama3_405b.toml runs 8-way tensor parallelism: refused, naming the key.
TEST(TorchtitanImport, TensorParallelismIsRefusedByItsPath) {
  try {
    import_torchtitan_file(data("llama3_405b.toml"), 512);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "parallelism.tensor_parallel_degree");
    EXPECT_NE(std::string(e.what()).find("data parallelism"), std::string::npos) << e.what();
  }
}

// The 405B recipe without its tensor parallelism: float8 (tensorwise, float8 all-gather,
// precomputed scales, "output" -> lm_head), compile, full checkpointing, local batch 2.
TEST(TorchtitanImport, Float8CompileAndFullCheckpointing) {
  std::ifstream in(data("llama3_405b.toml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find("tensor_parallel_degree = 8");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("tensor_parallel_degree = 8").size(), "tensor_parallel_degree = 1");
  const ImportResult r = import_torchtitan_file(write_temp("ddpsim_405b_fsdp.toml", text), 512);
  const json& t = r.patch["training"];
  EXPECT_EQ(r.patch["model"]["preset"], "llama-3.1-405b");
  EXPECT_EQ(t["activation_checkpointing"], json(true));
  EXPECT_EQ(t["compile"], json(true));
  EXPECT_EQ(t["float8"], json({{"recipe", "tensorwise"},
                               {"fsdp_float8_all_gather", true},
                               {"precompute_scale", true},
                               {"filter_fqns", {"lm_head"}}}));
  EXPECT_EQ(t["per_gpu_batch"], 2);
  EXPECT_EQ(r.patch["cluster"]["gpus"], 512);
}

// The debug model's defaults: selective every 2nd block ('2'), 8 sequences of 2048.
TEST(TorchtitanImport, DebugModel) {
  const ImportResult r = import_torchtitan_file(data("debug_model.toml"), 8);
  EXPECT_EQ(r.patch["model"]["preset"], "torchtitan-llama3-debugmodel");
  EXPECT_EQ(r.patch["training"]["activation_checkpointing"],
            json({{"mode", "selective"}, {"option", 2}}));
  EXPECT_EQ(r.patch["training"]["per_gpu_batch"], 8);
}

// The mid-2024 names: training.batch_size, training.data_parallel_degree, training.compile,
// [float8] enable_float8_linear.
TEST(TorchtitanImport, MidTwentyTwentyFourNames) {
  const ImportResult r = import_torchtitan_file(data("llama3_8b_2024-08.toml"), 8);
  EXPECT_EQ(r.patch["model"]["preset"], "llama-3.1-8b");  // name "llama" then
  EXPECT_EQ(r.patch["training"]["per_gpu_batch"], 1);
  EXPECT_EQ(r.patch["cluster"]["gpus"], 8);
  EXPECT_EQ(r.patch["parallelism"]["fsdp2"]["mesh"]["shard"], 8);
  EXPECT_FALSE(r.patch["parallelism"]["fsdp2"].contains("units"));  // blocks, with a warning
  EXPECT_FALSE(r.patch["training"].contains("compile"));            // compile = false
  EXPECT_EQ(r.patch["training"]["activation_checkpointing"],
            json({{"mode", "selective"}, {"option", "op"}}));
}

TEST(TorchtitanImport, ErrorsNameTheTomlPath) {
  // A shard degree of -1 needs the world size.
  try {
    import_torchtitan_file(data("llama3_8b.toml"), std::nullopt);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "parallelism.data_parallel_shard_degree");
  }
  // A global batch that is not a multiple of local x data-parallel degree (torchtitan/train.py).
  const std::string job = write_temp("ddpsim_bad_global.toml",
                                     "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                                     "[training]\nlocal_batch_size = 2\nglobal_batch_size = 24\n"
                                     "seq_len = 4096\n");
  try {
    import_torchtitan_file(job, 8);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "training.global_batch_size");
  }
  // Accumulation from the global batch: 64 / (2 x 8) = 4.
  const std::string ok = write_temp("ddpsim_good_global.toml",
                                    "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                                    "[training]\nlocal_batch_size = 2\nglobal_batch_size = 64\n"
                                    "seq_len = 4096\n[activation_checkpoint]\nmode = \"none\"\n");
  EXPECT_EQ(import_torchtitan_file(ok, 8).patch["training"]["grad_accumulation"], 4);
  // An unknown flavour, and a syntax error with its line.
  const std::string flavour =
      write_temp("ddpsim_flavour.toml", "[model]\nname = \"llama3\"\nflavor = \"3B\"\n");
  try {
    import_torchtitan_file(flavour, 8);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "model.flavor");
  }
  const std::string broken = write_temp("ddpsim_broken.toml", "[model]\nname = \n");
  try {
    read_toml_file(broken);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ddpsim::model
