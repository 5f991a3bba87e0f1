#include "simulator/analytic/kernel_rates.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

double gemm_shape_factor(const model::GpuSpec& gpu, model::DType dt,
                         const model::GemmShape& shape) {
  const auto it = gpu.gemm_table.find(dt);
  if (it == gpu.gemm_table.end() || it->second.empty() || shape.m <= 0 || shape.n <= 0 ||
      shape.k <= 0) {
    return 1.0;
  }
  const std::vector<model::GpuSpec::GemmMeasurement>& table = it->second;
  double best = 0;
  for (const auto& p : table) best = std::max(best, p.flops_per_s);
  const double lm = std::log2(static_cast<double>(shape.m));
  const double ln = std::log2(static_cast<double>(shape.n));
  const double lk = std::log2(static_cast<double>(shape.k));
  double weighted = 0, weights = 0, exact = 0;
  int exact_count = 0;
  for (const auto& p : table) {
    const model::GemmShape ps{static_cast<std::int64_t>(p.m), static_cast<std::int64_t>(p.n),
                              static_cast<std::int64_t>(p.k), 1};
    const double q = p.flops_per_s / best / gemm_tiling(ps, gpu.sm_count).utilization;
    const double dm = lm - std::log2(p.m), dn = ln - std::log2(p.n), dk = lk - std::log2(p.k);
    const double d2 = dm * dm + dn * dn + dk * dk;
    if (d2 < 1e-18) {  // a measured shape (more than once: transposes): its own rate
      exact += q;
      ++exact_count;
      continue;
    }
    weighted += q / d2;
    weights += 1.0 / d2;
  }
  return exact_count > 0 ? exact / exact_count : weighted / weights;
}

double split_k_reduction_bytes(const model::GemmShape& shape, int split_k, double out_bytes) {
  if (split_k <= 1) return 0.0;
  const double mn = static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                    static_cast<double>(shape.count);
  return mn * (2.0 * 4.0 * static_cast<double>(split_k) + out_bytes);
}

namespace {

// Linear interpolation of `y` over `x` (ascending) at `at`, clamped to the end values.
double interpolate_clamped(const std::vector<double>& x, const std::vector<double>& y, double at) {
  if (at <= x.front()) return y.front();
  if (at >= x.back()) return y.back();
  std::size_t i = 1;
  while (x[i] < at) ++i;
  const double t = (at - x[i - 1]) / (x[i] - x[i - 1]);
  return y[i - 1] + t * (y[i] - y[i - 1]);
}

}  // namespace

double attention_benchmark_flops_per_s(const model::GpuSpec& gpu, const std::string& kernel,
                                       const AttentionShape& shape) {
  // One rate per measured head dimension at this sequence length (linear in log2 seq: the
  // benchmark doubles the length per point).
  std::vector<double> dims, rates;
  for (const model::GpuSpec::AttentionBenchmark& b : gpu.attention_benchmarks) {
    if (b.kernel != kernel || b.causal != shape.causal) continue;
    std::vector<double> log_seq;
    log_seq.reserve(b.seq_len.size());
    for (double s : b.seq_len) log_seq.push_back(std::log2(s));
    const double rate = shape.seq_len > 0
                            ? interpolate_clamped(log_seq, b.flops_per_s, std::log2(shape.seq_len))
                            : b.flops_per_s.back();
    // Keep the series ordered by head dimension.
    auto it = std::lower_bound(dims.begin(), dims.end(), b.head_dim);
    rates.insert(rates.begin() + (it - dims.begin()), rate);
    dims.insert(it, b.head_dim);
  }
  if (dims.empty()) return 0.0;
  return shape.head_dim > 0 ? interpolate_clamped(dims, rates, shape.head_dim) : rates.back();
}

double fused_attention_flops_per_s(const model::GpuSpec& gpu, model::DType dt, model::GemmRole role,
                                   const AttentionShape& shape, std::string* series_used) {
  // Flash kernels take fp16/bf16 only (PyTorch aten/src/ATen/native/transformers/cuda/
  // sdp_utils.cpp check_flash_attention_hardware_support: sm80..sm121; flash dtypes half and
  // bfloat16); fp32 runs the memory-efficient kernel, for which no benchmark is held.
  if (dt != model::DType::kFp16 && dt != model::DType::kBf16) return 0.0;
  const auto peak = gpu.peak_flops.find(dt);
  if (peak == gpu.peak_flops.end()) return 0.0;
  const double eff = role == model::GemmRole::kForward ? gpu.attention_fwd_efficiency
                                                       : gpu.attention_bwd_efficiency;
  const double rate = peak->second * eff;
  if (rate <= 0) return 0.0;
  const bool triton = shape.impl == model::AttentionImpl::kTriton;
  // triton without its own series on this GPU: FlashAttention-1's CUDA kernel where measured
  // (the same algorithm and kernel generation: mma.sync tiles, no Hopper wgmma/TMA, as the
  // pre-Hopper Triton compiler emits; on A100, where both are measured, Triton runs within 10%
  // of FlashAttention-1 at causal head dim 128), else FlashAttention-2's.
  std::string used = triton ? "triton" : "flash2";
  double measured = attention_benchmark_flops_per_s(gpu, used, shape);
  for (const char* stand_in : {"flash1", "flash2"}) {
    if (!triton || measured > 0) break;
    used = stand_in;
    measured = attention_benchmark_flops_per_s(gpu, used, shape);
  }
  if (series_used != nullptr) *series_used = measured > 0 ? used : "";
  if (measured <= 0) return rate;
  // FlashAttention's benchmark (benchmarks/benchmark_flash_attention.py flops()): the backward
  // executes 2.5x the forward's FLOPs, so forward+backward runs at 3.5 / (1/fwd + 2.5/bwd).
  const double fwd = peak->second * gpu.attention_fwd_efficiency;
  const double bwd = peak->second * gpu.attention_bwd_efficiency;
  const double preset_fwd_bwd = 3.5 / (1.0 / fwd + 2.5 / bwd);
  return rate * measured / preset_fwd_bwd;
}

bool runs_tf32(const model::GpuSpec& gpu, model::DType dt, const model::Layer& layer,
               const model::TrainingConfig& t) {
  if (dt != model::DType::kFp32 || gpu.tf32_peak_flops <= 0 || gpu.tf32_efficiency <= 0) {
    return false;
  }
  // PyTorch controls the two separately (docs/source/notes/cuda.rst, "TensorFloat-32 (TF32) on
  // Ampere (and later) devices": "matmuls and convolutions are controlled separately";
  // torch/backends/cudnn/__init__.py allow_tf32 -> _set_cudnn_allow_tf32, torch/backends/cuda/
  // __init__.py matmul.allow_tf32 -> _set_cublas_allow_tf32).
  return layer.kind == "conv" ? t.allow_tf32_cudnn : t.allow_tf32_matmul;
}

double nchw_transpose_bytes(const model::GpuSpec& gpu, model::DType dt, const model::Layer& layer,
                            const model::TrainingConfig& t, model::GemmRole role) {
  if (layer.kind != "conv" || t.channels_last || layer.conv_io_elements_per_sample <= 0) {
    return 0.0;
  }
  const bool half = dt == model::DType::kFp16 || dt == model::DType::kBf16;
  const bool tensor_cores = runs_tf32(gpu, dt, layer, t) ||
                            (half && gpu.compute_capability >= 7.0 && gpu.peak_flops.contains(dt));
  if (!tensor_cores) return 0.0;
  // Each transposed element is read once and written once, in the compute dtype (TF32 keeps
  // fp32 storage). Forward: X in, Y back = (x + y). Backward: dgrad dY in, dX back (x + y), and
  // wgrad X and dY in (x + y); the stem convolution computes no dX, so only wgrad's.
  const double passes =
      role == model::GemmRole::kForward ? 1.0 : (layer.conv_input_grad ? 2.0 : 1.0);
  return 2.0 * passes * layer.conv_io_elements_per_sample * model::dtype_bytes(dt);
}

}  // namespace ddpsim::sim
