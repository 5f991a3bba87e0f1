// kernel_rates.hpp: how fast one GPU runs one kernel of a layer, from kernel-level measurements.
//
// GEMMs (cuBLAS): the GPU preset's efficiency is the best-shaped large matmul's sustained,
// power-saturated fraction of peak (H100/H200: mamf-finder's MSMF, 698.6 of 989 TFLOP/s bf16;
// A100: Azure's cuBLASLt sweep after 10,000 warm-up iterations, 256.5 of 312; the preset's source
// says which). A real shape runs at that rate times its tile and wave utilisation (NVIDIA
// "Matrix Multiplication Background User's Guide": the output is cut into thread-block tiles,
// tiles run in waves of one per SM; a partial last tile or a partial last wave does full-tile,
// full-wave work; cuBLAS picks the tile per shape, so the best of its tile shapes is taken, and
// splits K when the output has too few tiles to fill the SMs) times the shape factor the
// preset's measured GEMM table gives it (gemm_shape_factor below: what the tile model misses,
// e.g. A100's 4096^3 at 0.89 of its best shape). Memory-bound shapes stay on the HBM roofline.
//
// Fused attention (model.attention sdpa or flash): the executed FLOPs (workload.hpp:
// Gemm::executed_flop_factor) run at the preset's attention_efficiency, forward and backward
// apart (FlashAttention-2 kernel benchmarks); fp32, or a GPU with no such benchmark, falls back
// to the GEMM rate of the same products and says so in the notes.
//
// TF32 (Ampere and newer): fp32 GEMMs run on the tensor cores at the preset's tf32 rate when
// PyTorch allows it for their library: cuDNN convolutions by default, cuBLAS matmuls only with
// training.allow_tf32_matmul (runs_tf32).
//
//   GemmTiling t = gemm_tiling({4096, 4096, 4096, 1}, 108);  // 2048/2052 on 128x64 tiles
#pragma once

#include "model/hardware/hardware.hpp"
#include "model/scenario/scenario.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::sim {

/// How cuBLAS lays a GEMM out on the SMs, and the useful fraction of the SM-time it occupies.
struct GemmTiling {
  double utilization = 1.0;  ///< useful MACs / (waves x SMs x tile area x slice depth)
  int split_k = 1;           ///< K slices (split-K), 1 when the output fills the SMs
};

/// The best over cuBLAS's tile shapes of the tile-wave grid for `shape` on `sm_count` SMs
/// (utilization 1 when sm_count is 0: not modelled). An output with fewer tiles than SMs is
/// split along K into as many slices as fill one wave, each at least 192 deep (cuBLASLt's
/// CUBLASLT_ALGO_CONFIG_SPLITK_NUM / REDUCTION_SCHEME, which its heuristic sets per shape;
/// cuDNN's weight-gradient kernels split the batch x pixel reduction alike). Without it a
/// convolution's weight gradient (64 x 147 outputs, K = batch x 112 x 112) would run on 3 SMs.
GemmTiling gemm_tiling(const model::GemmShape& shape, int sm_count);

/// How much slower than its tile model a GEMM runs on `gpu`, from the preset's measured
/// gemm_table for `dt`: each measured shape p gives q_p = (R_p / R_best) / u_p, its rate over the
/// sweep's best shape (which runs at efficiency x peak) over its own tile-wave utilization u_p;
/// a shape s gets the inverse-distance-weighted mean of q_p (weights 1/d^2, d the Euclidean
/// distance in (log2 m, log2 n, log2 k)), exactly q_p on a measured shape. So the rate of s is
/// peak x efficiency x u_s x factor, which reproduces every measured shape. 1 without a table
/// for `dt` (the tile model alone). cuBLAS's shape dependence (heuristic kernel choice, pipeline
/// fill, clocks at each load) is smooth in log shape over the sweeps held; transposes are not
/// told apart (the sweeps' own NN/NT/TN spread is 5-10%, results/gpu).
double gemm_shape_factor(const model::GpuSpec& gpu, model::DType dt, const model::GemmShape& shape);

/// HBM bytes of split-K's reduction: each of the `split_k` slices writes its fp32 partial
/// output and a reduction kernel reads them back and writes the `out_bytes`-per-element output.
/// 0 without a split.
double split_k_reduction_bytes(const model::GemmShape& shape, int split_k, double out_bytes);

/// The shape a fused attention kernel's rate depends on.
struct AttentionShape {
  model::AttentionImpl impl = model::AttentionImpl::kSdpa;
  double seq_len = 0;   ///< tokens per sample (0: unknown, the preset's long-sequence rate)
  double head_dim = 0;  ///< per-head width (0: unknown)
  bool causal = false;
};

/// The GPU's measured forward+backward rate of `kernel` ("flash2", "triton") at `shape`, from
/// its attention_benchmarks: linear in log2(seq_len) between measured lengths and linear in the
/// head dimension between the two nearest measured ones, clamped at the ends of both (the
/// benchmark has head dims 64 and 128, seq 512..16k); 0 when it has no series of that kernel
/// and causality.
double attention_benchmark_flops_per_s(const model::GpuSpec& gpu, const std::string& kernel,
                                       const AttentionShape& shape);

/// FLOP/s a fused attention kernel's executed FLOPs run at for `role` (forward, or the backward's
/// input-gradient kernel) in `dt`, or 0 when the preset has no kernel benchmark for it (fp32, a
/// GPU without flash kernels). The preset's attention_efficiency (fwd, bwd) is the kernels'
/// long-sequence rate; where the GPU holds a benchmark series for the shape's kernel, both are
/// scaled so that forward (1 part) plus backward (2.5 parts, FlashAttention's count) run at the
/// series' forward+backward rate. triton on a GPU without a triton series runs at flash1's
/// (FlashAttention-1, the same algorithm and kernel generation), else at flash2's;
/// `series_used` gets the kernel whose series set the rate ("" when none did).
double fused_attention_flops_per_s(const model::GpuSpec& gpu, model::DType dt, model::GemmRole role,
                                   const AttentionShape& shape = {},
                                   std::string* series_used = nullptr);

/// True when the GEMMs of `layer`, computing in `dt`, run as TF32 on `gpu`: fp32 only, a GPU
/// with a usable tf32 rate, and PyTorch's switch for the library that runs them allows it:
/// cuDNN for convolutions (torch.backends.cudnn.allow_tf32, default true), cuBLAS for everything
/// else (torch.backends.cuda.matmul.allow_tf32, default false since PyTorch 1.12).
bool runs_tf32(const model::GpuSpec& gpu, model::DType dt, const model::Layer& layer,
               const model::TrainingConfig& t);

/// Bytes (read + written) per sample that cuDNN spends transposing a convolution's NCHW tensors
/// to NHWC and back, for the forward (`role` kForward: input in, output back) or the backward
/// (anything else: dgrad transposes dY in and dX back, wgrad X and dY in). cuDNN's tensor-core
/// convolution kernels work on NHWC ("the cuDNN library may use padding, folding, and
/// NCHW-to-NHWC transformations to call the Tensor Core operations", cuDNN Developer Guide,
/// Tensor Core operations, Data and filter formats), and PyTorch passes its tensors in their
/// memory format (aten/src/ATen/native/ConvUtils.h cudnn_conv_suggest_memory_format: contiguous
/// unless the input or weight is channels_last). Zero for other layers, for training.channels_last,
/// and where the convolution does not run on tensor cores (fp32 without TF32; fp16/bf16 before
/// Volta, compute capability 7.0).
double nchw_transpose_bytes(const model::GpuSpec& gpu, model::DType dt, const model::Layer& layer,
                            const model::TrainingConfig& t, model::GemmRole role);

}  // namespace ddpsim::sim
