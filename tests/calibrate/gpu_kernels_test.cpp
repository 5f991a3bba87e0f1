// gpu_kernels_test.cpp: the CUDA calibration kernels (label gpu). Skipped where
// cudaGetDeviceCount fails, as on machines with the toolkit but no GPU.
#include "calibrate/gpu_kernels.hpp"

#include <gtest/gtest.h>

namespace ddpsim::calib::gpu {
namespace {

TimingOptions quick() {
  TimingOptions o;
  o.warmup = 1;
  o.repeats = 3;
  o.budget_s = 0.2;
  return o;
}

#define REQUIRE_GPU()                                                       \
  do {                                                                      \
    std::string why;                                                        \
    if (device_count(&why) == 0) GTEST_SKIP() << "no CUDA device: " << why; \
  } while (false)

TEST(GpuKernels, DeviceInfo) {
  REQUIRE_GPU();
  const DeviceInfo d = device_info(0);
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.memory_bytes, 0);
  EXPECT_GT(d.sm_count, 0);
}

TEST(GpuKernels, GemmThroughputIsPlausible) {
  REQUIRE_GPU();
  // 4096^3 x 2 = 137 GFLOP: any CUDA GPU of the last decade takes 0.1 ms .. 10 s.
  const model::GemmShape s{4096, 4096, 4096, 1, false, true};
  for (auto dt : {model::DType::kFp32, model::DType::kBf16}) {
    const Stats st = time_gemm(0, s, dt, quick());
    EXPECT_GT(st.median_s, 1e-4);
    EXPECT_LT(st.median_s, 10);
    EXPECT_LE(st.min_s, st.median_s);
  }
}

TEST(GpuKernels, MemoryKernelsRun) {
  REQUIRE_GPU();
  const std::size_t n = std::size_t{1} << 24;
  EXPECT_GT(time_adam(0, n, quick()).median_s, 0);
  EXPECT_GT(time_cast(0, n, model::DType::kBf16, quick()).median_s, 0);
  // 2 x 256 MiB moved at most at ~10 TB/s: at least 50 us.
  EXPECT_GT(time_d2d_copy(0, std::size_t{256} << 20, quick()).median_s, 5e-5);
}

}  // namespace
}  // namespace ddpsim::calib::gpu
