// scenario.hpp: a scenario file (strict JSON) resolved into typed inputs.
//
// The scenario keys are fixed by docs/DESIGN.md; one KeyTable (scenario_keys.hpp) drives
// validation, `ddpsim schema` and docs/scenario-keys.md. Presets are resolved by name from
// scenarios/models and scenarios/hardware, files by path relative to the scenario file, and keys
// beside a preset override its values ({"preset": "dgx-h100", "inter_node": {"bandwidth_gbps":
// 400}}). Every problem throws InputError naming the file and JSON pointer (exit code 2).
//
//   Scenario s = load_scenario("scenarios/examples/gpt2-xl-h100.json");
//   for (const Scenario& point : expand_sweep(s)) { ... }
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware/hardware.hpp"
#include "model/json_file.hpp"  // read_json_file, parse_json_text: scenario readers use them
#include "model/scenario/reliability.hpp"
#include "model/workload/checkpointing.hpp"
#include "model/workload/float8.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::model {

enum class Precision { kFp32, kAmpBf16, kAmpFp16, kBf16, kFp16 };
enum class Optimizer { kSgd, kMomentum, kAdam, kAdamW };
/// How the optimizer step runs: PyTorch's foreach (multi-tensor kernels, one per operation,
/// its CUDA default), one fused kernel (torch fused=True, DeepSpeed's FusedAdam) or a for-loop
/// over the tensors (foreach=False).
enum class OptimizerImpl { kForeach, kFused, kForLoop };
enum class Strategy {
  kDdp,
  kZero1,
  kZero2,
  kZero3,
  kFsdpFullShard,
  kFsdpShardGradOp,
  kFsdpHybrid,
  kFsdp2  ///< PyTorch's fully_shard (FSDP2), knobs in ParallelismConfig::fsdp2
};
/// kNvlsTree (NCCL's NVLS_TREE: in-switch reduction inside each node, a tree across nodes) is
/// chosen by kAuto or kNvls across nodes of an NVLS-capable NVSwitch; kPat (NCCL's PAT, Parallel
/// Aggregated Trees, from 2.23) by kAuto for all-gather and reduce-scatter with one GPU per node.
/// Neither is a scenario value.
enum class CollectiveAlgorithm { kAuto, kRing, kTree, kHierarchical, kNvls, kNvlsTree, kPat };
/// NCCL's protocols (NCCL_PROTO: LL, LL128, Simple); kAuto lets the tuner choose.
enum class CollectiveProtocol { kAuto, kLL, kLL128, kSimple };
enum class Engine { kAnalytic, kEvent };
/// Per-layer compute noise of the event engine: Normal(1, cv) clipped at 0.05, or log-normal
/// with mean 1 and coefficient of variation cv.
enum class JitterDistribution { kNormal, kLogNormal };
enum class LrScaling { kLinear, kSqrt, kNone };
/// FSDP's backward_prefetch (BackwardPrefetch.BACKWARD_PRE / BACKWARD_POST / None).
enum class FsdpPrefetch { kBackwardPre, kBackwardPost, kNone };

const char* precision_name(Precision p);
const char* optimizer_name(Optimizer o);
const char* optimizer_impl_name(OptimizerImpl i);  ///< "foreach", "fused", "for_loop"
const char* strategy_name(Strategy s);
const char* algorithm_name(CollectiveAlgorithm a);
const char* protocol_name(CollectiveProtocol p);  ///< "auto", "ll", "ll128", "simple"
/// The inverses of algorithm_name and protocol_name; nullopt for any other text.
std::optional<CollectiveAlgorithm> algorithm_from_name(const std::string& name);
std::optional<CollectiveProtocol> protocol_from_name(const std::string& name);
/// NCCL_ALGO / NCCL_PROTO as NCCL's environment spells them ("Ring", "NVLSTree", "LL128"),
/// case-insensitively; kAuto for anything that is not one choice (empty, a list "Tree,Ring", an
/// exclusion "^NVLS").
CollectiveAlgorithm algorithm_from_nccl_env(std::string text);
CollectiveProtocol protocol_from_nccl_env(std::string text);
const char* fsdp_prefetch_name(FsdpPrefetch p);  ///< "backward_pre", "backward_post", "none"
/// Which modules get their own fully_shard call (FSDP2): every transformer block (the rest of the
/// model is the root's group), every layer with parameters, or only the root (one group).
enum class Fsdp2Units { kBlocks, kLayers, kModel, kTorchtitan };
/// "blocks", "layers", "model", "torchtitan"
const char* fsdp2_units_name(Fsdp2Units u);
/// True for every strategy but ddp (ZeRO-1/2/3 and the FSDP sharding strategies).
inline bool is_sharded(Strategy s) { return s != Strategy::kDdp; }

/// Dtype the GEMMs run in for a training precision (fp32 -> fp32; amp_bf16, bf16 -> bf16; ...).
DType compute_dtype(Precision p);
/// Dtype of the gradients DDP buckets (autocast keeps fp32 parameters and gradients).
DType grad_dtype(Precision p);

struct CommHook {
  enum class Kind { kNone, kFp16, kBf16, kPowerSgd, kTopK } kind = Kind::kNone;
  int rank = 0;         ///< PowerSGD matrix_approximation_rank
  double fraction = 0;  ///< top-k: fraction of elements kept
  std::string text = "none";
};

struct ClusterConfig {
  int gpus = 1;
  int gpus_per_node = 8;
  /// Nodes (or hosts, when gpus_per_node is a host's GPU count) the GPUs occupy, rounded up: 6
  /// GPUs on GB200's 4-GPU trays are 2 hosts, not 1. (A scenario's cluster.gpus above one node
  /// is a multiple of gpus_per_node; a host is smaller than the NVLink domain it sits in.)
  int nodes() const {
    return gpus <= gpus_per_node ? 1 : (gpus + gpus_per_node - 1) / gpus_per_node;
  }
};

struct LrConfig {
  double base = 0;
  std::int64_t base_batch = 0;
  LrScaling scaling = LrScaling::kLinear;
  std::int64_t warmup_steps = 0;
};

struct CriticalBatchTarget {
  double b_noise = 0;  ///< McCandlish et al.'s B_noise (critical batch), samples
  double s_min = 0;    ///< steps at infinite batch
};

struct TrainingConfig {
  std::int64_t per_gpu_batch = 1;
  int grad_accumulation = 1;
  Precision precision = Precision::kFp32;
  Optimizer optimizer = Optimizer::kAdam;
  OptimizerImpl optimizer_impl = OptimizerImpl::kForeach;
  /// training.optimizer_impl left out: PyTorch's foreach, except Adam/AdamW under DeepSpeed
  /// (zero1/2/3), which is FusedAdam (resolved by optimizer_impl_for).
  bool optimizer_impl_defaulted = true;
  std::optional<DType> grad_reduce_dtype;
  std::optional<double> single_gpu_step_s;
  /// training.input_pipeline: how many samples per second the job's input pipeline (its
  /// DataLoader workers: decoding, augmentation) delivers, per GPU or per node (the node's CPUs
  /// are shared by its GPUs); unset: never the bottleneck. The workers run beside the GPU, so a
  /// step takes at least its samples over that rate (simulator/analytic/step_plan.hpp
  /// input_floor_s).
  std::optional<double> input_samples_per_s_per_gpu;
  std::optional<double> input_samples_per_s_per_node;
  /// PyTorch's two TF32 switches (aten/src/ATen/Context.h: float32_matmul_precision HIGHEST,
  /// i.e. no TF32 for matmuls, and allow_tf32_cudnn = true; docs/source/notes/cuda.rst
  /// "TensorFloat-32 (TF32) on Ampere (and later) devices": the matmul flag "defaults to False in
  /// PyTorch 1.12 and later"). Only fp32 GEMMs on a GPU with a tf32 peak are affected.
  bool allow_tf32_matmul = false;
  bool allow_tf32_cudnn = true;
  /// Activations (and conv weights) in torch.channels_last (NHWC) memory format, as
  /// `model.to(memory_format=torch.channels_last)` makes them; PyTorch's default is contiguous
  /// (NCHW), for which cuDNN transposes every tensor-core convolution's operands to NHWC and its
  /// result back (simulator/analytic/kernel_rates.hpp nchw_transpose_bytes).
  bool channels_last = false;
  /// Which "transformer_block" layers are checkpointed and how (model/workload/checkpointing.hpp):
  /// less activation memory, part or all of their forward again during backward.
  ActivationCheckpointing activation_checkpointing;
  /// torch.compile on the model (torchtitan compiles each transformer block): element-wise ops
  /// at their fused kernels' bytes and launches (ElementwiseOp::compiled_bytes_per_sample).
  bool compile = false;
  /// torchao float8 training (model/workload/float8.hpp); unset: every linear in the compute
  /// dtype.
  std::optional<Float8Config> float8;
  std::optional<LrConfig> lr;
  std::optional<CriticalBatchTarget> critical_batch;
  /// training.target.tokens or .samples: a fixed amount of work (samples = tokens / seq_len),
  /// trained in ceil(samples / global batch) steps; exclusive with critical_batch.
  std::optional<double> target_samples;
  std::optional<double> target_tokens;  ///< as written (the report shows it); samples above
  /// training.target.steps_multiplier: steps to the target under local SGD or stale-synchronous
  /// training relative to synchronous SGD (user-given; nothing is invented when absent).
  std::optional<double> target_steps_multiplier;
};

/// The optimizer implementation a step runs with: the scenario's, or when it left it out the
/// library's default: DeepSpeed's FusedAdam for Adam/AdamW under zero1/2/3
/// (deepspeed/runtime/engine.py _configure_basic_optimizer: torch_adam defaults to false),
/// PyTorch's foreach otherwise (torch/optim/optimizer.py _default_to_fused_or_foreach).
OptimizerImpl optimizer_impl_for(const TrainingConfig& t, Strategy s);

/// parallelism.fsdp2: torch.distributed.fsdp.fully_shard's arguments and FSDPModule switches
/// (names as PyTorch spells them; simulator/prediction/fsdp2.hpp says what each costs).
struct Fsdp2Config {
  Fsdp2Units units = Fsdp2Units::kBlocks;
  /// reshard_after_forward: true (free the unsharded parameters after each unit's forward and
  /// all-gather them again in backward), false (keep them to the backward) or an integer: the
  /// world size to reshard to after forward (its backward all-gather runs in that smaller group).
  bool reshard_after_forward = true;
  int reshard_after_forward_group = 0;  ///< the integer form; 0: the whole shard group
  /// The 2-D device mesh (HSDP): ranks a parameter is sharded over, and replicas of each shard.
  /// 0 / 1 when left out: shard over every GPU, no replication.
  int mesh_shard = 0;
  int mesh_replicate = 1;
  /// MixedPrecisionPolicy; unset: the parameter's own dtype (param), the gradient's (reduce).
  std::optional<DType> param_dtype;
  std::optional<DType> reduce_dtype;
  std::optional<DType> output_dtype;
  /// set_modules_to_forward_prefetch depth (0: implicit prefetching only) and
  /// set_modules_to_backward_prefetch depth (1: FSDP2's default, the next unit; 0: none).
  int forward_prefetch = 0;
  int backward_prefetch = 1;
  /// set_requires_gradient_sync(False) in every micro-batch but the last (no reduce-scatter, the
  /// unsharded gradients accumulate); set_requires_all_reduce(False) likewise for HSDP's
  /// all-reduce (the reduce-scattered shards accumulate).
  bool requires_gradient_sync = true;
  bool requires_all_reduce = true;
  /// CPUOffloadPolicy(pin_memory): sharded parameters, gradients and optimizer states in host
  /// memory, the optimizer step on the CPU at the host's memory bandwidth (user-given: it is not
  /// in the hardware presets), shared by the host's GPUs. Unset: no offload.
  struct CpuOffload {
    bool pin_memory = true;
    double host_memory_bytes_per_s = 0;  ///< per host
  };
  std::optional<CpuOffload> cpu_offload;
};

/// parallelism.offload: DeepSpeed ZeRO-Offload (zero_optimization.offload_optimizer, and at
/// stage 3 offload_param, device "cpu"): the optimizer states and step on the host, DeepSpeed's
/// CPU Adam at the rate the user measured.
struct ZeroOffload {
  bool param = false;                 ///< ZeRO-3 offload_param: 16-bit partitions on the host
  double host_adam_params_per_s = 0;  ///< DeepSpeedCPUAdam, parameters per second per rank
};

struct ParallelismConfig {
  Strategy strategy = Strategy::kDdp;
  std::optional<ZeroOffload> offload;
  double bucket_cap_mb = 25;
  bool bucket_cap_defaulted = true;
  /// parallelism.first_bucket_mb: the first (rebuilt) bucket's limit, MiB, whatever the cap.
  /// Left out: 1 MiB only when bucket_cap_mb is left out (PyTorch releases whose DDP takes
  /// bucket_cap_mb=None: bucket_bytes_cap_default). torch 1.13 always uses
  /// dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB) when it rebuilds: describe it with 1.
  std::optional<double> first_bucket_mb;
  bool overlap = true;
  /// parallelism.overlap left out: each strategy takes its library's default (DDP and FSDP
  /// overlap; DeepSpeed's overlap_comm is false below stage 3, zero/config.py
  /// overlap_comm_valid), resolved where the strategy is planned (simulator/analytic/sharded.cpp).
  bool overlap_defaulted = true;
  CommHook comm_hook;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  bool broadcast_buffers = true;
  bool find_unused_parameters = false;
  bool gradient_as_bucket_view = false;
  bool static_graph = false;
  /// DeepSpeed zero_optimization reduce_bucket_size / allgather_bucket_size, in ELEMENTS (code
  /// default 5e8): ZeRO-1/2/3 gradient buckets and the ZeRO-1/2 post-step parameter all-gather.
  double reduce_bucket_elements = 5e8;
  double allgather_bucket_elements = 5e8;
  /// DeepSpeed zero_optimization.use_multi_rank_bucket_allreduce (default true): ZeRO-1/2 reduce
  /// each gradient bucket with one all-reduce; false: one dist.reduce per rank owning a slice.
  bool use_multi_rank_bucket_allreduce = true;
  /// FSDP backward_prefetch (default BACKWARD_PRE, as in PyTorch).
  FsdpPrefetch fsdp_prefetch = FsdpPrefetch::kBackwardPre;
  Fsdp2Config fsdp2;  ///< strategy fsdp2 only
};

struct SimulationConfig {
  Engine engine = Engine::kAnalytic;
  int steps = 5;
  double jitter_cv = 0;
  std::uint64_t seed = 1;
  JitterDistribution jitter_distribution = JitterDistribution::kNormal;
  int straggler_rank = -1;        ///< -1: none (event engine only)
  double straggler_slowdown = 0;  ///< 0.10: that rank's compute takes 10% longer
  /// Compute slowdown while a collective runs (>= 1; 1 = none; measure it with calibration).
  double interference = 1.0;
  /// Local SGD: parameters are averaged every local_sgd_period steps (1 = synchronous DDP).
  int local_sgd_period = 1;
  /// Stale-synchronous parallel: a rank may run this many steps ahead (0 = synchronous).
  int staleness = 0;
  int trace_ranks = 64;  ///< --trace: at most this many ranks (plus the slowest) are written
  /// simulation.network "flow": the event engine times collectives with link contention
  /// (simulator/event/contention.hpp) against the two kinds of competing traffic below.
  bool network_flow = false;
  double background_traffic = 0;  ///< [0, 0.99]: share of each network link others want
  int concurrent_jobs = 1;        ///< this job plus identical jobs sharing the network
  /// simulation.interference was given in the scenario (else a profile's measured factor may
  /// be used: simulator/analytic/analytic.hpp resolve_interference).
  bool interference_given = false;
};

enum class PlanObjective { kTime, kCost, kGpuHours };
const char* objective_name(PlanObjective o);  ///< "time", "cost", "gpu_hours"

/// `ddpsim plan`'s search space and constraints (the "/plan" section). Every list holds at least
/// one value: a list the scenario leaves out is the scenario's own value (gpus: the powers of two
/// from 1 to 4096 that the cluster shape allows). Cluster sizes the shape does not allow (above
/// gpus_per_node and not a multiple of it) are an InputError naming /plan/gpus/i, like
/// /cluster/gpus, rather than a rejected candidate.
struct Scenario;

/// One system of plan.hardware (a buyer's choice of GPU type, its price and how many can be had):
/// the scenario with that hardware, price and GPU range, parsed and validated like any scenario.
struct PlanSystem {
  std::string label;                         ///< the preset's name, else the hardware's name
  std::shared_ptr<const Scenario> scenario;  ///< plan.systems empty there; plan.gpus its own
};

struct PlanConfig {
  /// plan.hardware: the systems searched (empty: the scenario's own hardware, price and gpus).
  std::vector<PlanSystem> systems;
  std::vector<int> gpus;
  std::optional<int> min_gpus;  ///< plan.min_gpus: candidate sizes below it are left out
  std::optional<int> max_gpus;  ///< plan.max_gpus: the GPUs one can have (default list up to it)
  std::vector<std::int64_t> per_gpu_batch;
  std::vector<int> grad_accumulation;
  std::vector<double> bucket_cap_mb;
  bool bucket_cap_given = false;  ///< from /plan/bucket_cap_mb (no 1 MiB first bucket then)
  std::vector<CommHook> comm_hook;
  std::vector<Strategy> strategy;  ///< default: [parallelism.strategy]
  /// default: [training.activation_checkpointing]
  std::vector<ActivationCheckpointing> activation_checkpointing;
  std::optional<double> deadline_hours;
  std::optional<double> budget_usd;
  double memory_margin = 0.05;  ///< fits when memory <= (1 - margin) x capacity
  std::optional<std::int64_t> max_global_batch;
  PlanObjective objective = PlanObjective::kTime;
  /// The size of the Cartesian product of the candidate lists (in double: it can pass 2^64).
  double candidate_count() const {
    return static_cast<double>(gpus.size()) * static_cast<double>(per_gpu_batch.size()) *
           static_cast<double>(grad_accumulation.size()) *
           static_cast<double>(bucket_cap_mb.size()) * static_cast<double>(comm_hook.size()) *
           static_cast<double>(strategy.size()) *
           static_cast<double>(activation_checkpointing.size());
  }
};

struct SweepAxis {
  std::string key;  ///< dotted path, e.g. "cluster.gpus"
  std::vector<nlohmann::json> values;
};

struct Scenario {
  std::string file;    ///< the scenario file (named in errors)
  nlohmann::json doc;  ///< the document as written (sweep points patch it)
  std::string name;
  std::shared_ptr<const Workload> workload;
  std::string model_label;  ///< "preset gpt2-xl", "mlp 1024-4096-1024", ...
  HardwareSpec hardware;
  ClusterConfig cluster;
  TrainingConfig training;
  ParallelismConfig parallelism;
  SimulationConfig simulation;
  std::optional<double> gpu_hour_usd;
  /// Failures and checkpoints ("/reliability"); unset: a prediction without failures.
  std::optional<ReliabilityConfig> reliability;
  std::vector<SweepAxis> sweep;
  PlanConfig plan;  ///< always filled (defaults when the scenario has no "/plan")
  /// The sweep values of this point ({"cluster.gpus": 64}); empty for an unswept scenario.
  nlohmann::json point = nlohmann::json::object();
};

/// Reads, validates and resolves a scenario file.
Scenario load_scenario(const std::string& path);
/// Same for a document already in memory; `file` is used for errors and relative paths.
Scenario parse_scenario(const nlohmann::json& doc, const std::string& file);

/// Scenario document `doc` with the calibration profile at `profile_path` as its hardware: the
/// one way a measured profile enters a prediction from the command line (`ddpsim predict
/// --profile`, `ddpsim plan --profile`, `ddpsim validate`). "hardware" becomes {"profile":
/// the absolute path}; a one-rank profile, which measured no links, gets stand-in links. A
/// profile of collectives only (`ddpsim-calibrate import nccl-tests LOG`) joins a scenario's
/// system preset instead ({"preset": ..., "profile": path}): it replaces only the collectives.
void use_profile_as_hardware(nlohmann::json& doc, const std::string& profile_path);
/// load_scenario with use_profile_as_hardware (an empty `profile_path`: load_scenario).
Scenario load_scenario(const std::string& path, const std::string& profile_path);

/// One Scenario per point of the Cartesian product of the sweep axes (axes in alphabetical
/// order of their dotted keys, as JSON objects are unordered; the last axis varies fastest); a
/// scenario without a sweep gives itself. Each point is fully validated (e.g. cluster.gpus = 12
/// with 8 GPUs per node is rejected, naming /sweep/cluster.gpus/i).
std::vector<Scenario> expand_sweep(const Scenario& s);

}  // namespace ddpsim::model
