// gpu_criteria.hpp: does a CUDA calibration reach the device's own ceilings?
//
// Issue 5's GPU goals, measured against what the same run measured (not a datasheet):
//   GEMMs   every bf16 GEMM of the scenario (profile rows with `ops`) reaches at least
//           gemm_min (80%) of the dense bf16 rate of the largest square bf16 GEMM among the
//           profiles given (the grid of `ddpsim calibrate --backend cuda` without a scenario:
//           squares up to 8192); without scenario rows, the grid's bf16 GEMMs from 4096 up
//           are judged instead. fraction = row GFLOP/s / peak GFLOP/s.
//           The peak row itself is not judged.
//   copies  every memory-bound kernel on a CUDA device (`kernels`: fused Adam, fp32 -> bf16/fp16
//           casts) moves at least copy_min (85%) of the device-to-device copy bandwidth (the
//           fastest `memory_bandwidth` row of kernel d2d_copy among the profiles).
// Rows below the goal are listed with their fraction; nothing is judged against a peak the run
// did not measure (no bf16 square, or no d2d_copy row: InputError naming the file).
//
//   GpuCriteria r = gpu_criteria({{"grid.json", grid}, {"scenario.json", scen}});
//   std::puts(format_gpu_criteria(r).c_str());   // Markdown, one table per goal
//   return r.failures == 0 ? 0 : 1;
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ddpsim::calib {

struct GpuCriteriaRow {
  std::string file;
  std::string what;  ///< GEMM: "m x n x k NT [ops]"; kernel: its name
  double value = 0;  ///< GFLOP/s (GEMM) or GB/s (kernel)
  double fraction = 0;
  bool ok = false;
};

struct GpuCriteria {
  double peak_gflops = 0;
  std::string peak_what;  ///< the square GEMM that set the peak, and its file
  double gemm_min = 0.8;
  std::vector<GpuCriteriaRow> gemms;
  double copy_gbytes_per_s = 0;
  std::string copy_what;
  double copy_min = 0.85;
  std::vector<GpuCriteriaRow> kernels;
  int failures = 0;
};

/// profiles: (file name for messages, profile document). Throws InputError when no
/// profile has a bf16 square GEMM or a d2d_copy row, or a row lacks the keys used.
GpuCriteria gpu_criteria(const std::vector<std::pair<std::string, nlohmann::json>>& profiles,
                         double gemm_min = 0.8, double copy_min = 0.85);

std::string format_gpu_criteria(const GpuCriteria& r);

}  // namespace ddpsim::calib
