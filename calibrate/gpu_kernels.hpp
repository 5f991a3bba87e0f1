// gpu_kernels.hpp: what one GPU rank runs, timed with CUDA events: cuBLAS GEMMs (fp32, and bf16
// with fp32 accumulation, as autocast runs them), the memory-bound training kernels (fused fp32
// Adam update, fp32 -> bf16/fp16 gradient casts) and a device-to-device copy for bandwidth.
// Built only with CUDA (DDPSIM_HAVE_CUDA); plain C++ here, the kernels live in gpu_kernels.cu.
//
// No device (cudaGetDeviceCount fails, as on machines with the toolkit but no GPU) is not an
// error of this API: device_count() returns 0 and says why.
//
//   std::string why;
//   if (gpu::device_count(&why) == 0) { skip(why); }
//   Stats s = gpu::time_gemm(0, {4096, 4096, 4096, 1, false, true}, model::DType::kBf16, o);
#pragma once

#include <cstddef>
#include <string>

#include "calibrate/timing.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::calib::gpu {

struct DeviceInfo {
  int index = 0;
  std::string name;
  double memory_bytes = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::string driver_version, runtime_version, cublas_version;
};

/// Usable CUDA devices; 0 (with the CUDA error text in *why) when there are none.
int device_count(std::string* why = nullptr);
/// Throws ddpsim::Error naming the device when it cannot be queried.
DeviceInfo device_info(int device);

/// Row-major C[m,n] = op(A) op(B) (A [m,k] or [k,m] if trans_a; B [k,n] or [n,k] if trans_b),
/// `count` instances (strided batched), in fp32 or bf16/fp16 operands with fp32 accumulation.
Stats time_gemm(int device, const model::GemmShape& shape, model::DType dtype,
                const TimingOptions& o);
/// Fused fp32 Adam update of `elements` parameters (28 bytes per element).
Stats time_adam(int device, std::size_t elements, const TimingOptions& o);
/// fp32 -> `to` (bf16 or fp16) cast of `elements` values (6 bytes per element).
Stats time_cast(int device, std::size_t elements, model::DType to, const TimingOptions& o);
/// cudaMemcpy device-to-device of `bytes` (2 x bytes moved).
Stats time_d2d_copy(int device, std::size_t bytes, const TimingOptions& o);

}  // namespace ddpsim::calib::gpu
