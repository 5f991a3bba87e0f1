// builders/detail/torch_ops.hpp: the captured aten ops of a ddpsim_torch/2 file as each layer's
// GEMMs and memory-bound kernels (python/ddpsim_torch/aten_capture.py writes them; the format is
// docs/torch-export.md "The ops array").
//
// Each op of phase forward, backward or recompute is charged to the layer whose name is its
// `module` (ops of the root module and of code outside every module, e.g. the loss, to the last
// layer, which runs just before them forward and just after them backward):
//   gemm ops (mm, addmm, bmm, ...)       one Gemm each, of the op's m, n, k and count;
//                                        forward: kForward; backward and recompute: kWeightGrad
//                                        when its output has the shape of one of the layer's
//                                        parameters (or its transpose), else kInputGrad;
//   elementwise, copy, reduction, fill   one ElementwiseOp each, of bytes_read + bytes_written
//                                        (the capture's rules: views and allocations move 0);
//   view, alloc                          nothing;
//   conv, attention                      left to the layer's per-layer products of format /1
//                                        (the capture has their FLOPs, not their GEMM shapes),
//                                        which the layer then keeps.
// Recompute ops are costed in backward, where torch.utils.checkpoint runs them. Optimizer ops
// are not layer work (ddpsim's optimizer model prices the step).
// Per sample: the capture ran at example_batch B. A weight gradient's batch is its reduced
// extent k; a batched product's is its count when B divides it; otherwise the first of m, n, k
// that B divides. Element-wise bytes are divided by B. So the capture is exact at B and scales
// linearly to other batches (a bias gradient's output, which does not grow with the batch, is
// then scaled too: small).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/workload/workload.hpp"

namespace ddpsim::model::detail {

/// Replace the GEMMs and element-wise work of `w`'s layers with the captured ops of `ops`
/// (config.ops of a /2 file; `pointer` is where it lies, for errors), at example batch
/// `example_batch`. Layers holding conv or attention ops keep their own products and element-
/// wise work. Returns how many ops were charged.
int apply_captured_ops(Workload& w, const nlohmann::json& ops, std::int64_t example_batch,
                       const std::string& file, const std::string& pointer);

}  // namespace ddpsim::model::detail
