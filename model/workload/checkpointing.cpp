#include "model/workload/checkpointing.hpp"

#include <set>

#include "model/workload/float8.hpp"  // gemm_module

namespace ddpsim::model {

namespace {

std::string ordinal(int k) {
  const int last2 = k % 100;
  const char* suffix = (last2 >= 11 && last2 <= 13) ? "th"
                       : k % 10 == 1                ? "st"
                       : k % 10 == 2                ? "nd"
                       : k % 10 == 3                ? "rd"
                                                    : "th";
  return std::to_string(k) + suffix;
}

}  // namespace

std::string checkpointing_name(const ActivationCheckpointing& ac) {
  switch (ac.mode) {
    case CheckpointMode::kNone:
      return "none";
    case CheckpointMode::kFull:
      return "full";
    case CheckpointMode::kSelectiveOp:
      return "selective op";
    case CheckpointMode::kSelectiveLayer:
      return "selective every " + ordinal(ac.every) + " block";
  }
  return "none";
}

std::string checkpointing_short_name(const ActivationCheckpointing& ac) {
  switch (ac.mode) {
    case CheckpointMode::kSelectiveOp:
      return "op";
    case CheckpointMode::kSelectiveLayer:
      return "every " + std::to_string(ac.every);
    default:
      return checkpointing_name(ac);
  }
}

nlohmann::json checkpointing_json(const ActivationCheckpointing& ac) {
  switch (ac.mode) {
    case CheckpointMode::kNone:
      return false;
    case CheckpointMode::kFull:
      return true;
    case CheckpointMode::kSelectiveOp:
      return {{"mode", "selective"}, {"option", "op"}};
    case CheckpointMode::kSelectiveLayer:
      return {{"mode", "selective"}, {"option", ac.every}};
  }
  return false;
}

bool checkpoints_block(const ActivationCheckpointing& ac, int block) {
  switch (ac.mode) {
    case CheckpointMode::kNone:
      return false;
    case CheckpointMode::kFull:
    case CheckpointMode::kSelectiveOp:
      return true;
    case CheckpointMode::kSelectiveLayer:
      return ac.every >= 1 && (block + 1) % ac.every == 0;
  }
  return false;
}

bool is_transformer_block(const Layer& l) { return l.kind == "transformer_block"; }

OpCheckpointPolicy op_policy(const Workload& w, const Layer& l) {
  OpCheckpointPolicy p;
  p.gemm_recomputed.assign(l.gemms.size(), false);
  std::set<std::string> names;
  for (int t = l.first_tensor; t < l.first_tensor + l.tensor_count; ++t) {
    if (t >= 0 && static_cast<std::size_t>(t) < w.tensors.size()) names.insert(w.tensors[t].name);
  }
  int mm = 0;
  const Gemm* fused = nullptr;  // the last forward product of a fused attention kernel
  const auto flush_fused = [&] {
    if (fused == nullptr) return;
    // The kernel's output O [s, d] per head, and its logsumexp (fp32, one per row and head).
    const GemmShape& s = fused->per_sample;
    p.saved_elements_per_sample +=
        static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.count);
    p.saved_fp32_bytes_per_sample += 4.0 * static_cast<double>(s.m) * static_cast<double>(s.count);
    fused = nullptr;
  };
  for (std::size_t i = 0; i < l.gemms.size(); ++i) {
    const Gemm& g = l.gemms[i];
    if (g.role != GemmRole::kForward) continue;
    if (g.kernel == GemmKernel::kFusedAttention) {
      fused = &g;
      continue;
    }
    flush_fused();
    const bool addmm = names.count(gemm_module(g) + ".bias") > 0;
    const bool bmm = g.per_sample.count > 1;
    bool saved = false;
    if (!addmm && !bmm) saved = (++mm % 2) == 1;
    if (saved) {
      p.saved_elements_per_sample += static_cast<double>(g.per_sample.m) *
                                     static_cast<double>(g.per_sample.n) *
                                     static_cast<double>(g.per_sample.count);
    } else {
      p.gemm_recomputed[i] = true;
      p.recomputed_flops_per_sample += g.flops_per_sample();
    }
  }
  flush_fused();
  return p;
}

double recomputed_flops_per_sample(const Workload& w, const ActivationCheckpointing& ac) {
  if (!ac.enabled()) return 0.0;
  double flops = 0;
  int block = 0;
  for (const Layer& l : w.layers) {
    if (!is_transformer_block(l)) continue;
    if (checkpoints_block(ac, block++)) {
      flops += ac.mode == CheckpointMode::kSelectiveOp ? op_policy(w, l).recomputed_flops_per_sample
                                                       : l.fwd_flops_per_sample();
    }
  }
  return flops;
}

}  // namespace ddpsim::model
