// builders/torch_export.hpp: a model exported from PyTorch by python/ddpsim_torch as a Workload.
//
// python/ddpsim_torch runs the user's nn.Module once and writes a model file (the zoo format of
// zoo.hpp, "builder": "torch_export") whose "config" lists, per sample of its example batch:
//   tensors:  every parameter in named_parameters() order: name, module, layer, shape, dtype,
//             requires_grad, tied_to (the earlier listing of the same Parameter);
//   layers:   the modules that own parameters or ran work, in named_modules() order: their
//             forward matrix products {m, n, k, count, batch_dim, a_grad, b_grad, b_is_weight},
//             other FLOPs, element-wise bytes, activation bytes kept for backward;
//   buffers:  every registered buffer with its layer and bytes;
//   grad_ready_order: the order the gradients became ready in backward (the order DDP rebuilds
//             its buckets in), as indices into tensors.
// Each forward product C[m,n] = A[m,k] B[k,n] becomes the GEMMs backward runs for it:
//   forward     (m, n, k)                                   batch dim as exported
//   A's grad    (m, k, n)  when a_grad                       M->M, N->K, K->N, count->count
//   B's grad    (n, k, m)  when b_grad (a weight gradient when b_is_weight)
//                                                            M->K, N->M, K->N, count->count
// which for nn.Linear are exactly add_linear_gemms' three GEMMs. Element-wise work reads and
// writes `elementwise_bytes_per_sample` forward and 1.5x that backward (the gradient and the
// saved input read, the input gradient written: builders/mlp.cpp's 8 and 12 bytes per element),
// with `elementwise_flops_per_sample` each way (builders/mlp.cpp's one per element).
// Parameters that do not require grad are left out (DDP never buckets them; their memory is
// not counted). Format ddpsim_torch/2 adds `ops`, the captured aten ops of one training step,
// which replace the layers' products and element-wise estimate (detail/torch_ops.hpp).
// docs/torch-export.md describes the file for people.
//
//   Workload w = build_torch_export(doc.at("config"), "my_model.json");
//   assign_buckets(w, {...});   // DDP's buckets, in the measured gradient-ready order
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/workload/workload.hpp"

namespace ddpsim::model {

/// The Workload of an exported model file's "config". Bad or missing keys throw InputError
/// naming `file` and the JSON pointer (relative to the config: callers rebase it).
Workload build_torch_export(const nlohmann::json& config, const std::string& file);

}  // namespace ddpsim::model
