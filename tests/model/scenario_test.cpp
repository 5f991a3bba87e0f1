// Scenario loading: presets, overrides, files by path, sweeps, and strict validation. Every key
// of the schema gets a wrong-type case and (where a range exists) an out-of-range case,
// generated from the key table so that a new key cannot be added without one.
#include "model/scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "model/error.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "model/units.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

json base_doc() {
  return json::parse(R"({
    "name": "t",
    "model": {"mlp": {"widths": [64, 128, 10]}},
    "hardware": {"preset": "dgx-a100"},
    "cluster": {"gpus": 16},
    "training": {"per_gpu_batch": 8}
  })");
}

std::string pointer_of(const json& doc_fn_unused, const std::string& pattern) {
  (void)doc_fn_unused;
  std::string out;
  std::size_t pos = 0;
  while (pos < pattern.size()) {
    const std::size_t next = pattern.find('/', pos + 1);
    std::string seg =
        pattern.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    if (seg == "*") seg = "0";
    if (seg == "{}") seg = "cluster.gpus";
    out += "/" + seg;
    if (next == std::string::npos) break;
    pos = next;
  }
  return out;
}

// Expects parse_scenario to throw InputError at `pointer` (or, with prefix=true, at a pointer
// that starts with it).
void expect_error_at(const json& doc, const std::string& pointer, const std::string& why) {
  try {
    parse_scenario(doc, "case.json");
    ADD_FAILURE() << why << ": no error for " << pointer << " in " << doc.dump();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), pointer) << why << ": " << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("case.json"), std::string::npos);
  }
}

TEST(ScenarioTest, MinimalScenarioGetsDocumentedDefaults) {
  const Scenario s = parse_scenario(base_doc(), "min.json");
  EXPECT_EQ(s.cluster.gpus, 16);
  EXPECT_EQ(s.cluster.gpus_per_node, 8);  // from the dgx-a100 preset
  EXPECT_EQ(s.training.grad_accumulation, 1);
  EXPECT_EQ(s.training.precision, Precision::kFp32);
  EXPECT_EQ(s.parallelism.strategy, Strategy::kDdp);
  EXPECT_DOUBLE_EQ(s.parallelism.bucket_cap_mb, 25.0);
  EXPECT_TRUE(s.parallelism.bucket_cap_defaulted);
  EXPECT_TRUE(s.parallelism.overlap);
  EXPECT_EQ(s.workload->param_count(), 64 * 128 + 128 + 128 * 10 + 10);
  EXPECT_EQ(s.hardware.gpu.name, "a100-sxm-80gb");
  EXPECT_EQ(s.hardware.nics_per_node, 8);
  // 200 Gb/s HDR per NIC = 25e9 bytes/s in one direction.
  EXPECT_DOUBLE_EQ(s.hardware.inter_node.bandwidth, 25e9);
}

TEST(ScenarioTest, RelaxedSynchronisationAndTraceKeys) {
  // Defaults keep the synchronous engine: interference 1, H = 1, s = 0, 64 traced ranks.
  Scenario s = parse_scenario(base_doc(), "min.json");
  EXPECT_DOUBLE_EQ(s.simulation.interference, 1.0);
  EXPECT_EQ(s.simulation.local_sgd_period, 1);
  EXPECT_EQ(s.simulation.staleness, 0);
  EXPECT_EQ(s.simulation.trace_ranks, 64);
  EXPECT_FALSE(s.training.target_steps_multiplier.has_value());
  json d = base_doc();
  d["simulation"] = {{"interference", 1.15}, {"local_sgd_period", 8}, {"trace_ranks", 4}};
  d["training"]["target"] = {{"steps_multiplier", 1.3}};
  s = parse_scenario(d, "r.json");
  EXPECT_DOUBLE_EQ(s.simulation.interference, 1.15);
  EXPECT_EQ(s.simulation.local_sgd_period, 8);
  EXPECT_EQ(s.simulation.trace_ranks, 4);
  EXPECT_DOUBLE_EQ(*s.training.target_steps_multiplier, 1.3);
  d["simulation"] = {{"staleness", 3}};
  EXPECT_EQ(parse_scenario(d, "r.json").simulation.staleness, 3);

  auto bad = [&](const json& sim, const std::string& ptr, const std::string& why) {
    json b = base_doc();
    b["simulation"] = sim;
    expect_error_at(b, ptr, why);
  };
  bad({{"interference", 0.9}}, "/simulation/interference", "a speed-up is not interference");
  bad({{"local_sgd_period", 0}}, "/simulation/local_sgd_period", "H >= 1");
  bad({{"staleness", -1}}, "/simulation/staleness", "s >= 0");
  bad({{"trace_ranks", 0}}, "/simulation/trace_ranks", "at least one rank");
  bad({{"local_sgd_period", 2}, {"staleness", 1}}, "/simulation/staleness", "one at a time");
  json z = base_doc();
  z["parallelism"] = {{"strategy", "zero2"}};
  z["simulation"] = {{"local_sgd_period", 4}};
  expect_error_at(z, "/simulation/local_sgd_period", "local SGD keeps a full replica");
  json m = base_doc();
  m["training"]["target"] = {{"steps_multiplier", 0}};
  expect_error_at(m, "/training/target/steps_multiplier", "a ratio > 0");
}

// model.attention: sdpa by default for transformers; flash only where flash kernels run; no
// attention key for models without attention.
// PyTorch's TF32 switches: defaults as in PyTorch >= 1.12 (cuDNN on, matmul off), both
// settable, read into the GPU's tf32 rate; a tf32 peak without its efficiency is refused when
// fp32 training would use it.
TEST(ScenarioTest, Tf32Switches) {
  json d = base_doc();
  const Scenario s = parse_scenario(d, "t.json");
  EXPECT_FALSE(s.training.allow_tf32_matmul);
  EXPECT_TRUE(s.training.allow_tf32_cudnn);
  EXPECT_DOUBLE_EQ(s.hardware.gpu.tf32_peak_flops, 156e12);  // dgx-a100's A100
  EXPECT_DOUBLE_EQ(s.hardware.gpu.tf32_efficiency, 0.86);
  d["training"]["allow_tf32_matmul"] = true;
  d["training"]["allow_tf32_cudnn"] = false;
  const Scenario t = parse_scenario(d, "t.json");
  EXPECT_TRUE(t.training.allow_tf32_matmul);
  EXPECT_FALSE(t.training.allow_tf32_cudnn);
  EXPECT_DOUBLE_EQ(parse_scenario(json::parse(R"({"name": "v", "model": {"mlp": {"widths": [8, 8]}},
      "hardware": {"preset": "dgx-1"}, "cluster": {"gpus": 1}, "training": {"per_gpu_batch": 1}})"),
                                  "v.json")
                       .hardware.gpu.tf32_peak_flops,
                   0.0);  // V100: no TF32
  json no_eff = base_doc();
  no_eff["hardware"] = json::parse(R"({
    "gpu": {"memory_gib": 40, "memory_bandwidth_gbytes_per_s": 1500,
            "peak_tflops": {"fp32": 19.5, "tf32": 156}, "efficiency": {"fp32": 0.9}},
    "gpus_per_node": 8, "intra_node": {"preset": "nvlink3"},
    "inter_node": {"preset": "ib-hdr-200", "nics_per_node": 8}})");
  expect_error_at(no_eff, "/hardware/gpu/efficiency/tf32", "a tf32 peak without its efficiency");
  no_eff["training"]["allow_tf32_cudnn"] = false;  // TF32 not used: nothing missing
  EXPECT_NO_THROW(parse_scenario(no_eff, "t.json"));
  json bad = d;
  bad["training"]["allow_tf32_matmul"] = "yes";
  expect_error_at(bad, "/training/allow_tf32_matmul", "a string for a boolean");
}

TEST(ScenarioTest, AttentionImplementation) {
  json d = base_doc();
  d["model"] = {{"preset", "gpt2-xl"}, {"seq_len", 128}};
  d["training"]["precision"] = "amp_bf16";
  EXPECT_EQ(parse_scenario(d, "a.json").workload->attention, AttentionImpl::kSdpa);
  for (const char* impl : {"eager", "flash"}) {
    d["model"]["attention"] = impl;
    EXPECT_EQ(model::attention_impl_name(*parse_scenario(d, "a.json").workload->attention),
              std::string(impl));
  }
  json fp32 = d;
  fp32["training"]["precision"] = "fp32";
  expect_error_at(fp32, "/model/attention", "flash-attn has no fp32 kernels");
  json volta = d;
  volta["hardware"] = {{"preset", "dgx-1"}};
  volta["training"]["precision"] = "amp_fp16";
  expect_error_at(volta, "/model/attention", "no flash kernels on sm70");
  volta["model"]["attention"] = "sdpa";
  EXPECT_NO_THROW(parse_scenario(volta, "a.json"));
  json mlp = base_doc();
  mlp["model"]["attention"] = "sdpa";
  expect_error_at(mlp, "/model/attention", "an MLP has no attention");
  json cnn = base_doc();
  cnn["model"] = {{"preset", "resnet50"}, {"attention", "eager"}};
  expect_error_at(cnn, "/model/attention", "a CNN has no attention");
  json unknown = d;
  unknown["model"]["attention"] = "xformers";
  expect_error_at(unknown, "/model/attention", "not a known implementation");
}

TEST(ScenarioTest, KeysBesideAPresetOverrideIt) {
  json d = base_doc();
  d["hardware"] = json::parse(R"({"preset": "dgx-h100", "inter_node": {"bandwidth_gbps": 800},
                                  "gpu": {"memory_gib": 96}})");
  const Scenario s = parse_scenario(d, "o.json");
  EXPECT_DOUBLE_EQ(s.hardware.inter_node.bandwidth, gbps_to_bytes_per_s(800));
  EXPECT_DOUBLE_EQ(s.hardware.gpu.memory_bytes, 96 * kGiB);
  EXPECT_EQ(s.hardware.nics_per_node, 8);  // kept from the preset
  EXPECT_EQ(s.hardware.gpu.name, "h100-sxm");
  // A different NIC preset replaces the link but keeps the preset's NIC count.
  d["hardware"] = json::parse(R"({"preset": "dgx-h100", "inter_node": {"preset": "eth-100g"}})");
  const Scenario e = parse_scenario(d, "o.json");
  EXPECT_DOUBLE_EQ(e.hardware.inter_node.bandwidth, gbps_to_bytes_per_s(100));
  EXPECT_EQ(e.hardware.nics_per_node, 8);
}

TEST(ScenarioTest, ExplicitHardwareWithoutSystemPreset) {
  json d = base_doc();
  d["hardware"] = json::parse(R"({
    "gpu": {"preset": "h100-sxm"}, "gpus_per_node": 4,
    "intra_node": {"preset": "pcie5-x16"}, "intra_node_switched": true,
    "inter_node": {"bandwidth_gbps": 100, "latency_us": 5, "nics_per_node": 1}})");
  d["cluster"]["gpus"] = 8;
  const Scenario s = parse_scenario(d, "x.json");
  EXPECT_EQ(s.hardware.gpus_per_node, 4);
  EXPECT_DOUBLE_EQ(s.hardware.inter_node.latency, 5e-6);
  // A missing rate is named, not defaulted.
  d["hardware"]["inter_node"].erase("bandwidth_gbps");
  expect_error_at(d, "/hardware/inter_node/bandwidth_gbps", "missing NIC rate");
}

TEST(ScenarioTest, ShardedStrategyKeys) {
  // Defaults: DeepSpeed's code defaults (5e8 elements), FSDP's BACKWARD_PRE, no checkpointing,
  // and the plan searches the scenario's own strategy.
  Scenario s = parse_scenario(base_doc(), "min.json");
  EXPECT_DOUBLE_EQ(s.parallelism.reduce_bucket_elements, 5e8);
  EXPECT_DOUBLE_EQ(s.parallelism.allgather_bucket_elements, 5e8);
  EXPECT_EQ(s.parallelism.fsdp_prefetch, FsdpPrefetch::kBackwardPre);
  EXPECT_FALSE(s.training.activation_checkpointing.enabled());
  EXPECT_EQ(s.plan.strategy, (std::vector<Strategy>{Strategy::kDdp}));
  json d = base_doc();
  d["parallelism"] = {{"strategy", "zero2"},
                      {"reduce_bucket_size", 2e8},
                      {"allgather_bucket_size", 3e8},
                      {"fsdp_prefetch", "backward_post"}};
  d["training"]["activation_checkpointing"] = true;
  d["plan"] = {{"strategy", {"ddp", "zero3", "fsdp_hybrid"}}};
  s = parse_scenario(d, "s.json");
  EXPECT_EQ(s.parallelism.strategy, Strategy::kZero2);
  EXPECT_DOUBLE_EQ(s.parallelism.reduce_bucket_elements, 2e8);
  EXPECT_DOUBLE_EQ(s.parallelism.allgather_bucket_elements, 3e8);
  EXPECT_EQ(s.parallelism.fsdp_prefetch, FsdpPrefetch::kBackwardPost);
  EXPECT_EQ(s.training.activation_checkpointing.mode, CheckpointMode::kFull);
  EXPECT_EQ(s.plan.strategy,
            (std::vector<Strategy>{Strategy::kDdp, Strategy::kZero3, Strategy::kFsdpHybrid}));
  EXPECT_STREQ(fsdp_prefetch_name(FsdpPrefetch::kNone), "none");
  // Sharded strategies take no PowerSGD / top-k hook; HYBRID_SHARD needs whole nodes.
  d = base_doc();
  d["parallelism"] = {{"strategy", "fsdp_full_shard"}, {"comm_hook", "powersgd:2"}};
  expect_error_at(d, "/parallelism/comm_hook", "PowerSGD with FSDP");
  d["parallelism"] = {{"strategy", "fsdp_full_shard"}, {"comm_hook", "bf16"}};
  EXPECT_NO_THROW(parse_scenario(d, "ok.json"));
  d = base_doc();
  d["cluster"]["gpus"] = 4;
  d["parallelism"] = {{"strategy", "fsdp_hybrid"}};
  expect_error_at(d, "/cluster/gpus_per_node", "hybrid on half a node");
  d["cluster"]["gpus"] = 16;
  EXPECT_NO_THROW(parse_scenario(d, "ok.json"));
  d = base_doc();
  d["parallelism"] = {{"reduce_bucket_size", 10}};
  expect_error_at(d, "/parallelism/reduce_bucket_size", "a bucket of 10 elements");
  d = base_doc();
  d["plan"] = {{"strategy", {"ddp", "zero1"}}, {"comm_hook", {"topk:0.1"}}};
  expect_error_at(d, "/plan/strategy/1", "a sharded candidate beside a top-k hook");
}

TEST(ScenarioTest, ImpossibleCombinationsAreRejected) {
  json d = base_doc();
  d["cluster"]["gpus"] = 12;  // above one node of 8 but not a multiple
  expect_error_at(d, "/cluster/gpus", "not a multiple of gpus_per_node");
  d = base_doc();
  d["cluster"]["gpus"] = 5;  // part of one node is fine
  EXPECT_NO_THROW(parse_scenario(d, "ok.json"));
  d = base_doc();
  d["training"]["per_gpu_batch"] = 0;
  expect_error_at(d, "/training/per_gpu_batch", "batch 0");
  d = base_doc();
  d["parallelism"]["bucket_cap_mb"] = 0;
  expect_error_at(d, "/parallelism/bucket_cap_mb", "cap 0");
  d = base_doc();
  d["parallelism"]["bucket_cap_mb"] = 1e-9;  // rounds to 0 bytes
  expect_error_at(d, "/parallelism/bucket_cap_mb", "cap under one byte");
  d = base_doc();
  d["model"]["preset"] = "gpt2-xl";  // two model forms
  expect_error_at(d, "/model", "two model forms");
  d = base_doc();
  d["model"]["seq_len"] = 128;  // an MLP has no sequence
  expect_error_at(d, "/model/seq_len", "seq_len on an MLP");
  d = base_doc();
  d["training"]["grad_reduce_dtype"] = "bf16";
  d["parallelism"]["comm_hook"] = "fp16";
  expect_error_at(d, "/training/grad_reduce_dtype", "two wire dtypes");
  d = base_doc();
  d["hardware"] = {{"preset", "dgx-1"}};
  d["training"]["precision"] = "bf16";  // V100 has no bf16
  expect_error_at(d, "/training/precision", "bf16 on V100");
  d = base_doc();
  d["parallelism"]["algorithm"] = "nvls";  // A100's NVSwitch cannot reduce
  expect_error_at(d, "/parallelism/algorithm", "nvls on A100");
  d = base_doc();
  d["model"] = {{"hf_config", "no/such/config.json"}};
  expect_error_at(d, "/model/hf_config", "missing file");
  d = base_doc();
  d["hardware"]["preset"] = "dgx-x999";
  expect_error_at(d, "/hardware/preset", "unknown system preset");
}

TEST(ScenarioTest, UnknownKeysGetADidYouMean) {
  json d = base_doc();
  d["training"]["per_gpu_bach"] = 8;
  try {
    parse_scenario(d, "typo.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/training/per_gpu_bach");
    EXPECT_NE(std::string(e.what()).find("did you mean 'per_gpu_batch'"), std::string::npos)
        << e.what();
  }
}

TEST(ScenarioTest, SyntaxErrorsAndMissingFilesNameTheFile) {
  const auto dir = std::filesystem::temp_directory_path() / "ddpsim_scenario_test";
  std::filesystem::create_directories(dir);
  const auto bad = (dir / "bad.json").string();
  std::ofstream(bad) << "{\"name\": NaN}";
  try {
    load_scenario(bad);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("valid JSON"), std::string::npos);
  }
  EXPECT_THROW(load_scenario((dir / "missing.json").string()), InputError);
}

TEST(ScenarioTest, FilesAreResolvedRelativeToTheScenario) {
  const auto dir = std::filesystem::temp_directory_path() / "ddpsim_scenario_rel" / "sub";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2,
      "n_head": 4, "n_positions": 128, "vocab_size": 1000})";
  json d = base_doc();
  d["model"] = {{"hf_config", "sub/config.json"}, {"seq_len", 64}};
  std::ofstream(dir.parent_path() / "s.json") << d.dump();
  const Scenario s = load_scenario((dir.parent_path() / "s.json").string());
  EXPECT_EQ(s.workload->seq_len, 64);
  EXPECT_GT(s.workload->param_count(), 0);
}

TEST(ScenarioTest, SweepIsACartesianProductLastAxisFastest) {
  json d = base_doc();
  d["sweep"] =
      json::parse(R"({"cluster.gpus": [8, 16], "parallelism.bucket_cap_mb": [1, 25, 100]})");
  const Scenario s = parse_scenario(d, "sw.json");
  const auto points = expand_sweep(s);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0].cluster.gpus, 8);
  EXPECT_DOUBLE_EQ(points[0].parallelism.bucket_cap_mb, 1);
  EXPECT_FALSE(points[0].parallelism.bucket_cap_defaulted);
  EXPECT_DOUBLE_EQ(points[2].parallelism.bucket_cap_mb, 100);
  EXPECT_EQ(points[3].cluster.gpus, 16);
  EXPECT_EQ(points[4].point,
            json::parse(R"({"cluster.gpus": 16, "parallelism.bucket_cap_mb": 25})"));
  // The workload is shared across points that do not touch the model.
  EXPECT_EQ(points[0].workload.get(), points[5].workload.get());
}

TEST(ScenarioTest, SweepPointsAreTheDocumentWithoutItsSweepAndTheirOwnHardware) {
  // Each point is built from the document less its sweep (copying the sweep's values into every
  // point made a 10,000-value axis quadratic), and the hardware section is resolved once when no
  // axis touches it; what the cluster section sets on the hardware (gpus_per_node) stays per
  // point, and a hardware axis still resolves each point's own hardware.
  json d = base_doc();
  d["cluster"]["gpus"] = 16;
  d["sweep"] = json::parse(R"({"cluster.gpus_per_node": [4, 8]})");
  const Scenario s = parse_scenario(d, "sw.json");
  const auto points = expand_sweep(s);
  ASSERT_EQ(points.size(), 2u);
  for (const Scenario& p : points) {
    EXPECT_FALSE(p.doc.contains("sweep"));
    EXPECT_TRUE(p.sweep.empty());
    EXPECT_EQ(p.hardware.gpus_per_node, p.cluster.gpus_per_node);
  }
  EXPECT_EQ(points[0].hardware.gpus_per_node, 4);
  EXPECT_EQ(points[1].hardware.gpus_per_node, 8);
  EXPECT_EQ(points[0].hardware.name, s.hardware.name);
  d["sweep"] = json::parse(R"({"hardware.inter_node.bandwidth_gbps": [100, 400]})");
  const auto hw = expand_sweep(parse_scenario(d, "sw.json"));
  ASSERT_EQ(hw.size(), 2u);
  EXPECT_DOUBLE_EQ(hw[1].hardware.inter_node.bandwidth, 4.0 * hw[0].hardware.inter_node.bandwidth);
}

TEST(ScenarioTest, InvalidSweepValuesNameTheirPointer) {
  json d = base_doc();
  d["sweep"] = json::parse(R"({"cluster.gpus": [8, "16"]})");
  expect_error_at(d, "/sweep/cluster.gpus/1", "wrong type in a sweep");
  d["sweep"] = json::parse(R"({"cluster.gpus": [8, 12]})");
  const Scenario s = parse_scenario(d, "case.json");
  try {
    expand_sweep(s);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/sweep/cluster.gpus/1") << e.what();
  }
  d["sweep"] = json::parse(R"({"cluster.gpu": [8]})");
  expect_error_at(d, "/sweep/cluster.gpu", "unknown sweep key");
  d["sweep"] = json::parse(R"({"training": [8]})");
  expect_error_at(d, "/sweep/training", "sweep of an object");
}

// Every key: a wrong-type case and an out-of-range case, generated from the key table.
TEST(ScenarioTest, EveryKeyRejectsAWrongTypeAndAnOutOfRangeValue) {
  int wrong_type = 0, out_of_range = 0;
  std::map<std::string, KeySpec> no_range;
  for (const KeySpec& k : scenario_keys().keys) {
    if (k.pointer == "/$schema") continue;  // any string is a valid schema reference
    const std::string p = pointer_of(nullptr, k.pointer);
    // Wrong type.
    json bad;
    switch (k.type) {
      case KeyType::kInteger:
      case KeyType::kNumber:
        bad = "7";
        break;
      case KeyType::kString:
        bad = 7;
        break;
      case KeyType::kBoolean:
      case KeyType::kBooleanOrInteger:
      case KeyType::kBooleanOrObject:
        bad = "yes";
        break;
      case KeyType::kObject:
        bad = 7;
        break;
      case KeyType::kStringOrInteger:
        bad = 2.5;
        break;
      case KeyType::kArray:
        bad = json::object({{"a", 1}});
        break;
    }
    json d = base_doc();
    d[json::json_pointer(p)] = bad;
    expect_error_at(d, p, "wrong type for " + k.pointer);
    ++wrong_type;
    // Out of range.
    json oor;
    bool has = true;
    if (k.type == KeyType::kBooleanOrInteger || k.type == KeyType::kStringOrInteger) {
      oor = static_cast<std::int64_t>(*k.minimum) - 1;
    } else if ((k.type == KeyType::kInteger || k.type == KeyType::kNumber) && k.minimum) {
      oor = k.exclusive_minimum ? json(*k.minimum) : json(*k.minimum - 1);
      if (k.type == KeyType::kInteger) oor = static_cast<std::int64_t>(*k.minimum) - 1;
    } else if ((k.type == KeyType::kInteger || k.type == KeyType::kNumber) && k.maximum) {
      oor = *k.maximum * 2 + 1;
    } else if (k.type == KeyType::kString && !k.allowed.empty()) {
      oor = "no-such-value";
    } else if (k.type == KeyType::kString && !k.pattern.empty()) {
      oor = "!!";
    } else if (k.type == KeyType::kArray && k.minimum && *k.minimum > 0) {
      oor = json::array();
    } else if (k.type == KeyType::kString &&
               (k.pointer.ends_with("/file") || k.pointer.ends_with("/hf_config"))) {
      oor = "does/not/exist.json";
    } else {
      has = false;
    }
    if (!has) {
      no_range.emplace(k.pointer, k);
      continue;
    }
    d = base_doc();
    if (k.pointer.rfind("/model/", 0) == 0 && k.pointer != "/model/seq_len") {
      d["model"] = json::object();  // the case's own form is the only one
      if (k.pointer.rfind("/model/layers/*/", 0) == 0) {
        d["model"]["layers"] =
            json::array({{{"name", "x"}, {"params", 1}, {"fwd_flops_per_sample", 1}}});
      }
      if (k.pointer.rfind("/model/mlp/", 0) == 0) d["model"]["mlp"] = {{"widths", {4, 4}}};
    }
    if (k.pointer == "/model/seq_len") d["model"] = {{"preset", "gpt2-xl"}};
    d[json::json_pointer(p)] = oor;
    expect_error_at(d, p, "out of range for " + k.pointer);
    ++out_of_range;
  }
  // Keys without a range: free text, booleans, and objects. Listed so that a key which should
  // have a range cannot lose it silently.
  for (const auto& [k, spec_value] : no_range) {
    const KeySpec* spec = &spec_value;
    EXPECT_TRUE(
        spec->type == KeyType::kBoolean || spec->type == KeyType::kObject ||
        spec->type == KeyType::kBooleanOrObject ||
        (spec->type == KeyType::kString && spec->allowed.empty() && spec->pattern.empty()) ||
        spec->type == KeyType::kArray)
        << k;
  }
  RecordProperty("wrong_type_cases", wrong_type);
  RecordProperty("out_of_range_cases", out_of_range);
  EXPECT_GT(wrong_type, 100);
  EXPECT_GT(out_of_range, 60);
}

TEST(ScenarioTest, SchemaAndMarkdownCoverEveryKey) {
  const json schema = to_json_schema(scenario_keys());
  EXPECT_EQ(schema["properties"]["training"]["properties"]["precision"]["default"], "fp32");
  EXPECT_FALSE(schema["additionalProperties"].get<bool>());
  const std::string md = to_markdown(scenario_keys());
  for (const KeySpec& k : scenario_keys().keys) {
    EXPECT_NE(md.find(k.pointer), std::string::npos) << k.pointer;
  }
}

}  // namespace
}  // namespace ddpsim::model
