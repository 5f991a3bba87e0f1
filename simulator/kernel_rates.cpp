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

// The shallowest K slice a split-K kernel is given: one thread-block tile's K extent times its
// pipeline stages, CUTLASS's default Ampere tensor-core GEMM (include/cutlass/gemm/device/
// default_gemm_configuration.h, OpClassTensorOp Sm80: ThreadblockShape K 64, kStages 3).
constexpr std::int64_t kSplitKMinSliceK = 64 * 3;

}  // namespace

GemmTiling gemm_tiling(const model::GemmShape& shape, int sm_count) {
  if (sm_count <= 0 || shape.m <= 0 || shape.n <= 0 || shape.count <= 0) return {};
  const double mn = static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                    static_cast<double>(shape.count);
  const std::int64_t k = std::max<std::int64_t>(shape.k, 1);
  GemmTiling best{0.0, 1};
  for (const auto& [tm, tn] : kTiles) {
    const std::int64_t tiles = ceil_div(shape.m, tm) * ceil_div(shape.n, tn) * shape.count;
    // Split-K when the output has fewer tiles than SMs: as many K slices as fill one wave, each
    // at least kSplitKMinSliceK deep.
    const std::int64_t split =
        tiles < sm_count ? std::max<std::int64_t>(
                               1, std::min<std::int64_t>(sm_count / tiles, k / kSplitKMinSliceK))
                         : 1;
    const std::int64_t waves = ceil_div(tiles * split, sm_count);
    // Every launched wave costs a full wave of full tiles, each as deep as its slice of K.
    const double grid = static_cast<double>(waves) * static_cast<double>(sm_count) *
                        static_cast<double>(tm) * static_cast<double>(tn) *
                        static_cast<double>(ceil_div(k, split));
    const double u = mn * static_cast<double>(k) / grid;
    if (u > best.utilization) best = {u, static_cast<int>(split)};
  }
  return best;
}

double split_k_reduction_bytes(const model::GemmShape& shape, int split_k, double out_bytes) {
  if (split_k <= 1) return 0.0;
  const double mn = static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                    static_cast<double>(shape.count);
  return mn * (2.0 * 4.0 * static_cast<double>(split_k) + out_bytes);
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
