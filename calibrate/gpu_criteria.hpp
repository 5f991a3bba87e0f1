// gpu_criteria.hpp: does a CUDA calibration reach the device's own ceilings?
//
// Issue 5's GPU goals, measured against what the same machine measured (not a datasheet):
//   GEMMs   every bf16 GEMM of the scenario (profile rows with `ops`) reaches at least gemm_min
//           (80%) of its roofline: min(peak, FLOP/byte x copy bandwidth), where peak is the rate
//           of the largest bf16 square GEMM of a grid (rows without `ops`; `ddpsim calibrate
//           --backend cuda` without a scenario times squares up to 8192^3) and FLOP/byte counts
//           2mnk x count over the operands read and C written once. Above the balance point
//           (peak / copy bandwidth) the bound is the peak, the issue's "80% of the dense bf16
//           rate"; below it (attention's k = 128 GEMMs: ~120 FLOP/B on an H200 whose balance is
//           ~180) no GEMM can reach the peak, and the copy bandwidth is the ceiling instead.
//           Without scenario rows, the grid's bf16 GEMMs from 4096 up are judged (the peak row
//           itself is never judged).
//   kernels every memory-bound kernel on a CUDA device (`kernels`: fused Adam, fp32 -> bf16/fp16
//           casts) moves at least copy_min (85%) of the device-to-device copy bandwidth (the
//           fastest `memory_bandwidth` row of kernel d2d_copy among the profiles).
// Nothing is judged against a peak the run did not measure: no grid bf16 square, or no
// d2d_copy row, is an InputError naming the file. A run with nothing to judge does not pass.
//
//   GpuCriteria r = gpu_criteria({{"grid.json", grid}, {"scenario.json", scen}});
//   std::puts(format_gpu_criteria(r).c_str());   // Markdown, one table per goal
//   return passed(r) ? 0 : 1;
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ddpsim::calib {

struct GpuCriteriaRow {
  std::string file;
  std::string what;          ///< GEMM: "MxNxK NT [first op +N more]"; kernel: its name
  double value = 0;          ///< GFLOP/s (GEMM) or GB/s (kernel)
  double fraction = 0;       ///< of the peak (GEMM) or of the device copy (kernel)
  double flop_per_byte = 0;  ///< GEMM only
  double bound_gflops = 0;   ///< GEMM: min(peak, flop_per_byte x copy GB/s)
  double of_bound = 0;       ///< what the goal is checked on (GEMM: of the roofline)
  bool ok = false;
};

struct GpuCriteria {
  double peak_gflops = 0;
  std::string peak_what;             ///< the square GEMM that set the peak, and its file
  double balance_flop_per_byte = 0;  ///< peak / copy bandwidth
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
/// Every judged row met its goal, and there were GEMMs and kernels to judge.
bool passed(const GpuCriteria& r);

}  // namespace ddpsim::calib
