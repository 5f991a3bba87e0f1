// bench_kernels.cpp: Google Benchmark timings of the calibration kernels, for comparing
// machines and OpenBLAS builds (ddpsim-calibrate records the same figures in a profile).
//   sgemm: nn.Linear forward/dgrad/wgrad shapes and squares, single-threaded as one rank runs;
//   stream triad; fp32 Adam. GPU variants (cuBLAS fp32/bf16, d2d copy) use manual timing from
//   CUDA events and are skipped with a message where there is no device.
//
//   ddpsim_calibrate_bench --benchmark_out=results/bench/calibrate_kernels.json
//                          --benchmark_out_format=json        (one command line)
#include <benchmark/benchmark.h>

#include <string>

#include "calibrate/cpu_kernels.hpp"
#ifdef DDPSIM_HAVE_CUDA
#include "calibrate/gpu_kernels.hpp"
#endif

namespace {

using ddpsim::calib::Stats;
using ddpsim::calib::TimingOptions;
using ddpsim::model::GemmShape;

// One Google Benchmark iteration = one calibration measurement's median (few repeats), so the
// operands are allocated once per measurement, as the calibration does.
TimingOptions short_timing() {
  TimingOptions o;
  o.warmup = 1;
  o.repeats = 3;
  o.min_repeats = 1;
  o.min_sample_s = 1e-3;
  o.budget_s = 0.2;
  return o;
}

void BM_Sgemm(benchmark::State& state) {
  ddpsim::calib::blas_single_thread();
  const GemmShape s{state.range(0),      state.range(1),     state.range(2), 1,
                    state.range(3) != 0, state.range(4) != 0};
  double t = 0;
  for (auto _ : state) {
    const Stats st = ddpsim::calib::time_sgemm(s, short_timing());
    t = st.median_s;
    state.SetIterationTime(t);
  }
  state.counters["GFLOP/s"] = s.flops() / t / 1e9;
}
BENCHMARK(BM_Sgemm)
    ->ArgNames({"m", "n", "k", "ta", "tb"})
    ->Args({32, 4096, 1024, 0, 1})
    ->Args({32, 1024, 4096, 0, 0})
    ->Args({4096, 1024, 32, 1, 0})
    ->Args({512, 512, 512, 0, 0})
    ->Args({1024, 1024, 1024, 0, 0})
    ->UseManualTime()
    ->Iterations(3);

void BM_StreamTriad(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  double t = 0;
  for (auto _ : state) {
    t = ddpsim::calib::time_stream(ddpsim::calib::StreamKernel::kTriad, n, short_timing()).median_s;
    state.SetIterationTime(t);
  }
  state.counters["GB/s"] =
      ddpsim::calib::stream_bytes(ddpsim::calib::StreamKernel::kTriad, n) / t / 1e9;
}
BENCHMARK(BM_StreamTriad)->Arg(1 << 20)->Arg(1 << 24)->UseManualTime()->Iterations(3);

void BM_AdamCpu(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  double t = 0;
  for (auto _ : state) {
    t = ddpsim::calib::time_adam(n, short_timing()).median_s;
    state.SetIterationTime(t);
  }
  state.counters["GB/s"] = ddpsim::calib::adam_bytes(n) / t / 1e9;
}
BENCHMARK(BM_AdamCpu)->Arg(1 << 22)->UseManualTime()->Iterations(3);

#ifdef DDPSIM_HAVE_CUDA
bool no_gpu(benchmark::State& state) {
  std::string why;
  if (ddpsim::calib::gpu::device_count(&why) > 0) return false;
  state.SkipWithError(("no CUDA device: " + why).c_str());
  for (auto _ : state) {
  }
  return true;
}

void BM_CublasGemm(benchmark::State& state) {
  if (no_gpu(state)) return;
  const auto dt = state.range(1) ? ddpsim::model::DType::kBf16 : ddpsim::model::DType::kFp32;
  const std::int64_t n = state.range(0);
  const GemmShape s{n, n, n, 1, false, true};
  double t = 0;
  for (auto _ : state) {
    t = ddpsim::calib::gpu::time_gemm(0, s, dt, short_timing()).median_s;
    state.SetIterationTime(t);
  }
  state.counters["TFLOP/s"] = s.flops() / t / 1e12;
}
BENCHMARK(BM_CublasGemm)
    ->ArgNames({"n", "bf16"})
    ->Args({4096, 0})
    ->Args({8192, 1})
    ->UseManualTime()
    ->Iterations(3);

void BM_DeviceCopy(benchmark::State& state) {
  if (no_gpu(state)) return;
  const std::size_t bytes = std::size_t{1} << 30;
  double t = 0;
  for (auto _ : state) {
    t = ddpsim::calib::gpu::time_d2d_copy(0, bytes, short_timing()).median_s;
    state.SetIterationTime(t);
  }
  state.counters["GB/s"] = 2.0 * bytes / t / 1e9;
}
BENCHMARK(BM_DeviceCopy)->UseManualTime()->Iterations(3);
#endif

}  // namespace

BENCHMARK_MAIN();
