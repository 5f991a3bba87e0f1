// torch_import.hpp: PyTorch DDP/FSDP knob names -> scenario keys.
//
// The result is an ImportResult like the DeepSpeed importer's (deepspeed_import.hpp): a JSON
// merge patch of scenario keys, warnings naming the pointer of each knob they are about, and the
// keys deliberately ignored; apply_import_patch() merges it into a base scenario. Bad values are
// InputError naming the file and the JSON pointer.
//
// PyTorch knobs file: {"ddp": {...}} or {"fsdp": {...}} with the constructor's argument names
// (reference ecosystem.md §1-§2):
//   ddp:  bucket_cap_mb, gradient_as_bucket_view, static_graph, find_unused_parameters,
//         broadcast_buffers -> parallelism.<same name>; comm_hook: "allreduce_hook",
//         "fp16_compress_hook", "bf16_compress_hook", "powerSGD_hook" (with
//         matrix_approximation_rank) -> parallelism.comm_hook.
//   fsdp: sharding_strategy FULL_SHARD | SHARD_GRAD_OP | HYBRID_SHARD | NO_SHARD ->
//         parallelism.strategy fsdp_full_shard | fsdp_shard_grad_op | fsdp_hybrid | ddp;
//         mixed_precision.param_dtype -> training.precision (fp32 | amp_bf16 | amp_fp16: FSDP
//         keeps fp32 sharded parameters and computes in param_dtype, i.e. autocast's bytes);
//         mixed_precision.reduce_dtype (else param_dtype) -> training.grad_reduce_dtype;
//         backward_prefetch BACKWARD_PRE | BACKWARD_POST | null -> parallelism.fsdp_prefetch
//         backward_pre | backward_post | none; forward_prefetch and limit_all_gathers: a
//         warning when not the default (false, true);
//         cpu_offload with offload_params true: InputError.
//
//   ImportResult r = import_torch_knobs_file("knobs.json");  // {"ddp": {"bucket_cap_mb": 50}}
//   nlohmann::json scenario = apply_import_patch(base_doc, r.patch);
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/imports/deepspeed_import.hpp"

namespace ddpsim::model {

/// Imports a PyTorch knobs file (already parsed); `file` is named in errors and warnings.
ImportResult import_torch_knobs(const nlohmann::json& knobs, const std::string& file);
/// Reads `path` (strict JSON) and imports it.
ImportResult import_torch_knobs_file(const std::string& path);

}  // namespace ddpsim::model
