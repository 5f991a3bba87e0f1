// kernel_rates.hpp: how fast one GPU runs one kernel of a layer, from kernel-level measurements.
//
// GEMMs (cuBLAS): the GPU preset's efficiency is the best-shaped large matmul's fraction of peak
// (a matmul sweep, stas00/ml-engineering's mamf-finder: the sustainable, power-saturated rate
// where published, H200 698.6 of 989 TFLOP/s bf16; else the burst maximum, A100 SXM 267.9 of
// 312; the preset's source says which). A real shape runs at that rate times its tile and wave
// utilisation (NVIDIA "Matrix Multiplication Background User's Guide": the output is cut into
// thread-block tiles, tiles run in waves of one per SM; a partial last tile or a partial last
// wave does full-tile, full-wave work). cuBLAS picks the tile per shape, so the best of its tile
// shapes is taken; smaller tiles are not charged a data-reuse penalty (no kernel measurement here
// sets one). Memory-bound shapes stay on the HBM roofline.
//
// Fused attention (model.attention sdpa or flash): the executed FLOPs (workload.hpp:
// Gemm::executed_flop_factor) run at the preset's attention_efficiency, forward and backward
// apart (FlashAttention-2 kernel benchmarks); fp32, or a GPU with no such benchmark, falls back
// to the GEMM rate of the same products and says so in the notes.
//
//   double u = gemm_tile_wave_utilization({4096, 4096, 4096, 1}, 108);  // 1.0 on 256x128 tiles
#pragma once

#include "model/hardware.hpp"
#include "model/workload.hpp"

namespace ddpsim::sim {

/// Useful fraction of the tile-wave grid for `shape` on `sm_count` SMs: the best over cuBLAS's
/// tile shapes of (M N count) / (tiles x tile area) x tiles / (waves x SMs). 1 when sm_count is 0
/// (not modelled).
double gemm_tile_wave_utilization(const model::GemmShape& shape, int sm_count);

/// FLOP/s a fused attention kernel's executed FLOPs run at for `role` (forward, or the backward's
/// input-gradient kernel) in `dt`, or 0 when the preset has no kernel benchmark for it (fp32, a
/// GPU without flash kernels).
double fused_attention_flops_per_s(const model::GpuSpec& gpu, model::DType dt,
                                   model::GemmRole role);

}  // namespace ddpsim::sim
