// fsdp2.hpp: PyTorch's FSDP2 (torch.distributed.fsdp.fully_shard, parallelism.strategy "fsdp2",
// knobs in parallelism.fsdp2) as its configuration resolves for one step: the device mesh, the
// parameter groups and the dtypes of the mixed-precision policy. The memory model, goodput and
// the schedule (simulator/analytic/fsdp2_schedule.hpp, which says what FSDP2 runs) share them.
//
//   Fsdp2Mesh m = fsdp2_mesh(file, scenario.parallelism.fsdp2, scenario.cluster.gpus);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware/hardware.hpp"
#include "model/scenario/scenario.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::sim {

/// The device mesh and the post-forward group of a step on `gpus` GPUs.
struct Fsdp2Mesh {
  int shard = 1;      ///< ranks a parameter is sharded over (the reduce-scatter group)
  int replicate = 1;  ///< replicas (HSDP's all-reduce group)
  /// Ranks the parameters are resharded to after forward: shard (true), 1 (false: kept whole)
  /// or the integer given.
  int post_forward = 1;
};
/// Why `cfg` cannot run on `gpus` GPUs (mesh sizes that do not multiply to it, an integer
/// reshard_after_forward that does not divide the shard size), with the JSON pointer to name;
/// nullopt when it can.
struct Fsdp2MeshProblem {
  std::string pointer;
  std::string expected;
  std::string got;
};
std::optional<Fsdp2MeshProblem> fsdp2_mesh_problem(const model::Fsdp2Config& cfg, int gpus);
/// The mesh; throws InputError(file, problem) when fsdp2_mesh_problem finds one.
Fsdp2Mesh fsdp2_mesh(const std::string& file, const model::Fsdp2Config& cfg, int gpus);

/// One FSDPParamGroup: the workload layers whose parameters it holds (ascending).
struct Fsdp2Group {
  std::vector<int> layers;
  bool root = false;
  std::int64_t elements = 0;  ///< parameters (tied tensors counted once, by their owner)
  int tensors = 0;
  std::string name;  ///< the layer's name, or "root"
  /// false: kept unsharded from its forward to its backward whatever reshard_after_forward says
  /// (torchtitan's [norm, output] group: `reshard_after_forward=policy == "always"`).
  bool reshard = true;
};
/// The groups in pre-forward order: the root first (when it holds parameters), then the units by
/// their first layer.
std::vector<Fsdp2Group> fsdp2_groups(const model::Workload& w, model::Fsdp2Units units);

/// Dtypes of one FSDP2 step.
struct Fsdp2Dtypes {
  model::DType orig = model::DType::kFp32;    ///< sharded parameters and gradients
  model::DType param = model::DType::kFp32;   ///< all-gather, unsharded parameters and gradients
  model::DType reduce = model::DType::kFp32;  ///< reduce-scatter / all-reduce
};
/// MixedPrecisionPolicy resolved against training.precision: param_dtype defaults to the
/// parameters' own dtype and must be the dtype the precision computes in (a 16-bit policy over
/// fp32 parameters is amp_bf16 / amp_fp16); reduce_dtype defaults to training.grad_reduce_dtype,
/// then to param_dtype. Throws InputError(file, "/parallelism/fsdp2/mixed_precision/param_dtype")
/// otherwise.
Fsdp2Dtypes fsdp2_dtypes(const std::string& file, const model::TrainingConfig& t,
                         const model::Fsdp2Config& cfg);

}  // namespace ddpsim::sim
