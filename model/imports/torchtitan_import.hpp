// torchtitan_import.hpp: a torchtitan job file (train_configs/*.toml) -> scenario keys.
//
// torchtitan's JobConfig (torchtitan/config/job_config.py at 238fa9953, the last release with
// TOML job files; the mid-2024 names of torchtitan/config_manager.py at 1a303b3ca are read too):
//   [model] name + flavor   -> model.preset: llama3 / llama (8B, 70B, 405B, debugmodel) the
//       Llama 3.1 zoo presets and torchtitan's debug model; llama2 (7B, 13B, 70B) Llama 2's.
//   [model] converters ["float8"] (or [float8] enable_float8_linear) with
//       [quantize.linear.float8] (or [float8]) -> training.float8 {recipe, filter_fqns,
//       fsdp_float8_all_gather, precompute_scale}; "output" (torchtitan's lm_head) is "lm_head".
//   [training] local_batch_size (batch_size) -> training.per_gpu_batch; global_batch_size ->
//       training.grad_accumulation = global / (local x data-parallel degree) (train.py: a
//       multiple, or InputError); seq_len -> model.seq_len; mixed_precision_param /
//       mixed_precision_reduce -> training.precision amp_bf16 and
//       parallelism.fsdp2.mixed_precision; compile (mid-2024) -> training.compile.
//   [parallelism] (or [training] / [experimental] in mid-2024) data_parallel_shard_degree
//       (-1: every rank left), data_parallel_replicate_degree -> parallelism.strategy fsdp2 with
//       fsdp2.mesh (shard degree 1 and replicas: ddp, torchtitan's replicate with
//       bucket_cap_mb 100); fsdp_reshard_after_forward never -> reshard_after_forward false;
//       a file with a [parallelism] table -> fsdp2.units "torchtitan" (apply_fsdp's grouping).
//       Tensor, pipeline, context or expert parallelism above 1 is an InputError: ddpsim
//       models data parallelism only.
//   [activation_checkpoint] mode, selective_ac_option -> training.activation_checkpointing.
//   [compile] enable with "model" in components -> training.compile.
//   [optimizer] name (AdamW, Adam), implementation (or fused) -> training.optimizer,
//       optimizer_impl; lr -> training.lr.base at the job's global batch; [lr_scheduler]
//       warmup_steps (or [training] warmup_steps) -> training.lr.warmup_steps.
// Keys that cannot change step time or memory (logging, checkpoint folders, datasets, seeds)
// are listed in `ignored`; every other key ddpsim does not model gets a warning naming its
// TOML path. Errors name the file and the TOML path (section.key) of the value.
//
//   ImportResult r = import_torchtitan_file("llama3_8b.toml", 64);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "model/imports/deepspeed_import.hpp"  // ImportResult

namespace ddpsim::model {

/// Reads `path` as TOML (InputError naming the line and column of a syntax error) into JSON:
/// tables are objects, arrays arrays, dates and times strings.
nlohmann::json read_toml_file(const std::string& path);
/// The same for TOML text already read; `name` is the file named in errors.
nlohmann::json parse_toml_text(const std::string& text, const std::string& name);

/// Imports a torchtitan job (already read into JSON); `world_size` is the job's GPU count
/// (needed when data_parallel_shard_degree is -1).
ImportResult import_torchtitan_config(const nlohmann::json& job, const std::string& file,
                                      std::optional<std::int64_t> world_size);
/// Reads `path` and imports it.
ImportResult import_torchtitan_file(const std::string& path,
                                    std::optional<std::int64_t> world_size);

}  // namespace ddpsim::model
