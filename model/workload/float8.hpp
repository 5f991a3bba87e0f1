// float8.hpp: torchao's float8 training (training.float8) as torchtitan applies it: which
// nn.Linear modules become Float8Linear, and what each recipe runs.
//
// torchao/float8 (pytorch/ao 36027d8; /work notes in docs/DESIGN.md "float8"):
//  - convert_to_float8_training swaps nn.Linear for Float8Linear except where a filter says no:
//    torchtitan's module_filter_fn skips a module whose FQN contains one of filter_fqns and
//    every linear whose in or out features are not multiples of 16 (torch._scaled_mm's rule,
//    config.py:227-231, torchtitan components/quantization/utils.py:16-30).
//  - tensorwise (Float8LinearConfig() defaults, config.py:331): dynamic per-tensor scales; input
//    and weight cast to e4m3, grad_output to e5m2; all three GEMMs (output, grad_input,
//    grad_weight) run torch._scaled_mm in fp8 with bf16 output. Six casts per linear per step
//    (input and weight in forward; grad_output twice, weight and input again in backward:
//    float8_linear.py:37-204), each an amax (abs, max) and a scale-and-convert; grad_input needs
//    the fp8 weight transposed and grad_weight grad_output and input transposed
//    (float8_ops.py:342-345 preprocess_addmm: three fp8 copies).
//  - rowwise (config.py:334-351): per-row scales, all e4m3, six casts; grad_input and
//    grad_weight (use_fast_accum False) run the tensorwise kernel with unit scales and scale the
//    output in one more pass (float8_ops.py:48-59).
//  - rowwise_with_gw_hp (config.py:353-378): grad_weight stays a bf16 mm; four casts.
//  - FSDP2 float8 all-gather (enable_fsdp_float8_all_gather, tensorwise only, config.py:270):
//    each float8 weight's shard is cast to fp8 before the all-gather (1 byte per element instead
//    of 2, fsdp_utils.py:228-251); the gathered weight is already fp8, so Float8Linear casts it
//    neither in forward nor in backward. Without precomputed scales each pre-all-gather cast
//    all-reduces its amax over the mesh (one tiny all-reduce per weight per all-gather); with
//    precompute_scale, one fused inf-norm over every float8 weight and one all-reduce follow the
//    optimizer step (fsdp_utils.py:27-85).
// Float8 needs float8 tensor cores (compute capability 8.9 or newer; torchtitan refuses others,
// components/quantization/float8.py:85-96).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/workload/workload.hpp"

namespace ddpsim::model {

enum class Float8Recipe { kTensorwise, kRowwise, kRowwiseWithGwHp };
/// "tensorwise", "rowwise", "rowwise_with_gw_hp" (torchao's recipe names).
const char* float8_recipe_name(Float8Recipe r);
std::optional<Float8Recipe> parse_float8_recipe(const std::string& name);

/// training.float8, resolved.
struct Float8Config {
  Float8Recipe recipe = Float8Recipe::kTensorwise;
  bool fsdp_float8_all_gather = false;
  bool precompute_scale = false;
  /// Module names (substrings of the FQN, torchtitan's filter_fqns) left in high precision.
  std::vector<std::string> filter_fqns;
  bool operator==(const Float8Config&) const = default;
};

/// The module a GEMM belongs to: "model.layers.0.mlp.up_proj.fwd" -> "model.layers.0.mlp.up_proj".
std::string gemm_module(const Gemm& g);

/// Per entry of l.gemms: true for the GEMMs of an nn.Linear converted to Float8Linear (a library
/// GEMM of one instance laid out as nn.Linear, Y = X W^T, with in and out features multiples of
/// 16, whose module name contains none of filter_fqns).
std::vector<bool> float8_gemms(const Layer& l, const Float8Config& c);

/// Per layer: the elements of its Float8Linear weights (what an FSDP2 float8 all-gather moves
/// at one byte each); `weights` (optional) receives how many weights per layer.
std::vector<double> float8_weight_elements(const Workload& w, const Float8Config& c,
                                           std::vector<int>* weights = nullptr);

/// Bytes per element and kernels of one float8 cast of a 16-bit tensor (amax, then scale and
/// convert). Eager (float8_utils.py): abs (read 2, write 2) and max (read 2); to fp32 (2 + 4),
/// the scale's multiply (4 + 4), clamp (4 + 4), to fp8 (4 + 1): 29 bytes; kernels: abs, max,
/// four scalar ops on the amax (to fp64, clamp, divide, to fp32), the four passes and the
/// scale's reciprocal: 11. Compiled, Inductor fuses the amax into one reduction (read 2) and
/// the scale-and-convert into one pass (read 2, write 1): 5 bytes, 2 kernels.
struct CastCost {
  double bytes_per_element = 0;
  int kernels = 0;
};
CastCost float8_cast_cost(bool compiled);

}  // namespace ddpsim::model
