// memory.hpp: peak memory per GPU for data-parallel training (DDP, ZeRO-1/2/3, FSDP).
//
// Two entry points:
//  - model_state_bytes_per_gpu(): the pure ZeRO formula (Rajbhandari et al. 2020,
//    arXiv:1910.02054, sec. 5.1 / Figure 1 / Table 1) for 16-bit parameters and gradients plus
//    K bytes of optimizer state per parameter:
//        baseline  (2 + 2 + K) Psi
//        Pos       2 Psi + 2 Psi + K Psi / N_d
//        Pos+g     2 Psi + (2 + K) Psi / N_d
//        Pos+g+p   (2 + 2 + K) Psi / N_d
//    Returns bytes; the paper prints these in GB = 1e9 bytes (memory_test.cpp reproduces every
//    Table 1 / Figure 1 cell with 1e9, none with 2^30).
//  - estimate_memory(): a full per-GPU breakdown for a Workload: model states from a table of
//    bytes per parameter per (optimizer, precision) sharded by the strategy's ZeRO stage,
//    activations (Korthikanti et al. 2022, arXiv:2205.05198, as the builders store them, with
//    full, layer-selective or op-selective activation checkpointing when asked), communication
//    buffers (DDP buckets, DeepSpeed buckets, FSDP units in flight), the CUDA context, NCCL buffers
//    and allocator fragmentation. Every term is in bytes; total() is the predicted peak.
//
// Bytes per parameter (state_bytes_per_param):
//   precision      params  grads  optimizer (sgd / momentum / adam, adamw)
//   fp32             4       4      0 / 4 / 8
//   amp_bf16/fp16    4       4      0 / 4 / 8   (autocast: fp32 parameters and gradients; the
//                                                16-bit weight casts are counted as a buffer)
//   bf16 / fp16      2       2      4 / 8 / 12  (fp32 master weights in the optimizer, the
//                                                DeepSpeed/Megatron scheme: K = 12 for Adam)
//
// Strategy -> ZeRO stage (zero_stage()): ddp = baseline; zero1 = Pos; zero2 = Pos+g;
// zero3 = Pos+g+p; fsdp_full_shard = Pos+g+p; fsdp_shard_grad_op = Pos+g (the parameters stay
// unsharded from the forward to the end of the backward, so the peak holds the full 16-bit or
// fp32 parameters, exactly the Pos+g count); fsdp_hybrid = Pos+g+p over a shard group of
// min(gpus_per_node, dp_size) GPUs.
//
// Usage (what Predictor::predict would pass):
//   MemoryInputs in;
//   in.workload = &workload;                       // model::Workload
//   in.precision = training.precision;  in.optimizer = training.optimizer;
//   in.strategy = parallelism.strategy; in.dp_size = cluster.gpus;
//   in.gpus_per_node = cluster.gpus_per_node;     in.micro_batch = training.per_gpu_batch;
//   in.gradient_as_bucket_view = parallelism.gradient_as_bucket_view;
//   MemoryEstimate m = estimate_memory(in);
//   bool ok = fits(m, hw.gpu.memory_bytes, 0.0);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::sim {

/// Which model states are partitioned across the data-parallel (shard) group.
enum class ZeroStage {
  kBaseline,  ///< nothing sharded (DDP)
  kOs,        ///< optimizer states (ZeRO-1)
  kOsG,       ///< optimizer states + gradients (ZeRO-2, FSDP SHARD_GRAD_OP)
  kOsGP,      ///< optimizer states + gradients + parameters (ZeRO-3, FSDP FULL/HYBRID_SHARD)
};

/// "baseline", "Pos", "Pos+g", "Pos+g+p" (the ZeRO paper's names).
const char* zero_stage_name(ZeroStage s);

/// The stage a strategy shards at (see the file comment).
ZeroStage zero_stage(model::Strategy s);

/// The ZeRO paper's per-device model-state bytes for `psi` parameters with 2-byte parameters,
/// 2-byte gradients and `k_optimizer_bytes` bytes of optimizer state per parameter, sharded
/// over `n_d` >= 1 data-parallel ranks at `stage`. Example: (7.5e9, 12, kOsGP, 64) = 1.875e9.
double model_state_bytes_per_gpu(double psi, double k_optimizer_bytes, ZeroStage stage, int n_d);

/// Bytes per parameter of each model state (see the table in the file comment).
struct StateBytesPerParam {
  double params = 0;
  double grads = 0;
  double optimizer = 0;
  double total() const { return params + grads + optimizer; }
};
StateBytesPerParam state_bytes_per_param(model::Optimizer o, model::Precision p);

/// Everything estimate_memory() needs. Defaults are the libraries' defaults unless marked
/// "assumption" (those are for calibration / the executor to replace).
struct MemoryInputs {
  const model::Workload* workload = nullptr;  ///< required
  model::Precision precision = model::Precision::kFp32;
  model::Optimizer optimizer = model::Optimizer::kAdam;
  model::Strategy strategy = model::Strategy::kDdp;
  int dp_size = 1;        ///< data-parallel ranks (>= 1)
  int gpus_per_node = 8;  ///< HYBRID_SHARD shards within min(gpus_per_node, dp_size) GPUs
  /// Megatron tensor-parallel degree t (>= 1): parameters / t, and transformer-block activations
  /// 10sh + (rest)/t per Korthikanti et al. Table 2 (no sequence parallelism). 1 for pure DP.
  int tensor_parallel = 1;
  std::int64_t micro_batch = 1;  ///< samples per GPU per forward (>= 1)
  /// Which "transformer_block" layers are checkpointed and how (Korthikanti sec. 5 for full;
  /// model/workload/checkpointing.hpp for torchtitan's selective modes).
  model::ActivationCheckpointing activation_checkpointing;
  /// Per layer, model::op_policy of the workload (the Predictor's); nullptr: derived here.
  const std::vector<model::OpCheckpointPolicy>* op_policies = nullptr;
  /// training.float8: FSDP2's float8 all-gather holds the Float8Linear weights unsharded at one
  /// byte per element.
  std::optional<model::Float8Config> float8;
  /// parallelism.offload (DeepSpeed ZeRO-Offload): optimizer states (fp32 master weights and
  /// moments) on the host; with param, the 16-bit partitions too.
  std::optional<model::ZeroOffload> zero_offload;
  bool gradient_as_bucket_view = false;  ///< DDP: buckets alias the gradients (no copy)
  /// State a DDP communication hook keeps per GPU (PowerSGD's error feedback and P/Q buffers,
  /// top-k's gathered buffer), computed by the step plan (simulator/analytic/step_plan.cpp); a
  /// buffer.
  double comm_hook_bytes = 0;
  /// DeepSpeed ZeRO bucket sizes in elements (zero_optimization reduce_bucket_size and
  /// allgather_bucket_size, code default 5e8; ecosystem.md 3.2).
  double reduce_bucket_elements = 5e8;
  double allgather_bucket_elements = 5e8;
  /// FSDP units holding unsharded parameters at once: 2 with limit_all_gathers=True (current +
  /// prefetched; ecosystem.md 2.1). Also used for ZeRO-3's prefetch.
  int fsdp_units_in_flight = 2;
  /// Parameters of the largest FSDP unit / ZeRO-3 gathered module; 0 = the largest Layer of the
  /// workload (a transformer block, or the embeddings when larger), as transformer_auto_wrap
  /// wraps them.
  double largest_unit_params = 0;
  /// Strategy fsdp2: its knobs (mesh, reshard_after_forward, MixedPrecisionPolicy, prefetch
  /// depths, set_requires_gradient_sync) and the micro-batches of a step (gradients kept
  /// unsharded across them when requires_gradient_sync is false).
  model::Fsdp2Config fsdp2;
  int grad_accumulation = 1;
  std::optional<model::DType> grad_reduce_dtype;  ///< training.grad_reduce_dtype (fsdp2)
  /// Hidden size h for checkpointing and tensor parallelism; 0 = the second dimension of the
  /// first tensor of the workload's "embedding" layer ([V, h] in every transformer builder).
  double hidden_size = 0;
  /// CUDA context, NCCL buffers and fragmentation; false gives the allocator-visible tensors only.
  bool include_runtime = true;
  /// Assumption: 512 MiB per process for the CUDA context (CUDA 11+/12 with lazy module loading
  /// typically reports 300-600 MiB in nvidia-smi before any tensor is allocated); calibrate.
  double cuda_context_bytes = 512.0 * 1024 * 1024;
  /// NCCL connection buffers: channels x peers x (Simple 4 MiB NCCL_BUFFSIZE + LL 512 KiB +
  /// LL128 4,915,200 B) (ecosystem.md 5.4, init.cc computeBuffSizes). Assumption: 16 channels
  /// and 2 ring peers (previous and next rank); only counted when more than one rank.
  int nccl_channels = 16;
  int nccl_peers = 2;
  /// Assumption: the caching allocator's reserved-but-unallocated memory as a fraction of the
  /// allocated bytes (model states + activations + buffers). The ZeRO paper (sec. 3.2) reports
  /// "over 30%" unusable in extreme cases; 10% is a moderate default for calibration to replace.
  double fragmentation_fraction = 0.10;
};

/// Predicted peak memory of one GPU, bytes per term.
struct MemoryEstimate {
  double params_bytes = 0;      ///< parameters resident at the peak (after sharding)
  double grads_bytes = 0;       ///< gradients (after sharding)
  double optimizer_bytes = 0;   ///< optimizer states incl. fp32 master weights (after sharding)
  double activation_bytes = 0;  ///< saved for backward at the peak (end of forward)
  double buffer_bytes = 0;      ///< buckets, comm buffers, unsharded units, module buffers
  double runtime_bytes = 0;     ///< CUDA context + NCCL buffers
  double fragmentation_bytes = 0;
  std::vector<std::string> notes;  ///< how each term was counted, one line each

  double model_state_bytes() const { return params_bytes + grads_bytes + optimizer_bytes; }
  double total() const {
    return model_state_bytes() + activation_bytes + buffer_bytes + runtime_bytes +
           fragmentation_bytes;
  }
};

/// Per-GPU memory for `in`. Throws std::invalid_argument when workload is null or a count < 1.
MemoryEstimate estimate_memory(const MemoryInputs& in);

/// Activation bytes per GPU at the peak (the activation term of estimate_memory()).
double activation_bytes(const MemoryInputs& in);

/// True when total() <= capacity_bytes * (1 - margin_fraction), margin_fraction in [0, 1).
bool fits(const MemoryEstimate& m, double capacity_bytes, double margin_fraction = 0.0);

}  // namespace ddpsim::sim
