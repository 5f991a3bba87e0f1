// Scenario loading: presets, overrides, files by path, sweeps, and strict validation. Every key
// of the schema gets a wrong-type case and (where a range exists) an out-of-range case,
// generated from the key table so that a new key cannot be added without one.
#include "model/scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
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
  EXPECT_FALSE(s.training.activation_checkpointing);
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
  EXPECT_TRUE(s.training.activation_checkpointing);
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
        bad = "yes";
        break;
      case KeyType::kObject:
        bad = 7;
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
    if (k.type == KeyType::kBooleanOrInteger) {
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
        (spec->type == KeyType::kString && spec->allowed.empty() && spec->pattern.empty()) ||
        spec->type == KeyType::kArray)
        << k;
  }
  RecordProperty("wrong_type_cases", wrong_type);
  RecordProperty("out_of_range_cases", out_of_range);
  EXPECT_GT(wrong_type, 100);
  EXPECT_GT(out_of_range, 60);
}

// Every key whose row in scenario_keys() has a default (the value `ddpsim schema` and
// docs/scenario-keys.md publish): parsed from a scenario that leaves the key out, the typed
// value is that default. The table below maps each such key to the field it is parsed into; a
// key given a default without an entry here, or an entry whose key has no default, fails.
TEST(ScenarioTest, EveryDocumentedDefaultIsTheParsedValue) {
  // Explicit hardware (a preset sets some of the defaulted keys), an MLP, an lr block without
  // its optional keys, and no optional key anywhere else.
  const json mlp_doc = json::parse(R"({
    "model": {"mlp": {"widths": [4, 8, 2]}},
    "hardware": {"gpu": {"memory_gib": 80, "memory_bandwidth_gbytes_per_s": 2000,
                         "peak_tflops": {"fp32": 19.5}, "efficiency": {"fp32": 0.7}},
                 "gpus_per_node": 8,
                 "intra_node": {"bandwidth_gbytes_per_s": 300, "latency_us": 1},
                 "inter_node": {"bandwidth_gbps": 200, "latency_us": 2}},
    "cluster": {"gpus": 8},
    "training": {"per_gpu_batch": 8, "lr": {"base": 0.1, "base_batch": 256}}
  })");
  json layers_doc = mlp_doc;
  layers_doc["model"] = json::parse(R"({"layers": [{"name": "a", "params": 10,
                                                    "fwd_flops_per_sample": 20}]})");
  const Scenario mlp = parse_scenario(mlp_doc, "defaults.json");
  const Scenario layers = parse_scenario(layers_doc, "defaults.json");
  json gpt_doc = mlp_doc;
  gpt_doc["model"] = json::parse(R"({"preset": "gpt2-xl", "seq_len": 128})");
  const Scenario gpt = parse_scenario(gpt_doc, "defaults.json");
  json rel_doc = mlp_doc;  // a reliability section with only its required keys
  rel_doc["reliability"] =
      json::parse(R"({"restart_minutes": 5, "checkpoint": {"write_gbytes_per_s_per_node": 1}})");
  const Scenario rel = parse_scenario(rel_doc, "defaults.json");
  json f2_doc = mlp_doc;  // strategy fsdp2 with an empty knob section
  f2_doc["parallelism"] = json::parse(
      R"({"strategy": "fsdp2", "fsdp2": {"cpu_offload": {"host_memory_gbytes_per_s": 100}}})");
  const Scenario f2 = parse_scenario(f2_doc, "defaults.json");

  using Get = std::function<json(const Scenario&)>;
  const auto same = [](const json& d) { return d; };
  const auto us = [](const json& d) { return json(us_to_s(d.get<double>())); };
  struct Case {
    Get parsed;  // empty: documentation only, not parsed into a field
    std::function<json(const json&)> expected;  // the default in the parsed field's unit
    const Scenario* from;
  };
  const auto tuning = [&](const CollectiveTuning& (*of)(const Scenario&), const char* field) {
    return Get([of, field](const Scenario& s) {
      const CollectiveTuning& t = of(s);
      const std::string f = field;
      if (f == "ring_efficiency") return json(t.ring_efficiency);
      if (f == "tree_efficiency") return json(t.tree_efficiency);
      if (f == "nvls_efficiency") return json(t.nvls_efficiency);
      if (f == "latency_us") return json(t.latency);
      return json(t.nvls_latency);
    });
  };
  const auto intra = [](const Scenario& s) -> const CollectiveTuning& {
    return s.hardware.intra_tuning;
  };
  const auto inter = [](const Scenario& s) -> const CollectiveTuning& {
    return s.hardware.inter_tuning;
  };
  std::map<std::string, Case> cases = {
      {"/name", {[](const Scenario& s) { return json(s.name); }, same, &mlp}},
      {"/description", {{}, same, &mlp}},
      {"/model/mlp/bias",
       {[](const Scenario& s) { return json(s.workload->tensors.size() == 4); }, same, &mlp}},
      {"/model/mlp/activation",
       {[](const Scenario& s) {
          const auto& ew = s.workload->layers[0].elementwise;  // "fc0.<activation>"
          return json(ew.empty() ? std::string("none") : ew[0].name.substr(4));
        },
        same, &mlp}},
      {"/model/layers/*/activation_bytes_per_sample",
       {[](const Scenario& s) { return json(s.workload->layers[0].activation_bytes_per_sample); },
        same, &layers}},
      {"/model/attention",
       {[](const Scenario& s) {
          return json(s.workload->attention ? model::attention_impl_name(*s.workload->attention)
                                            : "none");
        },
        same, &gpt}},
      {"/hardware/gpu/sm_count",
       {[](const Scenario& s) { return json(s.hardware.gpu.sm_count); }, same, &mlp}},
      {"/hardware/gpu/memory_efficiency",
       {[](const Scenario& s) { return json(s.hardware.gpu.memory_efficiency); }, same, &mlp}},
      {"/hardware/gpu/kernel_floor_us",
       {[](const Scenario& s) { return json(s.hardware.gpu.kernel_floor_s); }, us, &mlp}},
      {"/hardware/gpu/compute_capability",
       {[](const Scenario& s) { return json(s.hardware.gpu.compute_capability); }, same, &mlp}},
      {"/hardware/inter_node/reported_latency_us",
       {[](const Scenario& s) { return json(s.hardware.inter_node.reported_latency); }, us, &mlp}},
      {"/hardware/collectives/simple_slice_us",
       {[](const Scenario& s) { return json(s.hardware.nccl_kernel.simple_slice); }, us, &mlp}},
      {"/hardware/collectives/ll128_iteration_us",
       {[](const Scenario& s) { return json(s.hardware.nccl_kernel.ll128_iteration); }, us, &mlp}},
      {"/hardware/collectives/nvls_chunk_us",
       {[](const Scenario& s) { return json(s.hardware.nccl_kernel.nvls_chunk); }, us, &mlp}},
      {"/hardware/collectives/host_launch_us",
       {[](const Scenario& s) { return json(s.hardware.nccl_kernel.host_launch); }, us, &mlp}},
      {"/hardware/collectives/gpus_per_process",
       {[](const Scenario& s) { return json(s.hardware.nccl_kernel.gpus_per_process); }, same,
        &mlp}},
      {"/hardware/collectives/cuda_graphs",
       {[](const Scenario& s) { return json(s.hardware.nccl_kernel.cuda_graphs); }, same, &mlp}},
      {"/hardware/collectives/nccl_version",
       {[](const Scenario& s) { return json(s.hardware.nccl_kernel.nccl_version); }, same, &mlp}},
      {"/hardware/collectives/model",
       {[](const Scenario& s) {
          return json(s.hardware.collective_model == model::CollectiveModel::kAlphaBeta
                          ? "alpha_beta"
                          : "nccl");
        },
        same, &mlp}},
      {"/hardware/intra_node_switched",
       {[](const Scenario& s) { return json(s.hardware.intra_node_switched); }, same, &mlp}},
      {"/hardware/network/oversubscription",
       {[](const Scenario& s) { return json(s.hardware.oversubscription); }, same, &mlp}},
      {"/hardware/network/nodes_per_leaf",
       {[](const Scenario& s) { return json(s.hardware.nodes_per_leaf); }, same, &mlp}},
      {"/training/grad_accumulation",
       {[](const Scenario& s) { return json(s.training.grad_accumulation); }, same, &mlp}},
      {"/training/precision",
       {[](const Scenario& s) { return json(precision_name(s.training.precision)); }, same, &mlp}},
      {"/training/optimizer",
       {[](const Scenario& s) { return json(optimizer_name(s.training.optimizer)); }, same, &mlp}},
      {"/training/optimizer_impl",
       {[](const Scenario& s) { return json(optimizer_impl_name(s.training.optimizer_impl)); },
        same, &mlp}},
      {"/training/activation_checkpointing",
       {[](const Scenario& s) { return json(s.training.activation_checkpointing); }, same, &mlp}},
      {"/training/allow_tf32_matmul",
       {[](const Scenario& s) { return json(s.training.allow_tf32_matmul); }, same, &mlp}},
      {"/training/allow_tf32_cudnn",
       {[](const Scenario& s) { return json(s.training.allow_tf32_cudnn); }, same, &mlp}},
      {"/training/channels_last",
       {[](const Scenario& s) { return json(s.training.channels_last); }, same, &mlp}},
      {"/training/lr/scaling",
       {[](const Scenario& s) {
          const LrScaling l = s.training.lr->scaling;
          return json(l == LrScaling::kLinear ? "linear" : l == LrScaling::kSqrt ? "sqrt" : "none");
        },
        same, &mlp}},
      {"/training/lr/warmup_steps",
       {[](const Scenario& s) { return json(s.training.lr->warmup_steps); }, same, &mlp}},
      {"/parallelism/strategy",
       {[](const Scenario& s) { return json(strategy_name(s.parallelism.strategy)); }, same, &mlp}},
      {"/parallelism/bucket_cap_mb",
       {[](const Scenario& s) { return json(s.parallelism.bucket_cap_mb); }, same, &mlp}},
      {"/parallelism/overlap",
       {[](const Scenario& s) { return json(s.parallelism.overlap); }, same, &mlp}},
      {"/parallelism/comm_hook",
       {[](const Scenario& s) {
          return json(s.parallelism.comm_hook.kind == CommHook::Kind::kNone
                          ? s.parallelism.comm_hook.text
                          : "not none");
        },
        same, &mlp}},
      {"/parallelism/algorithm",
       {[](const Scenario& s) { return json(algorithm_name(s.parallelism.algorithm)); }, same,
        &mlp}},
      {"/parallelism/broadcast_buffers",
       {[](const Scenario& s) { return json(s.parallelism.broadcast_buffers); }, same, &mlp}},
      {"/parallelism/find_unused_parameters",
       {[](const Scenario& s) { return json(s.parallelism.find_unused_parameters); }, same, &mlp}},
      {"/parallelism/gradient_as_bucket_view",
       {[](const Scenario& s) { return json(s.parallelism.gradient_as_bucket_view); }, same, &mlp}},
      {"/parallelism/static_graph",
       {[](const Scenario& s) { return json(s.parallelism.static_graph); }, same, &mlp}},
      {"/parallelism/reduce_bucket_size",
       {[](const Scenario& s) { return json(s.parallelism.reduce_bucket_elements); }, same, &mlp}},
      {"/parallelism/allgather_bucket_size",
       {[](const Scenario& s) { return json(s.parallelism.allgather_bucket_elements); }, same,
        &mlp}},
      {"/parallelism/use_multi_rank_bucket_allreduce",
       {[](const Scenario& s) { return json(s.parallelism.use_multi_rank_bucket_allreduce); }, same,
        &mlp}},
      {"/parallelism/fsdp2/units",
       {[](const Scenario& s) { return json(fsdp2_units_name(s.parallelism.fsdp2.units)); }, same,
        &f2}},
      {"/parallelism/fsdp2/reshard_after_forward",
       {[](const Scenario& s) {
          EXPECT_EQ(s.parallelism.fsdp2.reshard_after_forward_group, 0);
          return json(s.parallelism.fsdp2.reshard_after_forward);
        },
        same, &f2}},
      {"/parallelism/fsdp2/cpu_offload/pin_memory",
       {[](const Scenario& s) { return json(s.parallelism.fsdp2.cpu_offload->pin_memory); }, same,
        &f2}},
      {"/parallelism/fsdp2/forward_prefetch",
       {[](const Scenario& s) { return json(s.parallelism.fsdp2.forward_prefetch); }, same, &f2}},
      {"/parallelism/fsdp2/backward_prefetch",
       {[](const Scenario& s) { return json(s.parallelism.fsdp2.backward_prefetch); }, same, &f2}},
      {"/parallelism/fsdp2/requires_gradient_sync",
       {[](const Scenario& s) { return json(s.parallelism.fsdp2.requires_gradient_sync); }, same,
        &f2}},
      {"/parallelism/fsdp2/requires_all_reduce",
       {[](const Scenario& s) { return json(s.parallelism.fsdp2.requires_all_reduce); }, same,
        &f2}},
      {"/parallelism/fsdp_prefetch",
       {[](const Scenario& s) { return json(fsdp_prefetch_name(s.parallelism.fsdp_prefetch)); },
        same, &mlp}},
      {"/simulation/engine",
       {[](const Scenario& s) {
          return json(s.simulation.engine == Engine::kEvent ? "event" : "analytic");
        },
        same, &mlp}},
      {"/simulation/steps",
       {[](const Scenario& s) { return json(s.simulation.steps); }, same, &mlp}},
      {"/simulation/jitter_cv",
       {[](const Scenario& s) { return json(s.simulation.jitter_cv); }, same, &mlp}},
      {"/simulation/seed", {[](const Scenario& s) { return json(s.simulation.seed); }, same, &mlp}},
      {"/simulation/jitter_distribution",
       {[](const Scenario& s) {
          return json(s.simulation.jitter_distribution == JitterDistribution::kLogNormal
                          ? "lognormal"
                          : "normal");
        },
        same, &mlp}},
      {"/simulation/straggler_rank",
       {[](const Scenario& s) { return json(s.simulation.straggler_rank); }, same, &mlp}},
      {"/simulation/straggler_slowdown",
       {[](const Scenario& s) { return json(s.simulation.straggler_slowdown); }, same, &mlp}},
      {"/simulation/interference",
       {[](const Scenario& s) { return json(s.simulation.interference); }, same, &mlp}},
      {"/simulation/network",
       {[](const Scenario& s) { return json(s.simulation.network_flow ? "flow" : "closed_form"); },
        same, &mlp}},
      {"/simulation/background_traffic",
       {[](const Scenario& s) { return json(s.simulation.background_traffic); }, same, &mlp}},
      {"/simulation/concurrent_jobs",
       {[](const Scenario& s) { return json(s.simulation.concurrent_jobs); }, same, &mlp}},
      {"/simulation/local_sgd_period",
       {[](const Scenario& s) { return json(s.simulation.local_sgd_period); }, same, &mlp}},
      {"/simulation/staleness",
       {[](const Scenario& s) { return json(s.simulation.staleness); }, same, &mlp}},
      {"/simulation/trace_ranks",
       {[](const Scenario& s) { return json(s.simulation.trace_ranks); }, same, &mlp}},
      {"/plan/memory_margin",
       {[](const Scenario& s) { return json(s.plan.memory_margin); }, same, &mlp}},
      {"/reliability/checkpoint/async",
       {[](const Scenario& s) { return json(s.reliability->checkpoint.async); }, same, &rel}},
      {"/reliability/checkpoint/format",
       {[](const Scenario& s) {
          return json(checkpoint_format_name(s.reliability->checkpoint.format));
        },
        same, &rel}},
      {"/plan/objective",
       {[](const Scenario& s) { return json(objective_name(s.plan.objective)); }, same, &mlp}},
  };
  for (const char* field :
       {"ring_efficiency", "tree_efficiency", "nvls_efficiency", "latency_us", "nvls_latency_us"}) {
    const bool in_us = std::string(field).ends_with("_us");
    const std::string f = field;
    cases["/hardware/collectives/intra_node/" + f] = {tuning(intra, field), in_us ? us : same,
                                                      &mlp};
    cases["/hardware/collectives/inter_node/" + f] = {tuning(inter, field), in_us ? us : same,
                                                      &mlp};
  }

  int checked = 0;
  std::set<std::string> defaulted;
  for (const KeySpec& k : scenario_keys().keys) {
    if (k.default_value.is_null()) continue;
    defaulted.insert(k.pointer);
    const auto it = cases.find(k.pointer);
    if (it == cases.end()) {
      ADD_FAILURE() << k.pointer << " has a default (" << k.default_value.dump()
                    << ") but no case here naming the field it is parsed into";
      continue;
    }
    const Case& c = it->second;
    std::string concrete = k.pointer;
    for (std::size_t pos; (pos = concrete.find("/*/")) != std::string::npos;) {
      concrete.replace(pos, 3, "/0/");
    }
    EXPECT_FALSE((c.from == &mlp ? mlp_doc : layers_doc).contains(json::json_pointer(concrete)))
        << k.pointer << " is in the base document";
    if (!c.parsed) continue;
    EXPECT_EQ(c.parsed(*c.from), c.expected(k.default_value)) << k.pointer;
    ++checked;
  }
  for (const auto& [pointer, c] : cases) {
    EXPECT_EQ(defaulted.count(pointer), 1u) << pointer << " has no default in the key table";
  }
  EXPECT_EQ(checked, static_cast<int>(defaulted.size()) - 1);  // all but /description
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
