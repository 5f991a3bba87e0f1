// deepspeed_import.hpp: DeepSpeed config JSON -> scenario keys, and the result type both importers
// share (the PyTorch DDP/FSDP knobs are torch_import.hpp's).
//
// Both importers return a JSON merge patch (RFC 7386) of ddpsim scenario keys plus warnings, one
// line each naming the JSON pointer of the knob they are about. Apply the patch to a base
// scenario with apply_import_patch(); without a base the patch alone is the result.
//
// DeepSpeed (deepspeed/runtime/config.py, zero/config.py at 0.16.5; reference ecosystem.md §3):
//   train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps
//       DeepSpeed's rule train_batch_size = micro x accumulation x world size (the data-parallel
//       size). All three given: checked (InputError at /train_batch_size when it fails); two
//       given: the third is derived exactly as _set_batch_related_parameters does (floor
//       division, then the same check); one given: accumulation 1 and the other derived. The
//       world size comes from `world_size` (--gpus, or the base scenario's cluster.gpus); when
//       none is given and all three numbers are, it is implied (cluster.gpus in the patch).
//       -> training.per_gpu_batch, training.grad_accumulation, cluster.gpus
//   zero_optimization.stage 0..3   -> parallelism.strategy ddp | zero1 | zero2 | zero3
//       stage 0 all-reduces after the backward in 5e8-element buffers (engine.py
//       allreduce_gradients / MEMORY_OPT_ALLREDUCE_SIZE): overlap false, bucket_cap_mb =
//       5e8 x gradient bytes / MiB.
//   zero_optimization.overlap_comm -> parallelism.overlap (default: true for stage 3 only, the
//       code's validator; the docs' "false" is wrong for stage 3)
//   zero_optimization.reduce_bucket_size / allgather_bucket_size (elements)
//                                  -> parallelism.reduce_bucket_size / allgather_bucket_size
//   zero_optimization.offload_optimizer / offload_param device "cpu" (and the legacy cpu_offload,
//       cpu_offload_params) -> parallelism.offload {param}: its host_adam_params_per_s comes from
//       the base scenario; "nvme" is an InputError; offload_param below stage 3 is ignored, as
//       DeepSpeed ignores it, with a warning.
//   fp16.enabled / bf16.enabled    -> training.precision "fp16" / "bf16" (16-bit parameters and
//       gradients, fp32 master weights: DeepSpeed's scheme); neither: "fp32"; both: InputError.
//   communication_data_type        -> training.grad_reduce_dtype
//   optimizer.type (+ params.adam_w_mode, params.momentum) -> training.optimizer;
//   optimizer.params.lr or scheduler.params.warmup_max_lr -> training.lr.base, with
//       training.lr.base_batch = train_batch_size (the batch the rate was set for);
//   scheduler WarmupLR / WarmupDecayLR params.warmup_num_steps -> training.lr.warmup_steps.
//   activation_checkpointing (any section) -> training.activation_checkpointing true (the model
//       calls deepspeed.checkpointing per block: full recomputation), with a warning saying so;
//       partition_activations (model parallelism only) and cpu_checkpointing warned about.
// Every other key that can change step time or memory gives a warning naming its pointer;
// keys that cannot (logging, monitoring, checkpoint paths, loss-scale settings) are listed in
// `ignored`. Bad values (wrong type, out of range, "auto") are InputError naming the pointer;
// `ddpsim import deepspeed --scenario BASE` first fills the Hugging Face Trainer's "auto" values
// from BASE (hf_auto.hpp).
//
//   ImportResult r = import_deepspeed_file("ds_config.json", 64);
//   nlohmann::json scenario = apply_import_patch(base_doc, r.patch);
//   for (const auto& w : r.warnings) std::cerr << "warning: " << w << "\n";
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::model {

struct ImportResult {
  /// Merge patch of scenario keys: {"training": {...}, "parallelism": {...}, "cluster": {...}}.
  nlohmann::json patch = nlohmann::json::object();
  /// One line each, "FILE: /pointer: what ddpsim does about it".
  std::vector<std::string> warnings;
  /// Pointers of keys read and deliberately ignored (no effect on step time or memory).
  std::vector<std::string> ignored;
};

/// DeepSpeed batch arithmetic, as deepspeed/runtime/config.py does it. Unset inputs are
/// nullopt; `world_size` may be nullopt (then it is implied when all three numbers are given).
struct DeepSpeedBatch {
  std::int64_t train_batch_size = 0;
  std::int64_t micro_batch_per_gpu = 0;
  std::int64_t grad_accumulation = 0;
  std::optional<std::int64_t> world_size;  ///< known or implied; nullopt when neither
};
/// Throws InputError(file, pointer, ...) when the numbers are inconsistent or underdetermined.
/// Examples: (64, 4, -, world 8) -> accumulation 64 / 4 / 8 = 2; (-, 4, 2, world 8) -> 64;
/// (64, 4, 2, -) -> world size 8 implied; (64, 4, 3, world 8) -> InputError at /train_batch_size.
DeepSpeedBatch resolve_deepspeed_batch(std::optional<std::int64_t> train_batch_size,
                                       std::optional<std::int64_t> micro_batch_per_gpu,
                                       std::optional<std::int64_t> grad_accumulation,
                                       std::optional<std::int64_t> world_size,
                                       const std::string& file);

/// Imports a DeepSpeed config (already parsed); `file` is named in errors and warnings.
ImportResult import_deepspeed_config(const nlohmann::json& config, const std::string& file,
                                     std::optional<std::int64_t> world_size);
/// Reads `path` (strict JSON) and imports it.
ImportResult import_deepspeed_file(const std::string& path, std::optional<std::int64_t> world_size);

/// `base` with `patch` merged in (RFC 7386: objects merge recursively, other values replace).
nlohmann::json apply_import_patch(const nlohmann::json& base, const nlohmann::json& patch);

}  // namespace ddpsim::model
