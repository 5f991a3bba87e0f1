#include "simulator/analytic/float8_cost.hpp"

#include <algorithm>

#include "simulator/analytic/kernel_rates.hpp"

namespace ddpsim::sim {

using model::GemmRole;

Float8GemmCost float8_gemm_cost(const model::GpuSpec& gpu, const model::GemmShape& s, GemmRole role,
                                model::DType compute, const model::Float8Config& c,
                                bool weight_gathered_fp8, bool compiled) {
  Float8GemmCost r;
  const bool gw_hp = c.recipe == model::Float8Recipe::kRowwiseWithGwHp;
  if (role == GemmRole::kWeightGrad && gw_hp) return r;  // a bf16 mm (config.py:364-368)
  r.fp8 = true;
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n),
               k = static_cast<double>(s.k), count = static_cast<double>(s.count);
  const double peak = gpu.peak_flops.at(model::DType::kFp8) * gpu.efficiency.at(model::DType::kFp8);
  const GemmTiling tiling = gemm_tiling(s, gpu.sm_count);
  const double rate = peak * tiling.utilization * gemm_shape_factor(gpu, compute, s);
  const double hbm = gpu.memory_bandwidth * gpu.memory_efficiency;
  const double bytes = count * ((m * k + k * n) * 1.0 + m * n * 2.0);
  r.gemm_s = std::max(s.flops() / rate, bytes / hbm);

  const model::CastCost cast = model::float8_cast_cost(compiled);
  double cast_elements = 0, transposed_elements = 0;
  int casts = 0, transposes = 0;
  const auto add_cast = [&](double elements) {
    cast_elements += elements;
    ++casts;
  };
  const auto add_transpose = [&](double elements) {
    if (compiled) return;
    transposed_elements += elements;
    ++transposes;
  };
  switch (role) {
    case GemmRole::kForward:  // input [M, K], weight [N, K]
      add_cast(m * k);
      if (!weight_gathered_fp8) add_cast(n * k);
      break;
    case GemmRole::kInputGrad:  // dY [M, K], weight [K, N] used transposed
      add_cast(m * k);
      if (!weight_gathered_fp8) add_cast(n * k);
      add_transpose(n * k);
      break;
    case GemmRole::kWeightGrad:  // dY^T [M, K] and X [K, N], both transposed copies
      add_cast(m * k);
      add_cast(n * k);
      add_transpose(m * k);
      add_transpose(n * k);
      break;
  }
  const bool scale_output =
      role != GemmRole::kForward && c.recipe != model::Float8Recipe::kTensorwise;
  const double scale_bytes = scale_output ? 4.0 * m * n : 0.0;
  r.kernels = casts * cast.kernels + transposes + (scale_output ? 1 : 0);
  r.memory_s =
      count * (cast_elements * cast.bytes_per_element + transposed_elements * 2.0 + scale_bytes) /
          hbm +
      static_cast<double>(r.kernels) * gpu.kernel_floor_s;
  return r;
}

}  // namespace ddpsim::sim
