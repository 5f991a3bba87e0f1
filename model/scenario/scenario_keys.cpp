// The table of every scenario key. Hardware keys are shared with the preset files
// (scenarios/hardware/**), which are validated against re-rooted parts of this table.
#include "model/scenario/scenario_keys.hpp"

#include <optional>
#include <string>
#include <vector>

#include "model/builders/zoo.hpp"
#include "model/scenario/detail/hardware_keys.hpp"
#include "model/scenario/detail/key_rows.hpp"
#include "model/scenario/detail/reliability_keys.hpp"

namespace ddpsim::model {

using nlohmann::json;

using detail::add_hardware_keys;
using detail::add_reliability_keys;
using detail::array;
using detail::boolean;
using detail::boolean_or_integer;
using detail::integer;
using detail::number;
using detail::obj;
using detail::pattern_str;
using detail::required;
using detail::str;

namespace {

// An activation checkpointing value at `base` (training's, or a plan candidate): a boolean or
// {"mode", "option"}.
void add_checkpointing_keys(std::vector<KeySpec>& t, const std::string& base,
                            const std::string& help) {
  KeySpec ac = boolean(base, false, help);
  ac.type = KeyType::kBooleanOrObject;
  if (base.ends_with("/*")) ac.default_value = nullptr;
  t.push_back(ac);
  t.push_back(required(str(base + "/mode", nullptr, {"none", "full", "selective"},
                           "torchtitan's activation_checkpoint.mode")));
  KeySpec opt = str(base + "/option", nullptr, {"op"},
                    "mode selective: \"op\" (torchtitan's per-op policy) or K, checkpointing "
                    "blocks K-1, 2K-1, ... (torchtitan's selective_ac_option; \"2\" as a string "
                    "is read as 2)");
  opt.type = KeyType::kStringOrInteger;
  opt.pattern = "[1-9][0-9]{0,5}";
  opt.minimum = 1;
  opt.maximum = 1 << 20;
  t.push_back(opt);
}

// "/model": what is trained (a preset, a model file, a Hugging Face config, an MLP or layers).
void add_model_keys(std::vector<KeySpec>& t) {
  t.push_back(
      obj("/model", "what is trained: exactly one of preset, file, hf_config, mlp, layers", true));
  t.push_back(str("/model/preset", nullptr, model_preset_names(),
                  "model zoo entry (scenarios/models/<name>.json)"));
  t.push_back(
      str("/model/file", nullptr, {}, "a model file in the zoo format, relative to this file"));
  t.push_back(str("/model/hf_config", nullptr, {},
                  "a Hugging Face config.json (gpt2, llama, mistral, qwen2, phi3, gemma2, bert), "
                  "relative to this file"));
  t.push_back(integer("/model/seq_len", "tokens", nullptr, 1,
                      "tokens per sample (default: the config's maximum positions)", 1 << 24));
  t.push_back(str("/model/attention", "sdpa", {"sdpa", "flash", "eager", "triton"},
                  "how a transformer's attention runs: sdpa (torch scaled_dot_product_attention, "
                  "Hugging Face's default: a fused flash or memory-efficient kernel), flash (the "
                  "flash-attn package; fp16/bf16 on Ampere or newer), eager (s x s scores "
                  "materialised and kept), triton (FlashAttention's Triton port, MPT's "
                  "attn_impl: triton; fp16/bf16 on Ampere or newer)"));
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
    l.maximum = 100000;  // 1e5 layers: seconds and ~200 MB (tests/reliability/extremes.json)
    t.push_back(l);
  }
  t.push_back(obj("/model/layers/*", "one layer"));
  t.push_back(required(str("/model/layers/*/name", nullptr, {}, "layer name")));
  t.push_back(required(integer("/model/layers/*/params", "parameters", nullptr, 0,
                               "trainable parameters of the layer", 1e13)));
  t.push_back(required(number("/model/layers/*/fwd_flops_per_sample", "FLOP", nullptr, 0, false,
                              "forward FLOPs per sample (backward is 2x)", 1e21)));
  t.push_back(number("/model/layers/*/activation_bytes_per_sample", "bytes", 0, 0, false,
                     "activation bytes kept for backward per sample", 1e15));
}

// "/cluster": how many GPUs.
void add_cluster_keys(std::vector<KeySpec>& t) {
  t.push_back(obj("/cluster", "how many GPUs", true));
  t.push_back(required(integer("/cluster/gpus", "GPUs", nullptr, 1,
                               "data-parallel GPUs; above gpus_per_node a multiple of it", 1e7)));
  t.push_back(integer("/cluster/gpus_per_node", "GPUs", nullptr, 1,
                      "GPUs per node (default: the hardware's)", 1024));
}

// "/training": batch, precision, optimizer, learning rate and target.
void add_training_keys(std::vector<KeySpec>& t) {
  t.push_back(obj("/training", "batch, precision, optimizer, learning rate and target", true));
  t.push_back(required(integer("/training/per_gpu_batch", "samples", nullptr, 1,
                               "micro-batch per GPU per forward/backward", 1e9)));
  t.push_back(integer("/training/grad_accumulation", "micro-batches", 1, 1,
                      "micro-batches per optimizer step (no_sync for all but the last)", 1e6));
  t.push_back(str("/training/precision", "fp32", {"fp32", "amp_bf16", "amp_fp16", "bf16", "fp16"},
                  "fp32; amp_* = autocast (fp32 params and grads); bf16/fp16 = half-precision "
                  "params and grads with fp32 master weights (DeepSpeed's bf16.enabled / "
                  "fp16.enabled). torchtitan's bf16 (mixed_precision_param bfloat16, "
                  "mixed_precision_reduce float32) is amp_bf16 with strategy fsdp2 and "
                  "parallelism.fsdp2.mixed_precision {param_dtype bf16, reduce_dtype fp32}; "
                  "PyTorch FSDP1's MixedPrecision(param_dtype=bf16) is amp_bf16 too"));
  t.push_back(str("/training/optimizer", "adam", {"sgd", "momentum", "adam", "adamw"},
                  "optimizer (its state bytes per parameter follow from the precision)"));
  t.push_back(str("/training/optimizer_impl", "foreach", {"foreach", "fused", "for_loop"},
                  "how the optimizer step runs: PyTorch's foreach multi-tensor kernels (its CUDA "
                  "default), one fused kernel (fused=True; DeepSpeed's FusedAdam, the default "
                  "for adam and adamw under zero1/2/3 when left out) or a for-loop over the "
                  "tensors (foreach=False; "
                  "costed with foreach's memory passes, not its per-tensor launches)"));
  t.push_back(str("/training/grad_reduce_dtype", nullptr, {"fp32", "fp16", "bf16"},
                  "dtype of the gradients on the wire (default: the gradients' dtype)"));
  t.push_back(boolean("/training/allow_tf32_matmul", false,
                      "torch.backends.cuda.matmul.allow_tf32 (set also by "
                      "torch.set_float32_matmul_precision('high')): fp32 matmuls (nn.Linear, "
                      "bmm, fp32 attention) run on TF32 tensor cores on GPUs with a tf32 peak. "
                      "PyTorch's default is false since 1.12 (true in 1.7-1.11)"));
  t.push_back(boolean("/training/allow_tf32_cudnn", true,
                      "torch.backends.cudnn.allow_tf32: fp32 convolutions (cuDNN) run on TF32 "
                      "tensor cores on GPUs with a tf32 peak. PyTorch's default is true"));
  t.push_back(boolean("/training/channels_last", false,
                      "activations in torch.channels_last (NHWC) memory format "
                      "(model.to(memory_format=torch.channels_last)). PyTorch's default is "
                      "contiguous (NCHW): cuDNN then transposes each tensor-core convolution's "
                      "operands to NHWC and its result back, at HBM speed"));
  add_checkpointing_keys(
      t, "/training/activation_checkpointing",
      "which activations are recomputed in backward, as torchtitan's [activation_checkpoint] "
      "runs it: false (none), true (full: every transformer block keeps only its input and "
      "runs its forward again), or {\"mode\": \"selective\", \"option\": \"op\"} (op-level: "
      "the outputs of matmuls, every second one excepted, and of attention are kept, the rest "
      "recomputed) or {\"mode\": \"selective\", \"option\": K} (every K-th block full)");
  t.push_back(boolean(
      "/training/compile", false,
      "torch.compile on the model, as torchtitan's [compile] enable compiles each transformer "
      "block: Inductor fuses each chain of element-wise ops (RMSNorm, rotary, SiLU x up, "
      "residual adds, GeLU) into one kernel priced at its inputs and outputs, with fewer "
      "launches; matmuls and attention run the same kernels as in eager"));
  t.push_back(obj("/training/float8",
                  "torchao float8 training as torchtitan's converters = [\"float8\"] applies it: "
                  "nn.Linear modules become Float8Linear (fp8 matmuls with dynamic scales; the "
                  "casts, amax reductions and transposes priced as they run); needs float8 "
                  "tensor cores (compute capability 8.9 or newer)"));
  t.push_back(str("/training/float8/recipe", "tensorwise",
                  {"tensorwise", "rowwise", "rowwise_with_gw_hp"},
                  "torchao's Float8LinearConfig recipe: per-tensor scales with all three matmuls "
                  "in fp8; per-row scales; or per-row with the weight gradient in bf16"));
  t.push_back(boolean("/training/float8/fsdp_float8_all_gather", false,
                      "FSDP2 all-gathers the float8 weights in fp8 (1 byte per element), cast "
                      "before the all-gather (torchao enable_fsdp_float8_all_gather; tensorwise "
                      "and strategy fsdp2 only)"));
  t.push_back(boolean("/training/float8/precompute_scale", false,
                      "precompute_float8_dynamic_scale_for_fsdp after each optimizer step: one "
                      "fused amax and one all-reduce instead of an amax all-reduce per weight per "
                      "all-gather (with fsdp_float8_all_gather)"));
  {
    KeySpec f = array("/training/float8/filter_fqns", 0,
                      "modules left in high precision: a linear whose name contains one of "
                      "these (torchtitan's filter_fqns; its \"output\" is \"lm_head\" here); "
                      "linears with dimensions not multiples of 16 always are");
    f.maximum = 1000;
    t.push_back(f);
  }
  t.push_back(str("/training/float8/filter_fqns/*", nullptr, {}, "a module name or part of one"));
  t.push_back(number("/training/single_gpu_step_s", "s", nullptr, 0, true,
                     "a measured 1-GPU step time at per_gpu_batch; replaces the FLOP estimate",
                     1e7));
  t.push_back(obj("/training/input_pipeline",
                  "the input pipeline's measured rate (DataLoader workers decoding and augmenting "
                  "on the CPUs), one of the two keys: a step takes at least its samples over it"));
  t.push_back(number("/training/input_pipeline/samples_per_s_per_gpu", "samples/s", nullptr, 0,
                     true, "samples per second one GPU's loader delivers", 1e12));
  t.push_back(number("/training/input_pipeline/samples_per_s_per_node", "samples/s", nullptr, 0,
                     true,
                     "samples per second a node's CPUs deliver, shared by its GPUs (one GPU "
                     "alone gets all of it)",
                     1e12));
  t.push_back(obj("/training/lr", "learning-rate scaling with the global batch"));
  t.push_back(required(
      number("/training/lr/base", "", nullptr, 0, true, "learning rate at base_batch", 1e6)));
  t.push_back(required(integer("/training/lr/base_batch", "samples", nullptr, 1,
                               "global batch the base rate was tuned for", 1e12)));
  t.push_back(str("/training/lr/scaling", "linear", {"linear", "sqrt", "none"},
                  "linear (Goyal et al. 2017) or square-root scaling"));
  t.push_back(integer("/training/lr/warmup_steps", "steps", 0, 0, "gradual warmup steps", 1e12));
  t.push_back(obj("/training/target", "what 'trained' means"));
  t.push_back(obj("/training/target/critical_batch",
                  "McCandlish et al. 2018: S = S_min (1 + B_noise / B)"));
  t.push_back(required(number("/training/target/critical_batch/b_noise", "samples", nullptr, 0,
                              true, "gradient noise scale B_noise", 1e15)));
  t.push_back(required(number("/training/target/critical_batch/s_min", "steps", nullptr, 0, true,
                              "steps needed at infinite batch", 1e15)));
  t.push_back(number("/training/target/tokens", "tokens", nullptr, 0, true,
                     "train on this many tokens (samples = tokens / seq_len; steps = "
                     "ceil(samples / global batch)): time to train, GPU-hours and cost without a "
                     "critical-batch model",
                     1e18));
  t.push_back(number("/training/target/samples", "samples", nullptr, 0, true,
                     "train on this many samples (steps = ceil(samples / global batch))", 1e18));
  t.push_back(number("/training/target/steps_multiplier", "", nullptr, 0, true,
                     "steps to the target with simulation.local_sgd_period > 1 or "
                     "simulation.staleness > 0, relative to synchronous SGD (measure it: without "
                     "it those runs report step time only)",
                     1e6));
}

// "/parallelism": the strategy and the knobs of DDP, ZeRO and FSDP.
void add_parallelism_keys(std::vector<KeySpec>& t) {
  t.push_back(obj("/parallelism", "data-parallel strategy and its knobs"));
  t.push_back(
      str("/parallelism/strategy", "ddp",
          {"ddp", "zero1", "zero2", "zero3", "fsdp_full_shard", "fsdp_shard_grad_op", "fsdp_hybrid",
           "fsdp2"},
          "data-parallel strategy (fsdp2: PyTorch's fully_shard, knobs under parallelism.fsdp2)"));
  // At least 2^-20 MiB: one byte, the least cap DDP's int(bucket_cap_mb * 2^20) can hold (an
  // import that wrote 1e-9 passed the key and failed later, in the cross-key check).
  constexpr double kOneByteMiB = 1.0 / 1048576.0;
  t.push_back(number("/parallelism/bucket_cap_mb", "MiB", 25, kOneByteMiB, false,
                     "DDP bucket_cap_mb (MiB); leaving it out also enables the 1 MiB first bucket",
                     1e6));
  t.push_back(number("/parallelism/first_bucket_mb", "MiB", nullptr, kOneByteMiB, false,
                     "DDP's first bucket limit (dist._DEFAULT_FIRST_BUCKET_BYTES, MiB) whatever "
                     "bucket_cap_mb is, as torch 1.13 buckets (1); left out: 1 MiB only when "
                     "bucket_cap_mb is left out, as newer PyTorch buckets",
                     1e6));
  t.push_back(boolean("/parallelism/overlap", true,
                      "launch each bucket's all-reduce during backward (false: after it). "
                      "zero1/zero2: DeepSpeed's overlap_comm, false when left out (its default "
                      "below stage 3): each bucket is then reduced on the compute stream when it "
                      "fills, which waits for it"));
  t.push_back(
      pattern_str("/parallelism/comm_hook", "none",
                  "none|fp16|bf16|powersgd:[1-9][0-9]{0,3}|topk:(0?\\.[0-9]*[1-9][0-9]*|1(\\.0*)?)",
                  "DDP communication hook: none, fp16, bf16, powersgd:RANK, topk:FRACTION"));
  t.push_back(str("/parallelism/algorithm", "auto",
                  {"auto", "ring", "tree", "hierarchical", "nvls"},
                  "collective algorithm; auto picks the fastest of those NCCL has here: ring, "
                  "tree across nodes, nvls on one NVSwitch node that reduces, nvls_tree across "
                  "such nodes, pat for all-gather and reduce-scatter with one GPU per node (NCCL "
                  "has no hierarchical all-reduce: only when asked for)"));
  t.push_back(
      boolean("/parallelism/broadcast_buffers", true,
              "DDP broadcasts module buffers (BatchNorm statistics) from rank 0 every forward"));
  t.push_back(boolean("/parallelism/find_unused_parameters", false,
                      "DDP walks the autograd graph each step and keeps the initial buckets"));
  t.push_back(boolean("/parallelism/gradient_as_bucket_view", false,
                      "gradients are views into the buckets (no extra gradient copy in memory)"));
  t.push_back(boolean("/parallelism/static_graph", false, "DDP static_graph=True"));
  t.push_back(number("/parallelism/reduce_bucket_size", "elements", 5e8, 1e6, false,
                     "DeepSpeed ZeRO reduce_bucket_size: gradient elements per reduce bucket "
                     "(zero1, zero2, zero3)",
                     1e13));
  t.push_back(number("/parallelism/allgather_bucket_size", "elements", 5e8, 1e6, false,
                     "DeepSpeed ZeRO allgather_bucket_size: elements per all-gather of the "
                     "updated parameters after the optimizer step (zero1, zero2)",
                     1e13));
  t.push_back(boolean("/parallelism/use_multi_rank_bucket_allreduce", true,
                      "DeepSpeed ZeRO-1/2 use_multi_rank_bucket_allreduce: one all-reduce per "
                      "gradient bucket (false: one dist.reduce per rank owning a slice of it)"));
  t.push_back(str("/parallelism/fsdp_prefetch", "backward_pre",
                  {"backward_pre", "backward_post", "none"},
                  "FSDP backward_prefetch: the next unit's all-gather is issued before the "
                  "current unit's gradient compute (backward_pre), after it (backward_post) or "
                  "behind its reduce-scatter (none)"));
}

// "/parallelism/offload": DeepSpeed ZeRO-Offload.
void add_offload_keys(std::vector<KeySpec>& t) {
  t.push_back(obj("/parallelism/offload",
                  "DeepSpeed ZeRO-Offload (strategy zero1, zero2 or zero3; zero_optimization."
                  "offload_optimizer device \"cpu\"): fp32 gradients of each rank's partition "
                  "go to the host over PCIe, DeepSpeedCPUAdam steps them there, the updated "
                  "16-bit partition comes back"));
  t.push_back(boolean("/parallelism/offload/param", false,
                      "zero3 offload_param device \"cpu\": the 16-bit parameter partitions live "
                      "on the host and cross PCIe before every all-gather"));
  t.push_back(required(number(
      "/parallelism/offload/host_adam_params_per_s", "parameters/s", nullptr, 0, true,
      "DeepSpeedCPUAdam's rate on your host: parameters one rank's step updates per second with "
      "the cores that rank gets (time one step of deepspeed.ops.adam.DeepSpeedCPUAdam on a "
      "partition; no preset invents it)",
      1e15)));
}

// "/parallelism/fsdp2": fully_shard's arguments and FSDPModule switches.
void add_fsdp2_keys(std::vector<KeySpec>& t) {
  const std::string f2 = "/parallelism/fsdp2";
  t.push_back(obj(f2, "strategy fsdp2: fully_shard's arguments and FSDPModule switches"));
  t.push_back(str(f2 + "/units", "blocks", {"blocks", "layers", "model", "torchtitan"},
                  "modules given their own fully_shard: every transformer block (the rest is "
                  "the root's group, as torchtitan wrapped them in 2024), every layer with "
                  "parameters, the root only, or torchtitan's grouping since 2025 (apply_fsdp: "
                  "the embeddings, every block, and [final norm, output] as one group that does "
                  "not reshard after forward)"));
  t.push_back(boolean_or_integer(
      f2 + "/reshard_after_forward", true, 1,
      "free each unit's unsharded parameters after its forward and all-gather them again in "
      "backward (true), keep them (false), or reshard to this many ranks (an integer dividing "
      "the shard size) and all-gather within them in backward; the root never reshards"));
  t.push_back(obj(f2 + "/mesh", "2-D device mesh (HSDP): replicate x shard = cluster.gpus"));
  t.push_back(integer(f2 + "/mesh/shard", "GPUs", nullptr, 1,
                      "ranks each parameter is sharded over (default: every GPU)", 1 << 20));
  t.push_back(integer(f2 + "/mesh/replicate", "replicas", nullptr, 1,
                      "replicas of each shard, all-reduced after the reduce-scatter (default: "
                      "cluster.gpus / shard)",
                      1 << 20));
  t.push_back(obj(f2 + "/mixed_precision", "MixedPrecisionPolicy"));
  for (const char* k : {"param_dtype", "reduce_dtype", "output_dtype"}) {
    t.push_back(str(f2 + "/mixed_precision/" + k, nullptr, {"fp32", "bf16", "fp16"},
                    std::string("MixedPrecisionPolicy ") + k +
                        (std::string(k) == "param_dtype"
                             ? ": dtype of the all-gather and the unsharded parameters (default: "
                               "the parameters' own)"
                         : std::string(k) == "reduce_dtype"
                             ? ": dtype of the reduce-scatter (default: param_dtype)"
                             : ": dtype of the root's outputs (a cast of one activation)")));
  }
  t.push_back(integer(f2 + "/forward_prefetch", "units", 0, 0,
                      "set_modules_to_forward_prefetch depth: each unit's pre-forward issues the "
                      "next N units' all-gathers (0: implicit prefetching only)",
                      64));
  t.push_back(integer(f2 + "/backward_prefetch", "units", 1, 0,
                      "set_modules_to_backward_prefetch depth (1: FSDP2's default, the next "
                      "unit; 0: each unit gathers in its own pre-backward)",
                      64));
  t.push_back(boolean(f2 + "/requires_gradient_sync", true,
                      "false: set_requires_gradient_sync(False) in every micro-batch but the "
                      "last (no reduce-scatter; unsharded gradients accumulate)"));
  t.push_back(obj(f2 + "/cpu_offload",
                  "CPUOffloadPolicy: sharded parameters, gradients and optimizer states in host "
                  "memory, the optimizer step on the CPU"));
  t.push_back(boolean(f2 + "/cpu_offload/pin_memory", true,
                      "pinned host buffers (false: the gradients' device-to-host copies are "
                      "synchronous and hold the backward)"));
  t.push_back(
      required(number(f2 + "/cpu_offload/host_memory_gbytes_per_s", "GB/s", nullptr, 0, true,
                      "host memory bandwidth of one host (STREAM-like), shared by its "
                      "GPUs' CPU optimizer steps",
                      1e6)));
  t.push_back(boolean(f2 + "/requires_all_reduce", true,
                      "HSDP: false: set_requires_all_reduce(False) in every micro-batch but the "
                      "last (the reduce-scattered shards accumulate without the all-reduce)"));
}

// "/simulation": which engine and how.
void add_simulation_keys(std::vector<KeySpec>& t) {
  t.push_back(obj("/simulation", "which engine and how"));
  t.push_back(str("/simulation/engine", "analytic", {"analytic", "event"}, "prediction engine"));
  t.push_back(integer("/simulation/steps", "steps", 5, 1, "steps simulated in a row", 1e6));
  t.push_back(number("/simulation/jitter_cv", "", 0.0, 0, false,
                     "per-rank compute-time coefficient of variation", 10));
  t.push_back(integer("/simulation/seed", "", 1, 0, "random seed", 1.8e19));
  t.push_back(str("/simulation/jitter_distribution", "normal", {"normal", "lognormal"},
                  "event engine: per-layer compute noise, Normal(1, jitter_cv) clipped at 0.05 or "
                  "log-normal with mean 1 and that cv"));
  t.push_back(integer("/simulation/straggler_rank", "", -1, -1,
                      "event engine: this rank computes straggler_slowdown slower (-1: none; "
                      "otherwise below cluster.gpus at every sweep point)",
                      1e7));
  t.push_back(number("/simulation/straggler_slowdown", "", 0.0, 0, false,
                     "event engine: 0.10 makes the straggler's every kernel 10% longer", 100));
  t.push_back(number("/simulation/interference", "", 1.0, 1, false,
                     "compute slowdown while a collective runs (1: none; both engines, every "
                     "strategy); default: the profile's measured factor, else sm_count / "
                     "(sm_count - NCCL channels)",
                     100));
  t.push_back(str("/simulation/network", "closed_form", {"closed_form", "flow"},
                  "event engine: closed_form times each collective by the alpha-beta formula "
                  "alone; flow runs it as flows on the cluster graph (max-min fair link "
                  "sharing) with the competing traffic of background_traffic and "
                  "concurrent_jobs, and reports per collective contention_slowdown"));
  t.push_back(number("/simulation/background_traffic", "", 0.0, 0, false,
                     "network flow: share of every NIC, leaf and spine link that other traffic "
                     "wants (0.5: half), given a max-min fair share",
                     0.99));
  t.push_back(integer("/simulation/concurrent_jobs", "jobs", 1, 1,
                      "network flow: this job plus identical jobs on other GPUs of the same "
                      "nodes that run the same collectives at the same moments over the same "
                      "NICs, leaves and spine (2: two rings per NIC)",
                      64));
  t.push_back(integer("/simulation/local_sgd_period", "steps", 1, 1,
                      "event engine, ddp: local SGD (Lin et al. 2020) averages the parameters "
                      "every H steps and skips the gradient all-reduce in between (1: "
                      "synchronous)",
                      1e6));
  t.push_back(integer("/simulation/staleness", "steps", 0, 0,
                      "event engine, ddp: stale-synchronous parallel (Ho et al. 2013), a rank "
                      "may run this many steps ahead of the slowest (0: synchronous)",
                      1e6));
  t.push_back(integer("/simulation/trace_ranks", "ranks", 64, 1,
                      "--trace: the first trace_ranks ranks (plus the slowest) are written", 1e7));
}

// "/sweep" and "/plan": what `ddpsim predict` sweeps and `ddpsim plan` chooses among.
void add_sweep_and_plan_keys(std::vector<KeySpec>& t) {
  {
    KeySpec s = obj("/sweep",
                    "axes to sweep: {\"cluster.gpus\": [1, 8, 64]}; the Cartesian "
                    "product of all axes is predicted");
    t.push_back(s);
    KeySpec axis = array("/sweep/{}", 1, "values of one scenario key, written as a dotted path");
    axis.maximum = 100000;
    t.push_back(axis);
  }

  // `ddpsim plan`: candidate lists (each element validated by its "/*" row) and constraints.
  t.push_back(
      obj("/plan", "ddpsim plan: candidates (Cartesian product of the lists) and constraints"));
  {
    KeySpec g = array("/plan/gpus", 1,
                      "candidate cluster sizes (default: the powers of two from 1 to 4096 that "
                      "are at most gpus_per_node or a multiple of it)");
    g.maximum = 10000;
    t.push_back(g);
  }
  t.push_back(integer("/plan/gpus/*", "GPUs", nullptr, 1,
                      "a cluster size; above gpus_per_node a multiple of it", 1e7));
  t.push_back(
      integer("/plan/min_gpus", "GPUs", nullptr, 1, "the smallest cluster size searched", 1e7));
  t.push_back(integer("/plan/max_gpus", "GPUs", nullptr, 1,
                      "the GPUs one can have: the largest cluster size searched (the default "
                      "list goes up to it, 4096 without it)",
                      1e7));
  {
    KeySpec hw = array("/plan/hardware", 1,
                       "systems to choose among, each a hardware section (preset, file or "
                       "explicit keys) with its own price and GPU range (default: /hardware "
                       "alone); without /hardware the first one is the scenario's hardware");
    hw.maximum = 16;
    t.push_back(hw);
  }
  t.push_back(obj("/plan/hardware/*", "a system: a hardware section and what it costs"));
  add_hardware_keys(t, "/plan/hardware/*");
  t.push_back(number("/plan/hardware/*/gpu_hour_usd", "USD/GPU-hour", nullptr, 0, false,
                     "this system's price of one GPU for one hour (default: "
                     "pricing.gpu_hour_usd)",
                     1e6));
  t.push_back(integer("/plan/hardware/*/min_gpus", "GPUs", nullptr, 1,
                      "this system's smallest cluster size (default: plan.min_gpus)", 1e7));
  t.push_back(integer("/plan/hardware/*/max_gpus", "GPUs", nullptr, 1,
                      "how many of this system's GPUs one can have (default: plan.max_gpus)", 1e7));
  {
    KeySpec b = array("/plan/per_gpu_batch", 1,
                      "candidate micro-batches per GPU (default: [training.per_gpu_batch])");
    b.maximum = 10000;
    t.push_back(b);
  }
  t.push_back(integer("/plan/per_gpu_batch/*", "samples", nullptr, 1, "a micro-batch", 1e9));
  {
    KeySpec k = array("/plan/grad_accumulation", 1,
                      "candidate accumulation steps (default: [training.grad_accumulation])");
    k.maximum = 10000;
    t.push_back(k);
  }
  t.push_back(integer("/plan/grad_accumulation/*", "micro-batches", nullptr, 1,
                      "micro-batches per optimizer step", 1e6));
  {
    KeySpec c = array("/plan/bucket_cap_mb", 1,
                      "candidate DDP bucket caps (default: [parallelism.bucket_cap_mb])");
    c.maximum = 10000;
    t.push_back(c);
  }
  t.push_back(
      number("/plan/bucket_cap_mb/*", "MiB", nullptr, 1.0 / 1048576.0, false, "a bucket cap", 1e6));
  {
    KeySpec h = array("/plan/comm_hook", 1,
                      "candidate communication hooks (default: [parallelism.comm_hook])");
    h.maximum = 100;
    t.push_back(h);
  }
  {
    KeySpec st = array("/plan/strategy", 1,
                       "candidate data-parallel strategies (default: [parallelism.strategy])");
    st.maximum = 8;
    t.push_back(st);
  }
  t.push_back(str("/plan/strategy/*", nullptr,
                  {"ddp", "zero1", "zero2", "zero3", "fsdp_full_shard", "fsdp_shard_grad_op",
                   "fsdp_hybrid", "fsdp2"},
                  "a strategy (fsdp2 with parallelism.fsdp2's mesh and resharding)"));
  {
    KeySpec ac = array("/plan/activation_checkpointing", 1,
                       "candidate activation checkpointing modes, each a "
                       "training.activation_checkpointing value (default: [that value])");
    ac.maximum = 16;
    t.push_back(ac);
    add_checkpointing_keys(t, "/plan/activation_checkpointing/*",
                           "a mode: false, true or {\"mode\", \"option\"}");
  }
  t.push_back(
      pattern_str("/plan/comm_hook/*", nullptr,
                  "none|fp16|bf16|powersgd:[1-9][0-9]{0,3}|topk:(0?\\.[0-9]*[1-9][0-9]*|1(\\.0*)?)",
                  "a hook: none, fp16, bf16, powersgd:RANK, topk:FRACTION"));
  t.push_back(number("/plan/deadline_hours", "h", nullptr, 0, true,
                     "reject configurations whose time to train exceeds this (needs "
                     "training.target)"));
  t.push_back(number("/plan/budget_usd", "USD", nullptr, 0, true,
                     "reject configurations whose cost to train exceeds this (needs "
                     "pricing.gpu_hour_usd and training.target)"));
  t.push_back(number("/plan/memory_margin", "", 0.05, 0, false,
                     "a configuration must fit in (1 - margin) x GPU memory", 0.5));
  t.push_back(integer("/plan/max_global_batch", "samples", nullptr, 1,
                      "reject global batches above this (e.g. the critical batch beyond which "
                      "more samples buy few steps)",
                      1e15));
  t.push_back(str("/plan/objective", "time", {"time", "cost", "gpu_hours"},
                  "what the chosen configuration minimises (ties: fewer GPUs, then smaller "
                  "global batch)"));
}

std::vector<KeySpec> build_scenario_keys() {
  std::vector<KeySpec> t;
  t.push_back(str("/name", "", {}, "a name for the scenario, shown in reports"));
  t.push_back(str("/description", "", {}, "free text"));
  t.push_back(pattern_str("/$schema", nullptr, ".*", "JSON Schema reference for editors"));
  add_model_keys(t);
  t.push_back(obj("/hardware", "the machines: preset, file, profile or explicit keys", true));
  add_hardware_keys(t, "/hardware");
  add_cluster_keys(t);
  add_training_keys(t);
  add_parallelism_keys(t);
  add_fsdp2_keys(t);
  add_offload_keys(t);
  add_simulation_keys(t);
  add_sweep_and_plan_keys(t);
  add_reliability_keys(t);
  return t;
}

// Sub-tables for preset files: the rows under `prefix`, re-rooted.

}  // namespace

const KeyTable& scenario_keys() {
  static const KeyTable table{"scenario", build_scenario_keys()};
  return table;
}

}  // namespace ddpsim::model
