// The parsers of a scenario's sections (detail/scenario_sections.hpp), each on a document
// already validated against scenario_keys(): what is left to check here is what one key's row
// cannot say (combinations of keys, limits that depend on another section).
#include "model/scenario/detail/scenario_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/scenario/detail/json_io.hpp"
#include "model/scenario/detail/section_parsing.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "model/units.hpp"

namespace ddpsim::model::detail {

using nlohmann::json;

namespace {

// Largest global batch (samples) a scenario or plan may ask for: far past any published run, and
// small enough that products with it stay exact in an int64.
constexpr double kMaxGlobalBatch = 1e18;

// training.target's amount of work: tokens (converted to samples with the model's sequence
// length) or samples, at most one of them and not beside a critical-batch model, which states
// the steps to the target itself.
void parse_work_target(const json& target, const std::string& file, Scenario& s) {
  const int given = static_cast<int>(target.contains("tokens")) +
                    static_cast<int>(target.contains("samples")) +
                    static_cast<int>(target.contains("critical_batch"));
  if (given > 1) {
    throw InputError(file, "/training/target",
                     "one of tokens, samples and critical_batch (each says how much training is "
                     "left)",
                     std::to_string(given) + " of them");
  }
  if (target.contains("tokens")) {
    if (s.workload->seq_len <= 1) {
      throw InputError(file, "/training/target/tokens",
                       "a sequence model (tokens per sample known); use training.target.samples",
                       s.model_label);
    }
    s.training.target_tokens = target.at("tokens").get<double>();
    s.training.target_samples =
        *s.training.target_tokens / static_cast<double>(s.workload->seq_len);
  } else if (target.contains("samples")) {
    s.training.target_samples = target.at("samples").get<double>();
  }
}

}  // namespace

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

// An activation_checkpointing value at `base`: false, true, or {"mode", "option"} (the key table
// has checked the types and values; here what they mean together).
ActivationCheckpointing parse_checkpointing(const std::string& file, const json& v,
                                            const std::string& base) {
  ActivationCheckpointing ac;
  const json* it = &v;
  if (it->is_boolean()) {
    ac.mode = it->get<bool>() ? CheckpointMode::kFull : CheckpointMode::kNone;
    return ac;
  }
  const std::string mode = it->at("mode").get<std::string>();
  const auto option = it->find("option");
  if (mode != "selective") {
    if (option != it->end()) {
      throw InputError(file, base + "/option", "no option with mode \"" + mode + "\"",
                       option->dump());
    }
    ac.mode = mode == "full" ? CheckpointMode::kFull : CheckpointMode::kNone;
    return ac;
  }
  if (option == it->end()) {
    throw InputError(file, base + "/option",
                     "\"op\" or an integer K >= 1 (mode selective: torchtitan's "
                     "selective_ac_option)",
                     "nothing");
  }
  if (option->is_string() && option->get<std::string>() == "op") {
    ac.mode = CheckpointMode::kSelectiveOp;
    return ac;
  }
  ac.mode = CheckpointMode::kSelectiveLayer;
  ac.every = option->is_string() ? std::stoi(option->get<std::string>()) : option->get<int>();
  return ac;
}

void parse_cluster(const json& c, const std::string& file, Scenario& s) {
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
    // Named at the key the user gave: a preset's NIC count (GB200 NVL72: 72) is not wrong, the
    // smaller node the scenario asked for is (issue 42: it named the preset's nics_per_node).
    const auto given = [&](const char* pointer) {
      return s.doc.is_object() && s.doc.contains(json::json_pointer(pointer));
    };
    const std::string nics = std::to_string(s.hardware.nics_per_node);
    if (given("/hardware/inter_node/nics_per_node")) {
      throw InputError(file, "/hardware/inter_node/nics_per_node",
                       "at most 8 NICs per GPU of the node", nics);
    }
    const char* where =
        given("/cluster/gpus_per_node") ? "/cluster/gpus_per_node" : "/hardware/gpus_per_node";
    throw InputError(file, where,
                     "at least " + std::to_string((s.hardware.nics_per_node + 7) / 8) +
                         " GPUs per node: the hardware's " + nics +
                         " NICs per node (hardware.inter_node.nics_per_node) allow at most 8 "
                         "per GPU",
                     std::to_string(s.cluster.gpus_per_node));
  }
}

void parse_training(const json& t, const std::string& file, Scenario& s) {
  {
    const std::string prec = get_or_default<std::string>(t, "/training/precision");
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
    // The flash-attn package runs fp16/bf16 on Ampere or newer only (flash_attn's own check,
    // mirrored by PyTorch sdp_utils.cpp: sm80..sm121, half and bfloat16); a GPU preset has an
    // attention_efficiency exactly when it has flash kernels. sdpa falls back by itself.
    // The Triton port has the same limits (llmfoundry flash_attn_triton.py asserts fp16/bf16;
    // Triton's tensor-core dots need sm80 for bf16).
    if (s.workload && (s.workload->attention == AttentionImpl::kFlash ||
                       s.workload->attention == AttentionImpl::kTriton)) {
      const bool half = cdt == DType::kFp16 || cdt == DType::kBf16;
      const std::string impl = attention_impl_name(*s.workload->attention);
      if (!half || s.hardware.gpu.attention_fwd_efficiency <= 0) {
        throw InputError(file, "/model/attention",
                         "sdpa or eager (" + impl +
                             " needs fp16/bf16 on a GPU with flash kernels; here " +
                             dtype_name(cdt) + " on " + s.hardware.gpu.name + ")",
                         "\"" + impl + "\"");
      }
    }
  }
  s.training.per_gpu_batch = t.at("per_gpu_batch").get<std::int64_t>();
  s.training.grad_accumulation = get_or_default<int>(t, "/training/grad_accumulation");
  // The global batch (micro-batch x accumulation x GPUs) is an int64 count of samples; each key
  // alone is bounded, their product is bounded here so that it cannot overflow.
  if (static_cast<double>(s.training.per_gpu_batch) * s.training.grad_accumulation *
          s.cluster.gpus >
      kMaxGlobalBatch) {
    throw InputError(file, "/training/per_gpu_batch",
                     "per_gpu_batch x grad_accumulation x cluster.gpus at most 1e18 samples",
                     fmt::format("{} x {} x {}", s.training.per_gpu_batch,
                                 s.training.grad_accumulation, s.cluster.gpus));
  }
  s.training.precision = parse_enum(get_or_default<std::string>(t, "/training/precision"),
                                    {Precision::kFp32, Precision::kAmpBf16, Precision::kAmpFp16,
                                     Precision::kBf16, Precision::kFp16},
                                    precision_name);
  s.training.optimizer = parse_enum(
      get_or_default<std::string>(t, "/training/optimizer"),
      {Optimizer::kSgd, Optimizer::kMomentum, Optimizer::kAdam, Optimizer::kAdamW}, optimizer_name);
  s.training.optimizer_impl =
      parse_enum(get_or_default<std::string>(t, "/training/optimizer_impl"),
                 {OptimizerImpl::kForeach, OptimizerImpl::kFused, OptimizerImpl::kForLoop},
                 optimizer_impl_name);
  s.training.optimizer_impl_defaulted = !t.contains("optimizer_impl");
  if (t.contains("grad_reduce_dtype")) {
    s.training.grad_reduce_dtype = parse_dtype(t.at("grad_reduce_dtype").get<std::string>());
  }
  if (t.contains("activation_checkpointing")) {
    s.training.activation_checkpointing = parse_checkpointing(
        file, t.at("activation_checkpointing"), "/training/activation_checkpointing");
  }
  s.training.compile = get_or_default<bool>(t, "/training/compile");
  if (t.contains("float8")) {
    const json& f = t.at("float8");
    Float8Config c;
    c.recipe = *parse_float8_recipe(get_or_default<std::string>(f, "/training/float8/recipe"));
    c.fsdp_float8_all_gather = get_or_default<bool>(f, "/training/float8/fsdp_float8_all_gather");
    c.precompute_scale = get_or_default<bool>(f, "/training/float8/precompute_scale");
    if (f.contains("filter_fqns")) {
      c.filter_fqns = f.at("filter_fqns").get<std::vector<std::string>>();
    }
    const GpuSpec& g = s.hardware.gpu;
    const bool fp8_cores = g.peak_flops.count(DType::kFp8) > 0;
    if (!fp8_cores) {
      throw InputError(file, "/training/float8",
                       "a GPU with float8 tensor cores (compute capability 8.9 or newer: H100, "
                       "H200, B200; torchtitan refuses float8 elsewhere)",
                       g.name + " (no fp8 peak)");
    }
    if (g.efficiency.count(DType::kFp8) == 0) {
      throw InputError(file, "/hardware/gpu/efficiency/fp8",
                       "an achievable fraction of the fp8 peak (training.float8 is set)",
                       "nothing");
    }
    const DType cdt = compute_dtype(s.training.precision);
    if (cdt != DType::kBf16 && cdt != DType::kFp16) {
      throw InputError(file, "/training/float8",
                       "16-bit compute (training.precision amp_bf16 or bf16: Float8Linear casts "
                       "bf16 inputs)",
                       std::string("precision ") + precision_name(s.training.precision));
    }
    if (c.fsdp_float8_all_gather && c.recipe != Float8Recipe::kTensorwise) {
      throw InputError(file, "/training/float8/fsdp_float8_all_gather",
                       "false with recipe " + std::string(float8_recipe_name(c.recipe)) +
                           " (torchao casts weights for the all-gather with tensorwise scales "
                           "only)",
                       "true");
    }
    if (c.precompute_scale && !c.fsdp_float8_all_gather) {
      throw InputError(file, "/training/float8/precompute_scale",
                       "false without fsdp_float8_all_gather (the scales it precomputes are the "
                       "all-gather's)",
                       "true");
    }
    s.training.float8 = c;
  }
  s.training.allow_tf32_matmul = get_or_default<bool>(t, "/training/allow_tf32_matmul");
  s.training.allow_tf32_cudnn = get_or_default<bool>(t, "/training/allow_tf32_cudnn");
  s.training.channels_last = get_or_default<bool>(t, "/training/channels_last");
  const model::GpuSpec& gpu = s.hardware.gpu;
  if (s.training.precision == Precision::kFp32 && gpu.tf32_peak_flops > 0 &&
      gpu.tf32_efficiency <= 0 && (s.training.allow_tf32_matmul || s.training.allow_tf32_cudnn)) {
    throw InputError(file, "/hardware/gpu/efficiency/tf32",
                     "an achievable fraction of the tf32 peak (fp32 training with TF32 allowed "
                     "on a GPU with a tf32 peak)",
                     "nothing");
  }
  if (t.contains("single_gpu_step_s")) {
    s.training.single_gpu_step_s = t.at("single_gpu_step_s").get<double>();
  }
  if (t.contains("input_pipeline")) {
    const json& ip = t.at("input_pipeline");
    const bool per_gpu = ip.contains("samples_per_s_per_gpu");
    if (per_gpu == ip.contains("samples_per_s_per_node")) {
      throw InputError(file, "/training/input_pipeline",
                       "exactly one of samples_per_s_per_gpu and samples_per_s_per_node",
                       per_gpu ? "both" : "neither");
    }
    if (per_gpu) {
      s.training.input_samples_per_s_per_gpu = ip.at("samples_per_s_per_gpu").get<double>();
    } else {
      s.training.input_samples_per_s_per_node = ip.at("samples_per_s_per_node").get<double>();
    }
  }
  if (t.contains("lr")) {
    const json& l = t.at("lr");
    LrConfig lr;
    lr.base = l.at("base").get<double>();
    lr.base_batch = l.at("base_batch").get<std::int64_t>();
    const auto sc = get_or_default<std::string>(l, "/training/lr/scaling");
    lr.scaling = sc == "linear" ? LrScaling::kLinear
                 : sc == "sqrt" ? LrScaling::kSqrt
                                : LrScaling::kNone;
    lr.warmup_steps = get_or_default<std::int64_t>(l, "/training/lr/warmup_steps");
    s.training.lr = lr;
  }
  if (t.contains("target") && t.at("target").contains("critical_batch")) {
    const json& cb = t.at("target").at("critical_batch");
    s.training.critical_batch =
        CriticalBatchTarget{cb.at("b_noise").get<double>(), cb.at("s_min").get<double>()};
  }
  if (t.contains("target")) parse_work_target(t.at("target"), file, s);
  if (t.contains("target") && t.at("target").contains("steps_multiplier")) {
    s.training.target_steps_multiplier = t.at("target").at("steps_multiplier").get<double>();
  }
}

// parallelism.fsdp2 (types and ranges already validated by the key table). The mesh and an
// integer reshard_after_forward are checked against cluster.gpus where the step is planned
// (simulator/prediction/fsdp2.cpp), since sweeps and `ddpsim plan` vary the cluster.
void parse_fsdp2(const json& f, Fsdp2Config& c) {
  c.units = parse_enum(
      get_or_default<std::string>(f, "/parallelism/fsdp2/units"),
      {Fsdp2Units::kBlocks, Fsdp2Units::kLayers, Fsdp2Units::kModel, Fsdp2Units::kTorchtitan},
      fsdp2_units_name);
  if (auto r = f.find("reshard_after_forward"); r != f.end()) {
    if (r->is_boolean()) {
      c.reshard_after_forward = r->get<bool>();
    } else {
      c.reshard_after_forward = true;
      c.reshard_after_forward_group = r->get<int>();
    }
  }
  if (auto m = f.find("mesh"); m != f.end()) {
    if (m->contains("shard")) c.mesh_shard = m->at("shard").get<int>();
    if (m->contains("replicate")) c.mesh_replicate = m->at("replicate").get<int>();
  }
  if (auto mp = f.find("mixed_precision"); mp != f.end()) {
    if (mp->contains("param_dtype")) {
      c.param_dtype = parse_dtype(mp->at("param_dtype").get<std::string>());
    }
    if (mp->contains("reduce_dtype")) {
      c.reduce_dtype = parse_dtype(mp->at("reduce_dtype").get<std::string>());
    }
    if (mp->contains("output_dtype")) {
      c.output_dtype = parse_dtype(mp->at("output_dtype").get<std::string>());
    }
  }
  c.forward_prefetch = get_or_default<int>(f, "/parallelism/fsdp2/forward_prefetch");
  c.backward_prefetch = get_or_default<int>(f, "/parallelism/fsdp2/backward_prefetch");
  c.requires_gradient_sync = get_or_default<bool>(f, "/parallelism/fsdp2/requires_gradient_sync");
  c.requires_all_reduce = get_or_default<bool>(f, "/parallelism/fsdp2/requires_all_reduce");
  if (auto o = f.find("cpu_offload"); o != f.end()) {
    Fsdp2Config::CpuOffload off;
    off.pin_memory = get_or_default<bool>(*o, "/parallelism/fsdp2/cpu_offload/pin_memory");
    off.host_memory_bytes_per_s = o->at("host_memory_gbytes_per_s").get<double>() * 1e9;
    c.cpu_offload = off;
  }
}

void parse_parallelism(const json& p, const std::string& file, Scenario& s) {
  s.parallelism.strategy =
      parse_enum(get_or_default<std::string>(p, "/parallelism/strategy"),
                 {Strategy::kDdp, Strategy::kZero1, Strategy::kZero2, Strategy::kZero3,
                  Strategy::kFsdpFullShard, Strategy::kFsdpShardGradOp, Strategy::kFsdpHybrid,
                  Strategy::kFsdp2},
                 strategy_name);
  if (s.training.float8 && s.training.float8->fsdp_float8_all_gather &&
      s.parallelism.strategy != Strategy::kFsdp2) {
    throw InputError(file, "/training/float8/fsdp_float8_all_gather",
                     "false unless parallelism.strategy is fsdp2 (FSDP2's all-gather hooks cast "
                     "the weights)",
                     "true");
  }
  s.parallelism.bucket_cap_defaulted = !p.contains("bucket_cap_mb");
  s.parallelism.bucket_cap_mb = get_or_default<double>(p, "/parallelism/bucket_cap_mb");
  if (bucket_cap_mb_to_bytes(s.parallelism.bucket_cap_mb) < 1) {
    throw InputError(file, "/parallelism/bucket_cap_mb", "a cap of at least 1 byte (2^-20 MiB)",
                     fmt::format("{}", s.parallelism.bucket_cap_mb));
  }
  if (p.contains("first_bucket_mb")) {
    s.parallelism.first_bucket_mb = p.at("first_bucket_mb").get<double>();
    if (bucket_cap_mb_to_bytes(*s.parallelism.first_bucket_mb) < 1) {
      throw InputError(file, "/parallelism/first_bucket_mb",
                       "a limit of at least 1 byte (2^-20 MiB)",
                       fmt::format("{}", *s.parallelism.first_bucket_mb));
    }
  }
  s.parallelism.overlap = get_or_default<bool>(p, "/parallelism/overlap");
  s.parallelism.overlap_defaulted = !p.contains("overlap");
  s.parallelism.comm_hook =
      parse_comm_hook(get_or_default<std::string>(p, "/parallelism/comm_hook"));
  s.parallelism.algorithm = parse_enum(
      get_or_default<std::string>(p, "/parallelism/algorithm"),
      {CollectiveAlgorithm::kAuto, CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
       CollectiveAlgorithm::kHierarchical, CollectiveAlgorithm::kNvls},
      algorithm_name);
  s.parallelism.broadcast_buffers = get_or_default<bool>(p, "/parallelism/broadcast_buffers");
  s.parallelism.find_unused_parameters =
      get_or_default<bool>(p, "/parallelism/find_unused_parameters");
  s.parallelism.gradient_as_bucket_view =
      get_or_default<bool>(p, "/parallelism/gradient_as_bucket_view");
  s.parallelism.static_graph = get_or_default<bool>(p, "/parallelism/static_graph");
  s.parallelism.reduce_bucket_elements =
      get_or_default<double>(p, "/parallelism/reduce_bucket_size");
  s.parallelism.allgather_bucket_elements =
      get_or_default<double>(p, "/parallelism/allgather_bucket_size");
  s.parallelism.use_multi_rank_bucket_allreduce =
      get_or_default<bool>(p, "/parallelism/use_multi_rank_bucket_allreduce");
  s.parallelism.fsdp_prefetch =
      parse_enum(get_or_default<std::string>(p, "/parallelism/fsdp_prefetch"),
                 {FsdpPrefetch::kBackwardPre, FsdpPrefetch::kBackwardPost, FsdpPrefetch::kNone},
                 fsdp_prefetch_name);
  if (p.contains("fsdp2")) parse_fsdp2(p.at("fsdp2"), s.parallelism.fsdp2);
  if (p.contains("offload")) {
    const json& o = p.at("offload");
    const Strategy st = s.parallelism.strategy;
    if (st != Strategy::kZero1 && st != Strategy::kZero2 && st != Strategy::kZero3) {
      throw InputError(file, "/parallelism/offload",
                       "no offload section unless parallelism.strategy is zero1, zero2 or zero3 "
                       "(DeepSpeed ZeRO-Offload; FSDP2 has parallelism.fsdp2.cpu_offload)",
                       std::string("strategy \"") + strategy_name(st) + "\"");
    }
    ZeroOffload z;
    z.param = get_or_default<bool>(o, "/parallelism/offload/param");
    if (z.param && st != Strategy::kZero3) {
      throw InputError(file, "/parallelism/offload/param",
                       "false unless parallelism.strategy is zero3 (offload_param is stage 3's)",
                       "true");
    }
    z.host_adam_params_per_s = o.at("host_adam_params_per_s").get<double>();
    s.parallelism.offload = z;
  }

  // Combinations that cannot run.
  const auto hook = s.parallelism.comm_hook.kind;
  if (s.training.grad_reduce_dtype && hook != CommHook::Kind::kNone) {
    throw InputError(
        file, "/training/grad_reduce_dtype",
        "no grad_reduce_dtype together with a comm_hook (the hook sets the wire dtype)",
        std::string("\"") + dtype_name(*s.training.grad_reduce_dtype) + "\"");
  }
  if (is_sharded(s.parallelism.strategy) &&
      (hook == CommHook::Kind::kPowerSgd || hook == CommHook::Kind::kTopK)) {
    // PyTorch registers PowerSGD / top-k as DDP communication hooks; FSDP's register_comm_hook
    // takes only the default all-reduce / fp16 / bf16 hooks, and DeepSpeed ZeRO has no hook.
    throw InputError(file, "/parallelism/comm_hook",
                     std::string("none, fp16 or bf16 with strategy \"") +
                         strategy_name(s.parallelism.strategy) +
                         "\" (PowerSGD and top-k are DDP communication hooks)",
                     "\"" + s.parallelism.comm_hook.text + "\"");
  }
  if (s.parallelism.strategy == Strategy::kFsdpHybrid &&
      s.cluster.gpus % s.cluster.gpus_per_node != 0) {
    // HYBRID_SHARD shards within a node and replicates across nodes: PyTorch builds intra-node
    // groups of gpus_per_node ranks, so the world size must be a multiple of it.
    throw InputError(file, "/cluster/gpus_per_node",
                     "a divisor of cluster.gpus (" + std::to_string(s.cluster.gpus) +
                         ") with strategy \"fsdp_hybrid\" (it shards within a node)",
                     std::to_string(s.cluster.gpus_per_node));
  }
  if (s.parallelism.algorithm == CollectiveAlgorithm::kNvls &&
      s.hardware.intra_tuning.nvls_efficiency <= 0) {
    throw InputError(file, "/parallelism/algorithm",
                     "an algorithm the hardware supports (\"nvls\" needs an NVSwitch with "
                     "in-switch reduction: nvls_efficiency > 0)",
                     "\"nvls\"");
  }
}

void parse_simulation(const json& sim, const std::string& file, Scenario& s) {
  s.simulation.engine = get_or_default<std::string>(sim, "/simulation/engine") == "event"
                            ? Engine::kEvent
                            : Engine::kAnalytic;
  s.simulation.steps = get_or_default<int>(sim, "/simulation/steps");
  s.simulation.jitter_cv = get_or_default<double>(sim, "/simulation/jitter_cv");
  s.simulation.seed = get_or_default<std::uint64_t>(sim, "/simulation/seed");
  s.simulation.jitter_distribution =
      get_or_default<std::string>(sim, "/simulation/jitter_distribution") == "lognormal"
          ? JitterDistribution::kLogNormal
          : JitterDistribution::kNormal;
  s.simulation.straggler_rank = get_or_default<int>(sim, "/simulation/straggler_rank");
  s.simulation.straggler_slowdown = get_or_default<double>(sim, "/simulation/straggler_slowdown");
  s.simulation.interference = get_or_default<double>(sim, "/simulation/interference");
  s.simulation.local_sgd_period = get_or_default<int>(sim, "/simulation/local_sgd_period");
  s.simulation.staleness = get_or_default<int>(sim, "/simulation/staleness");
  s.simulation.trace_ranks = get_or_default<int>(sim, "/simulation/trace_ranks");
  s.simulation.interference_given = sim.contains("interference");
  s.simulation.network_flow = get_or_default<std::string>(sim, "/simulation/network") == "flow";
  s.simulation.background_traffic = get_or_default<double>(sim, "/simulation/background_traffic");
  s.simulation.concurrent_jobs = get_or_default<int>(sim, "/simulation/concurrent_jobs");
  if (!s.simulation.network_flow &&
      (s.simulation.background_traffic > 0 || s.simulation.concurrent_jobs > 1)) {
    // Competing traffic is only simulated by the flow network; silently ignoring it would
    // report an uncontended step for a contended cluster.
    throw InputError(file,
                     s.simulation.background_traffic > 0 ? "/simulation/background_traffic"
                                                         : "/simulation/concurrent_jobs",
                     "simulation.network \"flow\" (competing traffic needs the flow network)",
                     s.simulation.background_traffic > 0
                         ? fmt::format("{}", s.simulation.background_traffic)
                         : std::to_string(s.simulation.concurrent_jobs));
  }
  if (s.simulation.local_sgd_period > 1 && s.simulation.staleness > 0) {
    throw InputError(file, "/simulation/staleness",
                     "0 together with simulation.local_sgd_period > 1 (one relaxation at a time)",
                     std::to_string(s.simulation.staleness));
  }
  if ((s.simulation.local_sgd_period > 1 || s.simulation.staleness > 0) &&
      s.parallelism.strategy != Strategy::kDdp) {
    // Both modes replace DDP's per-step gradient all-reduce; ZeRO/FSDP shard the state that
    // a local step would need in full.
    throw InputError(
        file, s.simulation.staleness > 0 ? "/simulation/staleness" : "/simulation/local_sgd_period",
        "parallelism.strategy \"ddp\" (local SGD and stale-synchronous training "
        "keep a full replica per rank)",
        std::string("\"") + strategy_name(s.parallelism.strategy) + "\"");
  }
}

}  // namespace ddpsim::model::detail
