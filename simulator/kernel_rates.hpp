// kernel_rates.hpp: how fast one GPU runs one kernel of a layer, from kernel-level measurements.
//
// GEMMs (cuBLAS): the GPU preset's efficiency is the best-shaped large matmul's fraction of peak
// (a matmul sweep, stas00/ml-engineering's mamf-finder: the sustainable, power-saturated rate
// where published, H200 698.6 of 989 TFLOP/s bf16; else the burst maximum, A100 SXM 267.9 of
// 312; the preset's source says which). A real shape runs at that rate times its tile and wave
// utilisation (NVIDIA "Matrix Multiplication Background User's Guide": the output is cut into
// thread-block tiles, tiles run in waves of one per SM; a partial last tile or a partial last
// wave does full-tile, full-wave work). cuBLAS picks the tile per shape, so the best of its tile
// shapes is taken, and splits K when the output has too few tiles to fill the SMs; smaller tiles
// are not charged a data-reuse penalty (no kernel measurement here sets one). Memory-bound shapes
// stay on the HBM roofline.
//
// Fused attention (model.attention sdpa or flash): the executed FLOPs (workload.hpp:
// Gemm::executed_flop_factor) run at the preset's attention_efficiency, forward and backward
// apart (FlashAttention-2 kernel benchmarks); fp32, or a GPU with no such benchmark, falls back
// to the GEMM rate of the same products and says so in the notes.
//
//   GemmTiling t = gemm_tiling({4096, 4096, 4096, 1}, 108);  // 2048/2052 on 128x64 tiles
#pragma once

#include "model/hardware.hpp"
#include "model/workload.hpp"

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

/// HBM bytes of split-K's reduction: each of the `split_k` slices writes its fp32 partial
/// output and a reduction kernel reads them back and writes the `out_bytes`-per-element output.
/// 0 without a split.
double split_k_reduction_bytes(const model::GemmShape& shape, int split_k, double out_bytes);

/// FLOP/s a fused attention kernel's executed FLOPs run at for `role` (forward, or the backward's
/// input-gradient kernel) in `dt`, or 0 when the preset has no kernel benchmark for it (fp32, a
/// GPU without flash kernels).
double fused_attention_flops_per_s(const model::GpuSpec& gpu, model::DType dt,
                                   model::GemmRole role);

}  // namespace ddpsim::sim
