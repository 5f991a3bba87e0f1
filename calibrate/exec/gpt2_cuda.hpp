// gpt2_cuda.hpp: the executor's CUDA compute backend — the GPT-2 of gpt2.hpp trained on one GPU
// in bf16 with fp32 master weights, as PyTorch autocast(bfloat16) runs an fp32 model.
//
// What runs (gpt2_cuda.cu): every Conv1D and the tied lm_head are cuBLAS cublasGemmEx with bf16
// operands and fp32 accumulation (CUBLAS_COMPUTE_32F); weight gradients are written by the wgrad
// GEMM straight into the fp32 gradients (beta = 1), as autocast's cast backward yields fp32
// .grad; the residual stream, LayerNorm statistics, softmax and the loss are fp32, LayerNorm and
// GELU outputs bf16 (the GEMMs' inputs); eager attention per sequence, the heads one strided
// batched GEMM, the s x s probabilities kept in bf16 for backward; AdamW (torch.optim.AdamW,
// foreach-free) over the fp32 masters, then one cast to the bf16 copies the next forward reads.
// The project's own kernels: embedding gather/scatter-add, LayerNorm, GELU (tanh form), causal
// softmax, cross-entropy, bias, casts, AdamW. Every buffer is allocated once before the first
// step; peak_bytes is their sum plus cuBLAS's workspace (the analogue of
// torch.cuda.max_memory_allocated), device_used_bytes what cudaMemGetInfo saw in use at the peak.
//
// One GPU, one rank: NCCL refuses two ranks on one device, so this checks compute, memory and
// the optimizer (issue 18 item 3); the multi-GPU DDP path (NCCL on its own stream after the
// bucket's gradients) is not implemented here.
//
//   CudaRunResult r = run_gpt2_cuda(spec, {.batch = 8, .steps = 10});
//   if (!r.ran) std::cerr << r.why;  // no device, or built without CUDA
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/exec/gpt2.hpp"

namespace ddpsim::exec {

struct CudaRunOptions {
  std::int64_t batch = 1;  ///< sequences per step
  int steps = 5;           ///< measured steps
  int warmup_steps = 1;    ///< run first, left out of the medians
  float lr = 1e-4f;        ///< AdamW learning rate (weight decay 0.01, betas 0.9/0.999, eps 1e-8)
  std::uint64_t seed = 1;
  /// Keep the first step's loss and fp32 gradients (CudaRunResult::first_gradients): the
  /// device test compares them with the CPU network's (tests/calibrate/exec/gpt2_cuda_test.cpp).
  bool keep_first_gradients = false;
};

struct CudaStep {
  double step_s = 0, forward_s = 0, backward_s = 0, optimizer_s = 0;
  float loss = 0;
};

struct CudaRunResult {
  bool ran = false;
  std::string why;                     ///< why it did not run (no device, no CUDA build)
  std::string device;                  ///< cudaDeviceProp::name
  std::vector<CudaStep> steps;         ///< measured steps only
  std::int64_t peak_bytes = 0;         ///< every buffer the run allocated, plus cuBLAS's workspace
  std::int64_t device_used_bytes = 0;  ///< total - free (cudaMemGetInfo) while they were held
  std::int64_t param_count = 0;
  float first_loss = 0;                ///< the first step's loss (warm-up or not)
  std::vector<float> first_gradients;  ///< with keep_first_gradients: gpt2.hpp's flat layout
};

/// True when this build has the CUDA backend.
bool cuda_backend_built();

/// Trains on device 0. Returns ran = false with the reason when there is no CUDA build or no
/// device; throws ddpsim::Error on a CUDA or cuBLAS error.
CudaRunResult run_gpt2_cuda(const Gpt2Spec& spec, const CudaRunOptions& options);

}  // namespace ddpsim::exec
