#include "simulator/kernel_rates.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace ddpsim::sim {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Thread-block tile shapes (rows x columns of the output) of cuBLAS's tensor-core GEMMs, the
// ones NVIDIA's Matrix Multiplication Background guide lists ("Tile Quantization"): 256x128 and
// 128x256 are the most efficient, 64x64 the least.
constexpr std::array<std::pair<std::int64_t, std::int64_t>, 6> kTiles{
    {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}}};

}  // namespace

double gemm_tile_wave_utilization(const model::GemmShape& shape, int sm_count) {
  if (sm_count <= 0 || shape.m <= 0 || shape.n <= 0 || shape.count <= 0) return 1.0;
  const double useful = static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                        static_cast<double>(shape.count);
  double best = 0.0;
  for (const auto& [tm, tn] : kTiles) {
    const std::int64_t tiles = ceil_div(shape.m, tm) * ceil_div(shape.n, tn) * shape.count;
    const std::int64_t waves = ceil_div(tiles, sm_count);
    // Every launched wave costs a full wave of full tiles.
    const double grid = static_cast<double>(waves) * static_cast<double>(sm_count) *
                        static_cast<double>(tm) * static_cast<double>(tn);
    best = std::max(best, useful / grid);
  }
  return best;
}

double fused_attention_flops_per_s(const model::GpuSpec& gpu, model::DType dt,
                                   model::GemmRole role) {
  // Flash kernels take fp16/bf16 only (PyTorch aten/src/ATen/native/transformers/cuda/
  // sdp_utils.cpp check_flash_attention_hardware_support: sm80..sm121; flash dtypes half and
  // bfloat16); fp32 runs the memory-efficient kernel, for which no benchmark is held.
  if (dt != model::DType::kFp16 && dt != model::DType::kBf16) return 0.0;
  const auto peak = gpu.peak_flops.find(dt);
  if (peak == gpu.peak_flops.end()) return 0.0;
  const double eff = role == model::GemmRole::kForward ? gpu.attention_fwd_efficiency
                                                       : gpu.attention_bwd_efficiency;
  return peak->second * eff;
}

}  // namespace ddpsim::sim
