#include "model/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include "model/builders.hpp"
#include "model/error.hpp"
#include "model/paths.hpp"
#include "model/units.hpp"
#include "model/zoo.hpp"

namespace ddpsim::model {

using nlohmann::json;

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kAmpBf16:
      return "amp_bf16";
    case Precision::kAmpFp16:
      return "amp_fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
  }
  DDPSIM_ASSERT(false, "unknown precision");
}

const char* optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kMomentum:
      return "momentum";
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kAdamW:
      return "adamw";
  }
  DDPSIM_ASSERT(false, "unknown optimizer");
}

const char* strategy_name(Strategy s) {
  switch (s) {
    case Strategy::kDdp:
      return "ddp";
    case Strategy::kZero1:
      return "zero1";
    case Strategy::kZero2:
      return "zero2";
    case Strategy::kZero3:
      return "zero3";
    case Strategy::kFsdpFullShard:
      return "fsdp_full_shard";
    case Strategy::kFsdpShardGradOp:
      return "fsdp_shard_grad_op";
    case Strategy::kFsdpHybrid:
      return "fsdp_hybrid";
  }
  DDPSIM_ASSERT(false, "unknown strategy");
}

const char* algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::kAuto:
      return "auto";
    case CollectiveAlgorithm::kRing:
      return "ring";
    case CollectiveAlgorithm::kTree:
      return "tree";
    case CollectiveAlgorithm::kHierarchical:
      return "hierarchical";
    case CollectiveAlgorithm::kNvls:
      return "nvls";
  }
  DDPSIM_ASSERT(false, "unknown algorithm");
}

DType compute_dtype(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return DType::kFp32;
    case Precision::kAmpBf16:
    case Precision::kBf16:
      return DType::kBf16;
    case Precision::kAmpFp16:
    case Precision::kFp16:
      return DType::kFp16;
  }
  DDPSIM_ASSERT(false, "unknown precision");
}

DType grad_dtype(Precision p) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kAmpBf16:
    case Precision::kAmpFp16:
      return DType::kFp32;
    case Precision::kBf16:
      return DType::kBf16;
    case Precision::kFp16:
      return DType::kFp16;
  }
  DDPSIM_ASSERT(false, "unknown precision");
}

namespace {

// ---- the key table ---------------------------------------------------------------------------

KeySpec obj(std::string p, std::string help, bool required = false) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kObject;
  k.help = std::move(help);
  k.required = required;
  return k;
}
KeySpec integer(std::string p, std::string unit, json def, double min, std::string help,
                std::optional<double> max = std::nullopt) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kInteger;
  k.unit = std::move(unit);
  k.default_value = std::move(def);
  k.minimum = min;
  k.maximum = max;
  k.help = std::move(help);
  return k;
}
KeySpec number(std::string p, std::string unit, json def, double min, bool exclusive,
               std::string help, std::optional<double> max = std::nullopt) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kNumber;
  k.unit = std::move(unit);
  k.default_value = std::move(def);
  k.minimum = min;
  k.exclusive_minimum = exclusive;
  k.maximum = max;
  k.help = std::move(help);
  return k;
}
KeySpec str(std::string p, json def, std::vector<std::string> allowed, std::string help) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kString;
  k.default_value = std::move(def);
  k.allowed = std::move(allowed);
  k.help = std::move(help);
  return k;
}
KeySpec pattern_str(std::string p, json def, std::string pattern, std::string help) {
  KeySpec k = str(std::move(p), std::move(def), {}, std::move(help));
  k.pattern = std::move(pattern);
  return k;
}
KeySpec boolean(std::string p, bool def, std::string help) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kBoolean;
  k.default_value = def;
  k.help = std::move(help);
  return k;
}
KeySpec array(std::string p, double min_items, std::string help) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = KeyType::kArray;
  k.minimum = min_items;
  k.help = std::move(help);
  return k;
}
KeySpec required(KeySpec k) {
  k.required = true;
  return k;
}

const std::vector<std::string> kSystemPresets = {"dgx-1", "dgx-a100", "dgx-h100", "hgx-h200",
                                                 "this-machine"};
const std::vector<std::string> kGpuPresets = {"v100-sxm2", "a100-sxm-80gb", "h100-sxm", "h200-sxm"};

// Keys shared by every link description (intra-node fabric, PCIe, NIC).
void add_link_keys(std::vector<KeySpec>& t, const std::string& p, bool nic) {
  t.push_back(pattern_str(p + "/preset", nullptr, "[a-z0-9][a-z0-9.-]*",
                          "link preset in scenarios/hardware/links/ (e.g. nvlink4, pcie5-x16, "
                          "ib-ndr-400); keys beside it override it"));
  t.push_back(str(p + "/name", nullptr, {}, "name of the link class"));
  t.push_back(str(p + "/kind", nullptr, {"intra_node", "pcie", "nic"}, "what the link is"));
  t.push_back(str(p + "/description", nullptr, {}, "free text"));
  t.push_back(str(p + "/source", nullptr, {}, "datasheet or measurement the rate comes from"));
  if (nic) {
    t.push_back(number(p + "/bandwidth_gbps", "Gbit/s", nullptr, 0, true,
                       "rate of one NIC in one direction (10^9 bit/s)"));
    t.push_back(integer(p + "/nics_per_node", "NICs", nullptr, 1,
                        "NICs per node used by the collectives (multi-rail)", 1024));
  } else {
    t.push_back(number(p + "/bandwidth_gbytes_per_s", "GB/s", nullptr, 0, true,
                       "rate per GPU in one direction (10^9 byte/s); vendor bidirectional "
                       "figures are halved"));
  }
  t.push_back(number(p + "/latency_us", "us", nullptr, 0, false,
                     "latency per hop as the collective library sees it"));
}

void add_tuning_keys(std::vector<KeySpec>& t, const std::string& p, double latency_default) {
  t.push_back(obj(p,
                  "collective-library behaviour on this link class: t = steps*alpha + "
                  "bytes/(efficiency*bandwidth)"));
  t.push_back(number(p + "/ring_efficiency", "", 0.9, 0, true,
                     "fraction of the ring bus bandwidth a real library reaches", 1.0));
  t.push_back(number(p + "/tree_efficiency", "", 0.85, 0, true,
                     "fraction of the bandwidth double binary trees reach", 1.0));
  t.push_back(number(p + "/nvls_efficiency", "", 0.0, 0, false,
                     "fraction of the per-GPU fabric rate NVLink SHARP reaches (0: none)", 1.0));
  t.push_back(number(p + "/latency_us", "us", latency_default, 0, false,
                     "alpha: latency per algorithm step (defaults: NCCL 2.30 tuning.cc Simple "
                     "protocol, NVLink 3.4 us, network 14 us)"));
  t.push_back(number(p + "/nvls_latency_us", "us", 25.0, 0, false,
                     "latency of a whole NVLS all-reduce (NCCL 2.30 tuning.cc: 25 us)"));
}

void add_hardware_keys(std::vector<KeySpec>& t, const std::string& h) {
  t.push_back(str(h + "/preset", nullptr, kSystemPresets,
                  "system preset (scenarios/hardware/<name>.json); keys beside it override it"));
  t.push_back(
      str(h + "/file", nullptr, {}, "a hardware file in the preset format, relative to this file"));
  t.push_back(
      str(h + "/profile", nullptr, {}, "a calibration profile JSON written by `ddpsim calibrate`"));
  t.push_back(str(h + "/name", nullptr, {}, "name of the system"));
  t.push_back(str(h + "/description", nullptr, {}, "free text"));
  t.push_back(str(h + "/source", nullptr, {}, "where the numbers come from"));
  t.push_back(obj(h + "/gpu", "the accelerator"));
  t.push_back(str(h + "/gpu/preset", nullptr, kGpuPresets,
                  "GPU preset (scenarios/hardware/gpus/<name>.json); keys beside it override it"));
  t.push_back(str(h + "/gpu/name", nullptr, {}, "GPU name"));
  t.push_back(str(h + "/gpu/description", nullptr, {}, "free text"));
  t.push_back(str(h + "/gpu/source", nullptr, {}, "datasheet"));
  t.push_back(number(h + "/gpu/memory_gib", "GiB", nullptr, 0, true, "HBM capacity"));
  t.push_back(number(h + "/gpu/memory_bandwidth_gbytes_per_s", "GB/s", nullptr, 0, true,
                     "HBM bandwidth (10^9 byte/s)"));
  t.push_back(number(h + "/gpu/memory_efficiency", "", 0.8, 0, true,
                     "achievable fraction of HBM bandwidth for streaming kernels", 1.0));
  t.push_back(obj(h + "/gpu/peak_tflops", "dense peak per compute dtype (no sparsity)"));
  t.push_back(obj(h + "/gpu/efficiency", "achievable fraction of peak for large GEMMs, per dtype"));
  for (const char* d : {"fp32", "fp16", "bf16", "fp8"}) {
    t.push_back(number(h + "/gpu/peak_tflops/" + d, "TFLOP/s", nullptr, 0, true,
                       std::string("dense ") + d + " peak"));
    t.push_back(number(h + "/gpu/efficiency/" + d, "", nullptr, 0, true,
                       std::string("achievable fraction of the ") + d + " peak", 1.0));
  }
  t.push_back(integer(h + "/gpus_per_node", "GPUs", nullptr, 1, "GPUs in one node", 1024));
  t.push_back(obj(h + "/intra_node", "per-GPU fabric inside a node (NVLink via NVSwitch, PCIe)"));
  add_link_keys(t, h + "/intra_node", false);
  t.push_back(boolean(h + "/intra_node_switched", true,
                      "the fabric is switched (NVSwitch) rather than a point-to-point mesh"));
  t.push_back(obj(h + "/pcie", "GPU-to-NIC path inside a node"));
  add_link_keys(t, h + "/pcie", false);
  t.push_back(obj(h + "/inter_node", "one NIC and how many each node has"));
  add_link_keys(t, h + "/inter_node", true);
  t.push_back(obj(h + "/network", "the fabric between nodes (a two-level fat tree)"));
  t.push_back(number(h + "/network/oversubscription", "", 1.0, 1, false,
                     "leaf-to-spine oversubscription (1: non-blocking)", 1024));
  t.push_back(
      integer(h + "/network/nodes_per_leaf", "nodes", 32, 1, "nodes under one leaf switch", 1e6));
  t.push_back(obj(h + "/collectives", "fitted collective-library constants"));
  add_tuning_keys(t, h + "/collectives/intra_node", 3.4);
  add_tuning_keys(t, h + "/collectives/inter_node", 14.0);
  t.push_back(array(h + "/collectives/fitted_from", 0,
                    "ids of the published rows (scenarios/data/published-measurements.json) "
                    "the constants were fitted to"));
  t.push_back(str(h + "/collectives/fitted_from/*", nullptr, {}, "row id"));
}

std::vector<KeySpec> build_scenario_keys() {
  std::vector<KeySpec> t;
  t.push_back(str("/name", "", {}, "a name for the scenario, shown in reports"));
  t.push_back(str("/description", "", {}, "free text"));
  t.push_back(pattern_str("/$schema", nullptr, ".*", "JSON Schema reference for editors"));

  t.push_back(
      obj("/model", "what is trained: exactly one of preset, file, hf_config, mlp, layers", true));
  t.push_back(str("/model/preset", nullptr, model_preset_names(),
                  "model zoo entry (scenarios/models/<name>.json)"));
  t.push_back(
      str("/model/file", nullptr, {}, "a model file in the zoo format, relative to this file"));
  t.push_back(
      str("/model/hf_config", nullptr, {},
          "a Hugging Face config.json (GPT-2, Llama, BERT families), relative to this file"));
  t.push_back(integer("/model/seq_len", "tokens", nullptr, 1,
                      "tokens per sample (default: the config's maximum positions)", 1 << 24));
  t.push_back(obj("/model/mlp", "a multilayer perceptron of nn.Linear layers"));
  {
    KeySpec w = array("/model/mlp/widths", 2, "input width, hidden widths..., output width");
    w.required = true;
    w.maximum = 100000;
    t.push_back(w);
  }
  t.push_back(integer("/model/mlp/widths/*", "features", nullptr, 1, "a layer width", 1 << 24));
  t.push_back(boolean("/model/mlp/bias", true, "nn.Linear bias"));
  t.push_back(str("/model/mlp/activation", "relu", {"relu", "gelu", "tanh", "none"},
                  "element-wise activation between linear layers"));
  {
    KeySpec l = array("/model/layers", 1, "explicit layers, each one parameter tensor");
    l.maximum = 1000000;
    t.push_back(l);
  }
  t.push_back(obj("/model/layers/*", "one layer"));
  t.push_back(required(str("/model/layers/*/name", nullptr, {}, "layer name")));
  t.push_back(required(integer("/model/layers/*/params", "parameters", nullptr, 0,
                               "trainable parameters of the layer", 1e13)));
  t.push_back(required(number("/model/layers/*/fwd_flops_per_sample", "FLOP", nullptr, 0, false,
                              "forward FLOPs per sample (backward is 2x)")));
  t.push_back(number("/model/layers/*/activation_bytes_per_sample", "bytes", 0, 0, false,
                     "activation bytes kept for backward per sample"));

  t.push_back(obj("/hardware", "the machines: preset, file, profile or explicit keys", true));
  add_hardware_keys(t, "/hardware");

  t.push_back(obj("/cluster", "how many GPUs", true));
  t.push_back(required(integer("/cluster/gpus", "GPUs", nullptr, 1,
                               "data-parallel GPUs; above gpus_per_node a multiple of it", 1e7)));
  t.push_back(integer("/cluster/gpus_per_node", "GPUs", nullptr, 1,
                      "GPUs per node (default: the hardware's)", 1024));

  t.push_back(obj("/training", "batch, precision, optimizer, learning rate and target", true));
  t.push_back(required(integer("/training/per_gpu_batch", "samples", nullptr, 1,
                               "micro-batch per GPU per forward/backward", 1e9)));
  t.push_back(integer("/training/grad_accumulation", "micro-batches", 1, 1,
                      "micro-batches per optimizer step (no_sync for all but the last)", 1e6));
  t.push_back(str("/training/precision", "fp32", {"fp32", "amp_bf16", "amp_fp16", "bf16", "fp16"},
                  "fp32; amp_* = autocast (fp32 params and grads); bf16/fp16 = half-precision "
                  "params and grads with fp32 master weights"));
  t.push_back(str("/training/optimizer", "adam", {"sgd", "momentum", "adam", "adamw"},
                  "optimizer (its state bytes per parameter follow from the precision)"));
  t.push_back(str("/training/grad_reduce_dtype", nullptr, {"fp32", "fp16", "bf16"},
                  "dtype of the gradients on the wire (default: the gradients' dtype)"));
  t.push_back(number("/training/single_gpu_step_s", "s", nullptr, 0, true,
                     "a measured 1-GPU step time at per_gpu_batch; replaces the FLOP estimate"));
  t.push_back(obj("/training/lr", "learning-rate scaling with the global batch"));
  t.push_back(
      required(number("/training/lr/base", "", nullptr, 0, true, "learning rate at base_batch")));
  t.push_back(required(integer("/training/lr/base_batch", "samples", nullptr, 1,
                               "global batch the base rate was tuned for", 1e12)));
  t.push_back(str("/training/lr/scaling", "linear", {"linear", "sqrt", "none"},
                  "linear (Goyal et al. 2017) or square-root scaling"));
  t.push_back(integer("/training/lr/warmup_steps", "steps", 0, 0, "gradual warmup steps", 1e12));
  t.push_back(obj("/training/target", "what 'trained' means"));
  t.push_back(obj("/training/target/critical_batch",
                  "McCandlish et al. 2018: S = S_min (1 + B_noise / B)"));
  t.push_back(required(number("/training/target/critical_batch/b_noise", "samples", nullptr, 0,
                              true, "gradient noise scale B_noise")));
  t.push_back(required(number("/training/target/critical_batch/s_min", "steps", nullptr, 0, true,
                              "steps needed at infinite batch")));

  t.push_back(obj("/parallelism", "data-parallel strategy and its knobs"));
  t.push_back(str(
      "/parallelism/strategy", "ddp",
      {"ddp", "zero1", "zero2", "zero3", "fsdp_full_shard", "fsdp_shard_grad_op", "fsdp_hybrid"},
      "data-parallel strategy"));
  t.push_back(number("/parallelism/bucket_cap_mb", "MiB", 25, 0, true,
                     "DDP bucket_cap_mb (MiB); leaving it out also enables the 1 MiB first bucket",
                     1e6));
  t.push_back(boolean("/parallelism/overlap", true,
                      "launch each bucket's all-reduce during backward (false: after it)"));
  t.push_back(
      pattern_str("/parallelism/comm_hook", "none",
                  "none|fp16|bf16|powersgd:[1-9][0-9]{0,3}|topk:(0?\\.[0-9]*[1-9][0-9]*|1(\\.0*)?)",
                  "DDP communication hook: none, fp16, bf16, powersgd:RANK, topk:FRACTION"));
  t.push_back(str("/parallelism/algorithm", "auto",
                  {"auto", "ring", "tree", "hierarchical", "nvls"},
                  "collective algorithm; auto picks the fastest like NCCL's tuner"));
  t.push_back(
      boolean("/parallelism/broadcast_buffers", true,
              "DDP broadcasts module buffers (BatchNorm statistics) from rank 0 every forward"));
  t.push_back(boolean("/parallelism/find_unused_parameters", false,
                      "DDP walks the autograd graph each step and keeps the initial buckets"));
  t.push_back(boolean("/parallelism/gradient_as_bucket_view", false,
                      "gradients are views into the buckets (no extra gradient copy in memory)"));
  t.push_back(boolean("/parallelism/static_graph", false, "DDP static_graph=True"));

  t.push_back(obj("/simulation", "which engine and how"));
  t.push_back(str("/simulation/engine", "analytic", {"analytic", "event"}, "prediction engine"));
  t.push_back(integer("/simulation/steps", "steps", 5, 1, "steps simulated in a row", 1e6));
  t.push_back(number("/simulation/jitter_cv", "", 0.0, 0, false,
                     "per-rank compute-time coefficient of variation", 10));
  t.push_back(integer("/simulation/seed", "", 1, 0, "random seed", 1.8e19));

  {
    KeySpec s = obj("/sweep",
                    "axes to sweep: {\"cluster.gpus\": [1, 8, 64]}; the Cartesian "
                    "product of all axes is predicted");
    t.push_back(s);
    KeySpec axis = array("/sweep/{}", 1, "values of one scenario key, written as a dotted path");
    axis.maximum = 100000;
    t.push_back(axis);
  }

  t.push_back(obj("/pricing", "what GPU time costs"));
  t.push_back(number("/pricing/gpu_hour_usd", "USD/GPU-hour", nullptr, 0, false,
                     "price of one GPU for one hour"));
  return t;
}

// Sub-tables for preset files: the rows under `prefix`, re-rooted.
KeyTable reroot(const KeyTable& t, const std::string& prefix, std::string name) {
  KeyTable out;
  out.name = std::move(name);
  for (const KeySpec& k : t.keys) {
    if (k.pointer.rfind(prefix + "/", 0) == 0) {
      KeySpec c = k;
      c.pointer = k.pointer.substr(prefix.size());
      out.keys.push_back(std::move(c));
    }
  }
  return out;
}

// ---- reading ---------------------------------------------------------------------------------

std::mutex g_file_cache_mutex;
std::map<std::string, json>& file_cache() {
  static std::map<std::string, json> cache;
  return cache;
}

// Preset files never change while a process runs; sweeps read them once.
json read_cached(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(g_file_cache_mutex);
    auto it = file_cache().find(path);
    if (it != file_cache().end()) return it->second;
  }
  json doc = read_json_file(path);
  std::lock_guard<std::mutex> lock(g_file_cache_mutex);
  file_cache().emplace(path, doc);
  return doc;
}

std::string escape_pointer_token(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

template <typename T>
T get_or(const json& o, const char* key, T def) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return def;
  return it->template get<T>();
}

double need_number(const json& o, const char* key, const std::string& file,
                   const std::string& pointer) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) {
    throw InputError(file, pointer + "/" + key, "a value (from a preset or given here)", "nothing");
  }
  return it->get<double>();
}

// A file named by a scenario key must exist; the error names the scenario's key, not the path.
std::string require_file(const std::string& file, const std::string& pointer,
                         const std::string& ref) {
  const auto path = resolve_relative(file, ref);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(file, pointer, "an existing file (paths are relative to the scenario file)",
                     "\"" + ref + "\" (" + path.string() + " does not exist)");
  }
  return path.string();
}

// Loads the preset `name` of `kind` (gpus/links/system) and merges `section`'s other keys over it.
json merge_preset(const json& section, const std::string& dir, const KeyTable& table,
                  const std::string& file, const std::string& pointer) {
  if (!section.is_object() || !section.contains("preset")) return section;
  const std::string name = section.at("preset").get<std::string>();
  const auto path = data_dir() / dir / (name + ".json");
  if (!std::filesystem::exists(path)) {
    std::string known;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(data_dir() / dir, ec)) {
      if (e.path().extension() == ".json") {
        known += known.empty() ? "" : ", ";
        known += e.path().stem().string();
      }
    }
    throw InputError(file, pointer + "/preset", "a preset name (" + known + ")",
                     "\"" + name + "\"");
  }
  json base = read_cached(path.string());
  validate(base, table, path.string());
  json patch = section;
  patch.erase("preset");
  base.merge_patch(patch);
  return base;
}

LinkSpec parse_link(const json& o, bool nic, const std::string& file, const std::string& p) {
  LinkSpec l;
  l.name = get_or<std::string>(o, "name", "custom");
  l.bandwidth =
      nic ? gbps_to_bytes_per_s(need_number(o, "bandwidth_gbps", file, p))
          : gbytes_per_s_to_bytes_per_s(need_number(o, "bandwidth_gbytes_per_s", file, p));
  l.latency = us_to_s(need_number(o, "latency_us", file, p));
  return l;
}

CollectiveTuning parse_tuning(const json& o, double latency_default_us) {
  CollectiveTuning c;
  c.ring_efficiency = get_or<double>(o, "ring_efficiency", 0.9);
  c.tree_efficiency = get_or<double>(o, "tree_efficiency", 0.85);
  c.nvls_efficiency = get_or<double>(o, "nvls_efficiency", 0.0);
  c.latency = us_to_s(get_or<double>(o, "latency_us", latency_default_us));
  c.nvls_latency = us_to_s(get_or<double>(o, "nvls_latency_us", 25.0));
  return c;
}

}  // namespace

const KeyTable& scenario_keys() {
  static const KeyTable table{"scenario", build_scenario_keys()};
  return table;
}

json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "a readable JSON file", "it cannot be opened");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    // Comments are not JSON: strict parsing, as the contract says.
    return json::parse(ss.str());
  } catch (const json::parse_error& e) {
    throw InputError(path, "", "valid JSON", "a syntax error at byte " + std::to_string(e.byte));
  }
}

HardwareSpec resolve_hardware(const json& section, const std::string& file,
                              const std::string& pointer) {
  static const KeyTable system_table = reroot(scenario_keys(), "/hardware", "hardware preset");
  static const KeyTable gpu_table = reroot(scenario_keys(), "/hardware/gpu", "GPU preset");
  static const KeyTable link_table = reroot(scenario_keys(), "/hardware/intra_node", "link preset");
  static const KeyTable nic_table = reroot(scenario_keys(), "/hardware/inter_node", "NIC preset");

  json hw = section;
  std::string hw_file = file;
  if (hw.contains("preset") && hw.at("preset").get<std::string>() == "this-machine") {
    throw UnsupportedError(file + ": " + pointer +
                           "/preset: \"this-machine\" needs a calibration profile of this "
                           "machine, which `ddpsim calibrate` writes; calibration is not built in "
                           "this version");
  }
  if (hw.contains("profile")) {
    throw UnsupportedError(file + ": " + pointer +
                           "/profile: calibration profiles are read once `ddpsim calibrate` "
                           "exists; not in this version");
  }
  if (hw.contains("file")) {
    const auto path = require_file(file, pointer + "/file", hw.at("file").get<std::string>());
    json base = read_cached(path);
    validate(base, system_table, path);
    json patch = hw;
    patch.erase("file");
    base.merge_patch(patch);
    hw = std::move(base);
  }
  hw = merge_preset(hw, "hardware", system_table, file, pointer);
  if (hw.contains("gpu"))
    hw["gpu"] = merge_preset(hw["gpu"], "hardware/gpus", gpu_table, file, pointer + "/gpu");
  for (const char* k : {"intra_node", "pcie"}) {
    if (hw.contains(k))
      hw[k] = merge_preset(hw[k], "hardware/links", link_table, file, pointer + "/" + k);
  }
  if (hw.contains("inter_node")) {
    hw["inter_node"] =
        merge_preset(hw["inter_node"], "hardware/links", nic_table, file, pointer + "/inter_node");
  }

  HardwareSpec s;
  s.name = get_or<std::string>(hw, "name", "custom");
  s.source = get_or<std::string>(hw, "source", "");
  if (!hw.contains("gpu"))
    throw InputError(file, pointer + "/gpu", "a GPU (preset or keys)", "nothing");
  const json& g = hw.at("gpu");
  const std::string gp = pointer + "/gpu";
  s.gpu.name = get_or<std::string>(g, "name", "custom");
  s.gpu.source = get_or<std::string>(g, "source", "");
  s.gpu.memory_bytes = need_number(g, "memory_gib", file, gp) * kGiB;
  s.gpu.memory_bandwidth =
      gbytes_per_s_to_bytes_per_s(need_number(g, "memory_bandwidth_gbytes_per_s", file, gp));
  s.gpu.memory_efficiency = get_or<double>(g, "memory_efficiency", 0.8);
  if (!g.contains("peak_tflops") || g.at("peak_tflops").empty()) {
    throw InputError(file, gp + "/peak_tflops", "at least one dtype's peak", "nothing");
  }
  for (const auto& [k, v] : g.at("peak_tflops").items()) {
    const DType d = *parse_dtype(k);
    s.gpu.peak_flops[d] = tflops_to_flops(v.get<double>());
    // A peak without an efficiency is kept (it documents the part) but cannot be computed
    // with; the precision check below names the missing efficiency if training needs it.
    if (g.contains("efficiency") && g.at("efficiency").contains(k)) {
      s.gpu.efficiency[d] = g.at("efficiency").at(k).get<double>();
    }
  }
  if (!hw.contains("gpus_per_node")) {
    throw InputError(file, pointer + "/gpus_per_node", "a value (from a preset or given here)",
                     "nothing");
  }
  s.gpus_per_node = hw.at("gpus_per_node").get<int>();
  if (!hw.contains("intra_node")) {
    throw InputError(file, pointer + "/intra_node", "a link (preset or keys)", "nothing");
  }
  s.intra_node = parse_link(hw.at("intra_node"), false, file, pointer + "/intra_node");
  s.intra_node_switched = get_or<bool>(hw, "intra_node_switched", true);
  // Without an explicit PCIe path the GPU reaches its NIC at the NIC's own rate.
  if (!hw.contains("inter_node")) {
    throw InputError(file, pointer + "/inter_node", "a NIC (preset or keys)", "nothing");
  }
  s.inter_node = parse_link(hw.at("inter_node"), true, file, pointer + "/inter_node");
  s.nics_per_node = get_or<int>(hw.at("inter_node"), "nics_per_node", 1);
  s.pcie = hw.contains("pcie") ? parse_link(hw.at("pcie"), false, file, pointer + "/pcie")
                               : LinkSpec{"nic-rate", s.inter_node.bandwidth, 0};
  const json net = hw.value("network", json::object());
  s.oversubscription = get_or<double>(net, "oversubscription", 1.0);
  s.nodes_per_leaf = get_or<int>(net, "nodes_per_leaf", 32);
  const json coll = hw.value("collectives", json::object());
  s.intra_tuning = parse_tuning(coll.value("intra_node", json::object()), 3.4);
  s.inter_tuning = parse_tuning(coll.value("inter_node", json::object()), 14.0);
  return s;
}

namespace {

CommHook parse_comm_hook(const std::string& text) {
  CommHook h;
  h.text = text;
  if (text == "none")
    h.kind = CommHook::Kind::kNone;
  else if (text == "fp16")
    h.kind = CommHook::Kind::kFp16;
  else if (text == "bf16")
    h.kind = CommHook::Kind::kBf16;
  else if (text.rfind("powersgd:", 0) == 0) {
    h.kind = CommHook::Kind::kPowerSgd;
    h.rank = std::stoi(text.substr(9));
  } else {
    h.kind = CommHook::Kind::kTopK;
    h.fraction = std::stod(text.substr(5));
  }
  return h;
}

template <typename E>
E parse_enum(const std::string& text, std::initializer_list<E> values, const char* (*name)(E)) {
  for (E v : values) {
    if (text == name(v)) return v;
  }
  DDPSIM_ASSERT(false, "validated enum value not found: " + text);
}

std::shared_ptr<const Workload> build_workload(const json& m, const std::string& file,
                                               std::string& label) {
  int forms = 0;
  for (const char* k : {"preset", "file", "hf_config", "mlp", "layers"}) forms += m.contains(k);
  if (forms != 1) {
    throw InputError(file, "/model",
                     "exactly one of \"preset\", \"file\", \"hf_config\", \"mlp\", \"layers\"",
                     std::to_string(forms) + " of them");
  }
  std::optional<std::int64_t> seq_len;
  if (m.contains("seq_len")) seq_len = m.at("seq_len").get<std::int64_t>();
  if (seq_len && (m.contains("mlp") || m.contains("layers"))) {
    throw InputError(file, "/model/seq_len",
                     "no seq_len for \"mlp\" or \"layers\" models (a sample is one row)",
                     std::to_string(*seq_len));
  }
  if (m.contains("preset")) {
    const auto name = m.at("preset").get<std::string>();
    label = "preset " + name;
    return std::make_shared<const Workload>(
        load_model_preset(name, file, "/model/preset", seq_len));
  }
  if (m.contains("file")) {
    const auto path = require_file(file, "/model/file", m.at("file").get<std::string>());
    label = "file " + m.at("file").get<std::string>();
    return std::make_shared<const Workload>(load_model_file(path, seq_len));
  }
  if (m.contains("hf_config")) {
    const auto path = require_file(file, "/model/hf_config", m.at("hf_config").get<std::string>());
    label = "hf_config " + m.at("hf_config").get<std::string>();
    const json cfg = read_cached(path);
    return std::make_shared<const Workload>(build_hf_transformer(cfg, path, seq_len));
  }
  if (m.contains("mlp")) {
    MlpOptions o;
    for (const json& w : m.at("mlp").at("widths")) o.widths.push_back(w.get<std::int64_t>());
    o.bias = get_or<bool>(m.at("mlp"), "bias", true);
    o.activation = get_or<std::string>(m.at("mlp"), "activation", "relu");
    label = "mlp";
    for (std::size_t i = 0; i < o.widths.size(); ++i) {
      label += (i == 0 ? " " : "-") + std::to_string(o.widths[i]);
    }
    return std::make_shared<const Workload>(build_mlp(o));
  }
  std::vector<LumpLayer> layers;
  for (const json& l : m.at("layers")) {
    layers.push_back({l.at("name").get<std::string>(), l.at("params").get<std::int64_t>(),
                      l.at("fwd_flops_per_sample").get<double>(),
                      get_or<double>(l, "activation_bytes_per_sample", 0.0)});
  }
  label = "layers (" + std::to_string(layers.size()) + ")";
  return std::make_shared<const Workload>(build_from_layers(layers));
}

Scenario parse_with(const json& doc, const std::string& file,
                    std::shared_ptr<const Workload> reuse_workload,
                    const std::string& reuse_label) {
  validate(doc, scenario_keys(), file);
  Scenario s;
  s.file = file;
  s.doc = doc;
  s.name = get_or<std::string>(doc, "name", "");
  if (reuse_workload) {
    s.workload = std::move(reuse_workload);
    s.model_label = reuse_label;
  } else {
    s.workload = build_workload(doc.at("model"), file, s.model_label);
  }
  s.hardware = resolve_hardware(doc.at("hardware"), file, "/hardware");

  const json& c = doc.at("cluster");
  s.cluster.gpus = c.at("gpus").get<int>();
  s.cluster.gpus_per_node = get_or<int>(c, "gpus_per_node", s.hardware.gpus_per_node);
  s.hardware.gpus_per_node = s.cluster.gpus_per_node;
  if (s.cluster.gpus > s.cluster.gpus_per_node && s.cluster.gpus % s.cluster.gpus_per_node != 0) {
    throw InputError(file, "/cluster/gpus",
                     "at most gpus_per_node (" + std::to_string(s.cluster.gpus_per_node) +
                         ") or a multiple of it",
                     std::to_string(s.cluster.gpus));
  }
  if (s.hardware.nics_per_node > s.cluster.gpus_per_node * 8) {
    throw InputError(file, "/hardware/inter_node/nics_per_node",
                     "at most 8 NICs per GPU of the node",
                     std::to_string(s.hardware.nics_per_node));
  }

  const json& t = doc.at("training");
  {
    const std::string prec = get_or<std::string>(t, "precision", "fp32");
    const DType cdt =
        compute_dtype(parse_enum(prec,
                                 {Precision::kFp32, Precision::kAmpBf16, Precision::kAmpFp16,
                                  Precision::kBf16, Precision::kFp16},
                                 precision_name));
    if (s.hardware.gpu.peak_flops.count(cdt) == 0) {
      throw InputError(file, "/training/precision",
                       std::string("a precision the GPU runs (") + s.hardware.gpu.name +
                           " has no " + dtype_name(cdt) + " peak)",
                       "\"" + prec + "\"");
    }
    if (s.hardware.gpu.efficiency.count(cdt) == 0) {
      throw InputError(file, std::string("/hardware/gpu/efficiency/") + dtype_name(cdt),
                       std::string("an achievable fraction of the ") + dtype_name(cdt) +
                           " peak (training.precision computes in " + dtype_name(cdt) + ")",
                       "nothing");
    }
  }
  s.training.per_gpu_batch = t.at("per_gpu_batch").get<std::int64_t>();
  s.training.grad_accumulation = get_or<int>(t, "grad_accumulation", 1);
  s.training.precision = parse_enum(get_or<std::string>(t, "precision", "fp32"),
                                    {Precision::kFp32, Precision::kAmpBf16, Precision::kAmpFp16,
                                     Precision::kBf16, Precision::kFp16},
                                    precision_name);
  s.training.optimizer = parse_enum(
      get_or<std::string>(t, "optimizer", "adam"),
      {Optimizer::kSgd, Optimizer::kMomentum, Optimizer::kAdam, Optimizer::kAdamW}, optimizer_name);
  if (t.contains("grad_reduce_dtype")) {
    s.training.grad_reduce_dtype = parse_dtype(t.at("grad_reduce_dtype").get<std::string>());
  }
  if (t.contains("single_gpu_step_s")) {
    s.training.single_gpu_step_s = t.at("single_gpu_step_s").get<double>();
  }
  if (t.contains("lr")) {
    const json& l = t.at("lr");
    LrConfig lr;
    lr.base = l.at("base").get<double>();
    lr.base_batch = l.at("base_batch").get<std::int64_t>();
    const auto sc = get_or<std::string>(l, "scaling", "linear");
    lr.scaling = sc == "linear" ? LrScaling::kLinear
                 : sc == "sqrt" ? LrScaling::kSqrt
                                : LrScaling::kNone;
    lr.warmup_steps = get_or<std::int64_t>(l, "warmup_steps", 0);
    s.training.lr = lr;
  }
  if (t.contains("target") && t.at("target").contains("critical_batch")) {
    const json& cb = t.at("target").at("critical_batch");
    s.training.critical_batch =
        CriticalBatchTarget{cb.at("b_noise").get<double>(), cb.at("s_min").get<double>()};
  }

  const json p = doc.value("parallelism", json::object());
  s.parallelism.strategy =
      parse_enum(get_or<std::string>(p, "strategy", "ddp"),
                 {Strategy::kDdp, Strategy::kZero1, Strategy::kZero2, Strategy::kZero3,
                  Strategy::kFsdpFullShard, Strategy::kFsdpShardGradOp, Strategy::kFsdpHybrid},
                 strategy_name);
  s.parallelism.bucket_cap_defaulted = !p.contains("bucket_cap_mb");
  s.parallelism.bucket_cap_mb = get_or<double>(p, "bucket_cap_mb", 25.0);
  if (bucket_cap_mb_to_bytes(s.parallelism.bucket_cap_mb) < 1) {
    throw InputError(file, "/parallelism/bucket_cap_mb", "a cap of at least 1 byte (2^-20 MiB)",
                     fmt::format("{}", s.parallelism.bucket_cap_mb));
  }
  s.parallelism.overlap = get_or<bool>(p, "overlap", true);
  s.parallelism.comm_hook = parse_comm_hook(get_or<std::string>(p, "comm_hook", "none"));
  s.parallelism.algorithm = parse_enum(
      get_or<std::string>(p, "algorithm", "auto"),
      {CollectiveAlgorithm::kAuto, CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
       CollectiveAlgorithm::kHierarchical, CollectiveAlgorithm::kNvls},
      algorithm_name);
  s.parallelism.broadcast_buffers = get_or<bool>(p, "broadcast_buffers", true);
  s.parallelism.find_unused_parameters = get_or<bool>(p, "find_unused_parameters", false);
  s.parallelism.gradient_as_bucket_view = get_or<bool>(p, "gradient_as_bucket_view", false);
  s.parallelism.static_graph = get_or<bool>(p, "static_graph", false);

  // Combinations that cannot run.
  const auto hook = s.parallelism.comm_hook.kind;
  if (s.training.grad_reduce_dtype && hook != CommHook::Kind::kNone) {
    throw InputError(
        file, "/training/grad_reduce_dtype",
        "no grad_reduce_dtype together with a comm_hook (the hook sets the wire dtype)",
        std::string("\"") + dtype_name(*s.training.grad_reduce_dtype) + "\"");
  }
  if (s.parallelism.algorithm == CollectiveAlgorithm::kNvls &&
      s.hardware.intra_tuning.nvls_efficiency <= 0) {
    throw InputError(file, "/parallelism/algorithm",
                     "an algorithm the hardware supports (\"nvls\" needs an NVSwitch with "
                     "in-switch reduction: nvls_efficiency > 0)",
                     "\"nvls\"");
  }

  const json sim = doc.value("simulation", json::object());
  s.simulation.engine = get_or<std::string>(sim, "engine", "analytic") == "event"
                            ? Engine::kEvent
                            : Engine::kAnalytic;
  s.simulation.steps = get_or<int>(sim, "steps", 5);
  s.simulation.jitter_cv = get_or<double>(sim, "jitter_cv", 0.0);
  s.simulation.seed = get_or<std::uint64_t>(sim, "seed", 1);

  if (doc.contains("pricing") && doc.at("pricing").contains("gpu_hour_usd")) {
    s.gpu_hour_usd = doc.at("pricing").at("gpu_hour_usd").get<double>();
  }

  if (doc.contains("sweep")) {
    for (const auto& [key, values] : doc.at("sweep").items()) {
      const std::string ptr = "/sweep/" + escape_pointer_token(key);
      std::string target = "/" + key;
      std::replace(target.begin(), target.end(), '.', '/');
      const KeySpec* spec = scenario_keys().find(target);
      if (spec == nullptr || spec->type == KeyType::kObject || spec->type == KeyType::kArray ||
          target.rfind("/sweep", 0) == 0 || key.find('/') != std::string::npos) {
        throw InputError(file, ptr,
                         "a dotted path to a scalar scenario key (e.g. \"cluster.gpus\", "
                         "\"parallelism.bucket_cap_mb\")",
                         "\"" + key + "\"");
      }
      for (std::size_t i = 0; i < values.size(); ++i) {
        validate_value(values[i], *spec, scenario_keys(), file, ptr + "/" + std::to_string(i));
      }
      if (s.training.single_gpu_step_s &&
          (key == "training.per_gpu_batch" || key.rfind("hardware.", 0) == 0 ||
           key == "training.precision" || key.rfind("model.", 0) == 0)) {
        throw InputError(file, ptr,
                         "no sweep of the batch, precision, model or hardware when "
                         "training.single_gpu_step_s is given (it was measured at one of each)",
                         "\"" + key + "\"");
      }
      s.sweep.push_back({key, std::vector<json>(values.begin(), values.end())});
    }
  }
  return s;
}

}  // namespace

Scenario parse_scenario(const json& doc, const std::string& file) {
  return parse_with(doc, file, nullptr, "");
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(read_json_file(path), path);
}

std::vector<Scenario> expand_sweep(const Scenario& s) {
  if (s.sweep.empty()) return {s};
  std::size_t total = 1;
  for (const SweepAxis& a : s.sweep) total *= a.values.size();
  if (total > 1000000) {
    throw InputError(s.file, "/sweep", "at most 1,000,000 points in the Cartesian product",
                     std::to_string(total));
  }
  bool touches_model = false;
  for (const SweepAxis& a : s.sweep) touches_model |= a.key.rfind("model.", 0) == 0;

  std::vector<Scenario> out;
  out.reserve(total);
  std::vector<std::size_t> idx(s.sweep.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    json doc = s.doc;
    doc.erase("sweep");
    json point = json::object();
    for (std::size_t a = 0; a < s.sweep.size(); ++a) {
      const SweepAxis& axis = s.sweep[a];
      std::string target = "/" + axis.key;
      std::replace(target.begin(), target.end(), '.', '/');
      doc[json::json_pointer(target)] = axis.values[idx[a]];
      point[axis.key] = axis.values[idx[a]];
    }
    try {
      Scenario p = touches_model ? parse_with(doc, s.file, nullptr, "")
                                 : parse_with(doc, s.file, s.workload, s.model_label);
      p.point = point;
      p.sweep.clear();
      out.push_back(std::move(p));
    } catch (const InputError& e) {
      std::string where;
      for (std::size_t a = 0; a < s.sweep.size(); ++a) {
        where +=
            (where.empty() ? "" : ", ") + s.sweep[a].key + "=" + s.sweep[a].values[idx[a]].dump();
      }
      std::string msg = e.what();
      const auto colon = msg.find(": ");
      if (colon != std::string::npos) msg = msg.substr(colon + 2);
      // Name the axis value that made the point invalid when the error sits at that key.
      std::string pointer = "/sweep";
      for (std::size_t a = 0; a < s.sweep.size(); ++a) {
        std::string target = "/" + s.sweep[a].key;
        std::replace(target.begin(), target.end(), '.', '/');
        if (e.pointer() == target) {
          pointer = "/sweep/" + escape_pointer_token(s.sweep[a].key) + "/" + std::to_string(idx[a]);
        }
      }
      throw InputError(s.file, pointer, "every sweep point to be a valid scenario",
                       "the point " + where + " fails: " + msg);
    }
    for (std::size_t a = s.sweep.size(); a-- > 0;) {
      if (++idx[a] < s.sweep[a].values.size()) break;
      idx[a] = 0;
    }
  }
  return out;
}

}  // namespace ddpsim::model
