// checkpointing.hpp: which activations a step keeps and which it recomputes
// (training.activation_checkpointing), as PyTorch's checkpoint wrappers run it.
//
// Four modes, torchtitan's (torchtitan/distributed/activation_checkpoint.py,
// [activation_checkpoint] mode = "none" | "full" | "selective", selective_ac_option = "op" |
// "<K>"):
//  - kNone: every block keeps its activations.
//  - kFull: every transformer block is wrapped in checkpoint(): only its input is kept, and its
//    whole forward runs again in its backward (Korthikanti et al. 2022 sec. 5).
//  - kSelectiveLayer (option K): torchtitan counts the blocks as it wraps them (a counter from 1)
//    and wraps block i (0-based) when (i + 1) % K == 0: blocks K-1, 2K-1, ... run as kFull, the
//    others keep everything. K = 1 is kFull.
//  - kSelectiveOp (option "op"): every block is wrapped with torch.utils.checkpoint's selective
//    checkpointing; torchtitan's policy saves the outputs of the ops in its save list (aten.mm,
//    the fused SDPA kernels, reduce_scatter, aten.max) except every second aten.mm in forward
//    order, and recomputes every other op (norms, rotary, activations, products, the skipped
//    mm's). What op_policy() reads off a Layer:
//      * a forward library GEMM with one instance and no bias is an aten.mm (nn.Linear on a
//        [b, s, h] input folds to mm); its ordinal among those (1, 2, ...) decides: odd saved,
//        even recomputed;
//      * a linear with a bias runs aten.addmm and a batched product (eager attention's Q K^T and
//        P V) aten.bmm: neither is in the save list, both are recomputed and neither counts;
//      * a fused attention kernel's output (and its fp32 logsumexp) is saved, nothing of it is
//        recomputed;
//      * element-wise ops (role forward) are recomputed, and autocast's weight casts with them.
//
//   ActivationCheckpointing ac{CheckpointMode::kSelectiveLayer, 2};
//   checkpoints_block(ac, 0);  // false: block 0 keeps its activations
//   checkpoints_block(ac, 1);  // true
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/workload/workload.hpp"

namespace ddpsim::model {

enum class CheckpointMode { kNone, kFull, kSelectiveOp, kSelectiveLayer };

/// training.activation_checkpointing, resolved.
struct ActivationCheckpointing {
  CheckpointMode mode = CheckpointMode::kNone;
  int every = 1;  ///< kSelectiveLayer: every K-th transformer block is checkpointed (K >= 1)
  bool enabled() const { return mode != CheckpointMode::kNone; }
  bool operator==(const ActivationCheckpointing&) const = default;
};

/// "none", "full", "selective op", "selective every 2nd block" (labels and notes).
std::string checkpointing_name(const ActivationCheckpointing& ac);

/// One integer per distinct value (cache keys).
inline int checkpointing_key(const ActivationCheckpointing& ac) {
  return static_cast<int>(ac.mode) * (1 << 21) + ac.every;
}

/// "none", "full", "op", "every 2" (table columns).
std::string checkpointing_short_name(const ActivationCheckpointing& ac);

/// The scenario value that reads back as `ac`: false, true, {"mode": "selective", "option":
/// "op"} or {"mode": "selective", "option": K}.
nlohmann::json checkpointing_json(const ActivationCheckpointing& ac);

/// Whether the transformer block of ordinal `block` (0-based, counting only blocks) is wrapped
/// in a checkpoint (kFull, kSelectiveOp: every block; kSelectiveLayer: (block + 1) % K == 0).
bool checkpoints_block(const ActivationCheckpointing& ac, int block);

/// True for the layers the modes act on ("transformer_block").
bool is_transformer_block(const Layer& l);

/// What torchtitan's op-level policy does to one layer (see the file comment).
struct OpCheckpointPolicy {
  /// Per entry of Layer::gemms: true for a forward GEMM the backward runs again.
  std::vector<bool> gemm_recomputed;
  /// Outputs the policy saves, per sample: elements of the compute dtype (the saved mm outputs
  /// and the fused attention's output), and fp32 bytes (the attention's logsumexp, 4 a s).
  double saved_elements_per_sample = 0;
  double saved_fp32_bytes_per_sample = 0;
  /// FLOPs per sample of the forward GEMMs recomputed (model FLOPs).
  double recomputed_flops_per_sample = 0;
};
/// A Float8Linear's GEMM counts as the aten.mm it is called as: the policy's dispatch mode sees
/// the op before the float8 tensor subclass runs torch._scaled_mm for it.
OpCheckpointPolicy op_policy(const Workload& w, const Layer& l);

/// Forward FLOPs per sample the backward runs again under `ac` (full blocks' forward FLOPs, op
/// SAC's recomputed mm's): hardware FLOPs minus model FLOPs.
double recomputed_flops_per_sample(const Workload& w, const ActivationCheckpointing& ac);

}  // namespace ddpsim::model
