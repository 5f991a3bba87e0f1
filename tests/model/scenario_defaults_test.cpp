// scenario_defaults_test.cpp: every documented default of the scenario key table is the value
// the parser puts in the typed field (split from scenario_test.cpp, which checks the rest of the
// scenario format).
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "model/units.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

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
  json f8_doc = mlp_doc;  // float8 with an empty section, on a GPU with an fp8 peak
  f8_doc["hardware"]["gpu"]["peak_tflops"] = {{"bf16", 989.4}, {"fp8", 1978.9}};
  f8_doc["hardware"]["gpu"]["efficiency"] = {{"bf16", 0.7}, {"fp8", 0.6}};
  f8_doc["training"]["precision"] = "amp_bf16";
  f8_doc["training"]["float8"] = json::object();
  const Scenario f8 = parse_scenario(f8_doc, "defaults.json");
  json off_doc = mlp_doc;  // ZeRO-Offload with its required rate only
  off_doc["parallelism"] =
      json::parse(R"({"strategy": "zero3", "offload": {"host_adam_params_per_s": 1e9}})");
  const Scenario off = parse_scenario(off_doc, "defaults.json");

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
      {"/hardware/collectives/buffsize_bytes",
       {[](const Scenario& s) { return json(s.hardware.nccl_kernel.buffsize_bytes); }, same, &mlp}},
      {"/hardware/collectives/nvls_chunk_bytes",
       {[](const Scenario& s) { return json(s.hardware.nccl_kernel.nvls_chunk_bytes); }, same,
        &mlp}},
      {"/hardware/collectives/nvls_tree_max_chunk_bytes",
       {[](const Scenario& s) { return json(s.hardware.nccl_kernel.nvls_tree_max_chunk_bytes); },
        same, &mlp}},
      {"/hardware/collectives/model",
       {[](const Scenario& s) {
          return json(s.hardware.collective_model == model::CollectiveModel::kAlphaBeta
                          ? "alpha_beta"
                          : "nccl");
        },
        same, &mlp}},
      {"/hardware/intra_node_switched",
       {[](const Scenario& s) { return json(s.hardware.intra_node_switched); }, same, &mlp}},
      {"/hardware/cpu_vendor",
       {[](const Scenario& s) {
          using V = model::HardwareSpec::CpuVendor;
          const V v = s.hardware.cpu_vendor;
          return json(v == V::kAmd ? "amd" : v == V::kArm ? "arm" : "intel");
        },
        same, &mlp}},
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
       {[](const Scenario& s) {
          return model::checkpointing_json(s.training.activation_checkpointing);
        },
        same, &mlp}},
      {"/training/compile",
       {[](const Scenario& s) { return json(s.training.compile); }, same, &mlp}},
      {"/training/float8/recipe",
       {[](const Scenario& s) {
          return json(model::float8_recipe_name(s.training.float8->recipe));
        },
        same, &f8}},
      {"/training/float8/fsdp_float8_all_gather",
       {[](const Scenario& s) { return json(s.training.float8->fsdp_float8_all_gather); }, same,
        &f8}},
      {"/training/float8/precompute_scale",
       {[](const Scenario& s) { return json(s.training.float8->precompute_scale); }, same, &f8}},
      {"/parallelism/offload/param",
       {[](const Scenario& s) { return json(s.parallelism.offload->param); }, same, &off}},
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
    // plan.hardware's entries are hardware sections: the /hardware rows' cases cover them.
    if (k.pointer.rfind("/plan/hardware/*/", 0) == 0) continue;
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

}  // namespace
}  // namespace ddpsim::model
