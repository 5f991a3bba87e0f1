// float8_cost.hpp: one Float8Linear GEMM as torchao runs it (model/workload/float8.hpp says what
// runs): the torch._scaled_mm kernel at the GPU's fp8 rate, and the memory-bound work around it
// (the casts of its operands, the fp8 transposes preprocess_addmm makes, rowwise's output
// scaling).
//
//   Float8GemmCost c = float8_gemm_cost(gpu, shape, GemmRole::kInputGrad, DType::kBf16, cfg,
//                                       /*weight_gathered_fp8=*/false, /*compiled=*/true);
#pragma once

#include "model/hardware/hardware.hpp"
#include "model/workload/float8.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::sim {

struct Float8GemmCost {
  bool fp8 = false;     ///< false: the GEMM stays in the compute dtype (rowwise_with_gw_hp's wgrad)
  double gemm_s = 0;    ///< torch._scaled_mm
  double memory_s = 0;  ///< casts, transposes, output scaling (bytes at HBM speed + launches)
  int kernels = 0;      ///< of memory_s
};

/// `s` is the GEMM's shape at the micro-batch, `role` which of the linear's three GEMMs it is
/// (forward Y = X W^T: M rows, N out, K in; input gradient dX = dY W: M rows, N in, K out; weight
/// gradient dW = dY^T X: M out, N in, K rows). The GEMM: 2MNK FLOPs at peak fp8 x efficiency
/// fp8 x the shape's tile utilisation and shape factor (the compute dtype's, kernel_rates.hpp),
/// or its bytes (fp8 operands, 16-bit output) at HBM speed when slower. Around it, per element
/// of a 16-bit operand, float8_cast_cost: forward casts the input and the weight; the input
/// gradient casts dY and the weight and copies the fp8 weight transposed (2 bytes per element:
/// read and write one byte); the weight gradient casts dY and the input and copies both
/// transposed. `weight_gathered_fp8` (FSDP2 float8 all-gather): the weight arrives cast, no
/// weight casts. Compiled, Inductor writes each cast in the layout its GEMM needs: no separate
/// transposes. rowwise (and rowwise_with_gw_hp's input gradient) scales the 16-bit output in one
/// more pass (read and write 2 bytes per element) where use_fast_accum is false (the two
/// gradients).
Float8GemmCost float8_gemm_cost(const model::GpuSpec& gpu, const model::GemmShape& s,
                                model::GemmRole role, model::DType compute,
                                const model::Float8Config& c, bool weight_gathered_fp8,
                                bool compiled);

}  // namespace ddpsim::sim
