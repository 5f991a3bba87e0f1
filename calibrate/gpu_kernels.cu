#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "calibrate/gpu_kernels.hpp"
#include "model/error.hpp"

namespace ddpsim::calib::gpu {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw Error(std::string("cuBLAS ") + what + ": status " + std::to_string(static_cast<int>(s)));
  }
}

// Device memory freed on scope exit.
struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(std::size_t bytes) {
    check(cudaMalloc(&p, std::max<std::size_t>(bytes, 16)), "cudaMalloc");
  }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

// Times `launch` (which enqueues one call on the default stream) with CUDA events: warm-up,
// calls per sample doubled until a sample lasts min_sample_s, then `repeats` samples.
template <typename F>
Stats time_events(F&& launch, const TimingOptions& o) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  auto sample = [&](int inner) {
    check(cudaEventRecord(a), "cudaEventRecord");
    for (int i = 0; i < inner; ++i) launch();
    check(cudaEventRecord(b), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    return ms * 1e-3;
  };
  for (int i = 0; i < o.warmup; ++i) launch();
  check(cudaDeviceSynchronize(), "warm-up");
  int inner = 1;
  while (sample(inner) < o.min_sample_s && inner < (1 << 16)) inner *= 2;
  std::vector<double> samples;
  double spent = 0;
  while (static_cast<int>(samples.size()) < o.repeats) {
    const double s = sample(inner);
    spent += s;
    samples.push_back(s / inner);
    if (static_cast<int>(samples.size()) >= o.min_repeats && spent > o.budget_s) break;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return summarize(std::move(samples));
}

__global__ void fill_kernel(float* x, std::size_t n, float v) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    x[i] = v * static_cast<float>((i % 251) + 1) / 251.0f;
  }
}

// GEMM operands: values in [-1, 1) from a hash of the index. Zeros (cudaMemset) would flatter
// the tensor cores: on an H200 an 8192^3 bf16 GEMM ran at 894 TFLOP/s on zeros and 788 on random
// data (the device notes' measurement), and a training step multiplies real values.
__device__ inline void store_value(float* p, float v) { *p = v; }
__device__ inline void store_value(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }
__device__ inline void store_value(__half* p, float v) { *p = __float2half(v); }

template <typename T>
__global__ void random_fill_kernel(T* x, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ static_cast<unsigned>(i >> 32) ^ seed;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    store_value(x + i, static_cast<float>(h & 0xffffu) / 32768.0f - 1.0f);
  }
}

// torch.optim.Adam's update, fused (one pass over p, g, m, v).
__global__ void adam_kernel(float* p, const float* g, float* m, float* v, std::size_t n, float lr,
                            float b1, float b2, float eps, float c1, float c2) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float gi = g[i];
    const float mi = b1 * m[i] + (1.0f - b1) * gi;
    const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] -= lr / c1 * mi / (sqrtf(vi) / c2 + eps);
  }
}

__global__ void cast_bf16_kernel(const float* x, __nv_bfloat16* y, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    y[i] = __float2bfloat16(x[i]);
  }
}
__global__ void cast_fp16_kernel(const float* x, __half* y, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    y[i] = __float2half(x[i]);
  }
}

int grid_for(std::size_t n) {
  return static_cast<int>(std::min<std::size_t>((n + 255) / 256, 65535));
}

void random_fill(void* p, std::size_t n, model::DType dtype, unsigned seed) {
  switch (dtype) {
    case model::DType::kFp32:
      random_fill_kernel<<<grid_for(n), 256>>>(static_cast<float*>(p), n, seed);
      break;
    case model::DType::kBf16:
      random_fill_kernel<<<grid_for(n), 256>>>(static_cast<__nv_bfloat16*>(p), n, seed);
      break;
    case model::DType::kFp16:
      random_fill_kernel<<<grid_for(n), 256>>>(static_cast<__half*>(p), n, seed);
      break;
    default:
      throw Error(std::string("random_fill: dtype ") + model::dtype_name(dtype));
  }
}

}  // namespace

int device_count(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = cudaGetErrorString(e);
    cudaGetLastError();
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device";
  return n;
}

DeviceInfo device_info(int device) {
  DeviceInfo d;
  d.index = device;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  d.name = prop.name;
  d.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  check(cudaDeviceGetAttribute(&d.sm_count, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute");
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  d.driver_version = ver(drv);
  d.runtime_version = ver(rt);
  int cb = 0;
  cublasGetProperty(MAJOR_VERSION, &cb);
  int cbm = 0, cbp = 0;
  cublasGetProperty(MINOR_VERSION, &cbm);
  cublasGetProperty(PATCH_LEVEL, &cbp);
  d.cublas_version = std::to_string(cb) + "." + std::to_string(cbm) + "." + std::to_string(cbp);
  return d;
}

Stats time_gemm(int device, const model::GemmShape& s, model::DType dtype, const TimingOptions& o) {
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaDataType_t t;
  switch (dtype) {
    case model::DType::kFp32:
      t = CUDA_R_32F;
      break;
    case model::DType::kBf16:
      t = CUDA_R_16BF;
      break;
    case model::DType::kFp16:
      t = CUDA_R_16F;
      break;
    default:
      throw Error(std::string("time_gemm: dtype ") + model::dtype_name(dtype) + " not timed");
  }
  const std::size_t eb = static_cast<std::size_t>(model::dtype_bytes(dtype));
  const std::size_t m = s.m, n = s.n, k = s.k, count = s.count;
  DevBuf a(m * k * count * eb), b(k * n * count * eb), c(m * n * count * eb);
  random_fill(a.p, m * k * count, dtype, 1u);
  random_fill(b.p, k * n * count, dtype, 2u);
  check(cudaGetLastError(), "random_fill_kernel");
  cublasHandle_t h;
  check(cublasCreate(&h), "cublasCreate");
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  const cublasOperation_t opa = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int lda = static_cast<int>(s.trans_a ? m : k);
  const int ldb = static_cast<int>(s.trans_b ? k : n);
  auto launch = [&] {
    check(
        cublasGemmStridedBatchedEx(
            h, opb, opa, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b.p,
            t, ldb, static_cast<long long>(k * n), a.p, t, lda, static_cast<long long>(m * k),
            &beta, c.p, t, static_cast<int>(n), static_cast<long long>(m * n),
            static_cast<int>(count), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
  };
  Stats st;
  try {
    st = time_events(launch, o);
  } catch (...) {
    cublasDestroy(h);
    throw;
  }
  cublasDestroy(h);
  return st;
}

Stats time_adam(int device, std::size_t n, const TimingOptions& o) {
  check(cudaSetDevice(device), "cudaSetDevice");
  DevBuf p(n * 4), g(n * 4), m(n * 4), v(n * 4);
  fill_kernel<<<grid_for(n), 256>>>(p.as<float>(), n, 0.1f);
  fill_kernel<<<grid_for(n), 256>>>(g.as<float>(), n, 0.01f);
  check(cudaMemset(m.p, 0, n * 4), "cudaMemset");
  check(cudaMemset(v.p, 0, n * 4), "cudaMemset");
  auto launch = [&] {
    adam_kernel<<<grid_for(n), 256>>>(p.as<float>(), g.as<float>(), m.as<float>(), v.as<float>(), n,
                                      1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, 0.03f);
  };
  return time_events(launch, o);
}

Stats time_cast(int device, std::size_t n, model::DType to, const TimingOptions& o) {
  check(cudaSetDevice(device), "cudaSetDevice");
  DevBuf x(n * 4), y(n * 2);
  fill_kernel<<<grid_for(n), 256>>>(x.as<float>(), n, 1.0f);
  if (to != model::DType::kBf16 && to != model::DType::kFp16) {
    throw Error("time_cast: only fp32 -> bf16/fp16");
  }
  auto launch = [&] {
    if (to == model::DType::kBf16) {
      cast_bf16_kernel<<<grid_for(n), 256>>>(x.as<float>(), y.as<__nv_bfloat16>(), n);
    } else {
      cast_fp16_kernel<<<grid_for(n), 256>>>(x.as<float>(), y.as<__half>(), n);
    }
  };
  return time_events(launch, o);
}

Stats time_d2d_copy(int device, std::size_t bytes, const TimingOptions& o) {
  check(cudaSetDevice(device), "cudaSetDevice");
  DevBuf a(bytes), b(bytes);
  check(cudaMemset(a.p, 1, bytes), "cudaMemset");
  auto launch = [&] {
    check(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
  };
  return time_events(launch, o);
}

}  // namespace ddpsim::calib::gpu
