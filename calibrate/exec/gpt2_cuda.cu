// The executor's CUDA backend for the GPT-2 (gpt2_cuda.hpp says what runs and why).
// Row-major throughout: a row-major C[M, N] = op(A) op(B) is cuBLAS's column-major
// C^T = op(B)^T op(A)^T, so gemm() swaps the operands and M with N and keeps the flags.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "calibrate/exec/gpt2_cuda.hpp"
#include "model/error.hpp"

namespace ddpsim::exec {
namespace {

using bf16 = __nv_bfloat16;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw Error(std::string("cuBLAS ") + what + ": status " + std::to_string(static_cast<int>(s)));
  }
}

constexpr int kThreads = 256;
int blocks_for(std::int64_t n) {
  return static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65535));
}

// Sum over the block (blockDim.x == kThreads).
__device__ float block_sum(float v, float* shared) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < kThreads / 32; ++w) total += shared[w];
  return total;
}

__device__ float block_max(float v, float* shared) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float m = shared[0];
  for (int w = 1; w < kThreads / 32; ++w) m = fmaxf(m, shared[w]);
  return m;
}

#define GRID_STRIDE(i, n) \
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += gridDim.x * blockDim.x)

__global__ void cast_to_bf16(const float* x, bf16* y, std::int64_t n) {
  GRID_STRIDE(i, n) y[i] = __float2bfloat16(x[i]);
}

__global__ void embedding_forward(const int* ids, const float* wte, const float* wpe, float* x,
                                  std::int64_t rows, std::int64_t T, std::int64_t h) {
  GRID_STRIDE(i, rows * h) {
    const std::int64_t r = i / h, j = i % h;
    x[i] = wte[static_cast<std::int64_t>(ids[r]) * h + j] + wpe[(r % T) * h + j];
  }
}

__global__ void embedding_backward(const int* ids, const float* dx, float* dwte, float* dwpe,
                                   std::int64_t rows, std::int64_t T, std::int64_t h) {
  GRID_STRIDE(i, rows * h) {
    const std::int64_t r = i / h, j = i % h;
    atomicAdd(dwte + static_cast<std::int64_t>(ids[r]) * h + j, dx[i]);
    atomicAdd(dwpe + (r % T) * h + j, dx[i]);
  }
}

// One block per row: y = (x - mean) rstd w + b (bf16), mean and rstd kept (fp32).
__global__ void layernorm_forward(const float* x, const float* w, const float* b, bf16* y,
                                  float* mean, float* rstd, std::int64_t h, float eps) {
  __shared__ float shared[kThreads / 32];
  const float* xr = x + blockIdx.x * h;
  float s = 0;
  for (std::int64_t j = threadIdx.x; j < h; j += blockDim.x) s += xr[j];
  const float mu = block_sum(s, shared) / static_cast<float>(h);
  float v = 0;
  for (std::int64_t j = threadIdx.x; j < h; j += blockDim.x) v += (xr[j] - mu) * (xr[j] - mu);
  const float rs = rsqrtf(block_sum(v, shared) / static_cast<float>(h) + eps);
  for (std::int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    y[blockIdx.x * h + j] = __float2bfloat16((xr[j] - mu) * rs * w[j] + b[j]);
  }
  if (threadIdx.x == 0) {
    mean[blockIdx.x] = mu;
    rstd[blockIdx.x] = rs;
  }
}

// One block per row: dx (+)= rstd (dy w - mean(dy w) - xhat mean(dy w xhat)).
__global__ void layernorm_backward(const float* dy, const float* x, const float* w,
                                   const float* mean, const float* rstd, float* dx, std::int64_t h,
                                   bool accumulate) {
  __shared__ float shared[kThreads / 32];
  const std::int64_t r = blockIdx.x;
  const float mu = mean[r], rs = rstd[r];
  float s1 = 0, s2 = 0;
  for (std::int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    const float xhat = (x[r * h + j] - mu) * rs, g = dy[r * h + j] * w[j];
    s1 += g;
    s2 += g * xhat;
  }
  const float m1 = block_sum(s1, shared) / static_cast<float>(h);
  const float m2 = block_sum(s2, shared) / static_cast<float>(h);
  for (std::int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    const float xhat = (x[r * h + j] - mu) * rs;
    const float d = rs * (dy[r * h + j] * w[j] - m1 - xhat * m2);
    dx[r * h + j] = accumulate ? dx[r * h + j] + d : d;
  }
}

// Column sums in two stages: block (cx, ry) sums kRowChunk rows of kThreads columns (coalesced
// reads) and adds its partial sums atomically, rows / kRowChunk atomics per column.
constexpr std::int64_t kRowChunk = 64;
dim3 column_grid(std::int64_t rows, std::int64_t cols) {
  return dim3(static_cast<unsigned>((cols + kThreads - 1) / kThreads),
              static_cast<unsigned>((rows + kRowChunk - 1) / kRowChunk));
}

// LayerNorm's dw += sum_r dy xhat and db += sum_r dy.
__global__ void layernorm_param_grad(const float* dy, const float* x, const float* mean,
                                     const float* rstd, float* dw, float* db, std::int64_t rows,
                                     std::int64_t h) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j >= h) return;
  const std::int64_t r0 = blockIdx.y * kRowChunk, r1 = min(rows, r0 + kRowChunk);
  float sw = 0, sb = 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    const float g = dy[r * h + j];
    sw += g * (x[r * h + j] - mean[r]) * rstd[r];
    sb += g;
  }
  atomicAdd(dw + j, sw);
  atomicAdd(db + j, sb);
}

// Rows of y start as the bias (the GEMM then adds x W with beta = 1).
__global__ void bias_fill(const float* b, bf16* y, std::int64_t rows, std::int64_t cols) {
  GRID_STRIDE(i, rows * cols) y[i] = __float2bfloat16(b[i % cols]);
}

// db[j] += sum over rows of dy[r, j] (column_grid).
template <typename T>
__global__ void bias_grad(const T* dy, float* db, std::int64_t rows, std::int64_t cols) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j >= cols) return;
  const std::int64_t r0 = blockIdx.y * kRowChunk, r1 = min(rows, r0 + kRowChunk);
  float s = 0;
  for (std::int64_t r = r0; r < r1; ++r) s += static_cast<float>(dy[r * cols + j]);
  atomicAdd(db + j, s);
}

__global__ void residual_add(const float* x, const bf16* y, float* out, std::int64_t n) {
  GRID_STRIDE(i, n) out[i] = x[i] + __bfloat162float(y[i]);
}

__device__ float gelu_tanh(float z) {
  return 0.5f * z * (1.0f + tanhf(0.7978845608f * (z + 0.044715f * z * z * z)));
}

__global__ void gelu_forward(const bf16* z, bf16* y, std::int64_t n) {
  GRID_STRIDE(i, n) y[i] = __float2bfloat16(gelu_tanh(__bfloat162float(z[i])));
}

__global__ void gelu_backward(const float* dy, const bf16* z, bf16* dz, std::int64_t n) {
  GRID_STRIDE(i, n) {
    const float x = __bfloat162float(z[i]);
    const float t = tanhf(0.7978845608f * (x + 0.044715f * x * x * x));
    const float g =
        0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * 0.7978845608f * (1.0f + 0.134145f * x * x);
    dz[i] = __float2bfloat16(dy[i] * g);
  }
}

// One block per row of the [heads * T, T] scores: causal softmax of row t over columns <= t.
__global__ void causal_softmax_forward(const float* s, bf16* p, std::int64_t T) {
  __shared__ float shared[kThreads / 32];
  const std::int64_t row = blockIdx.x, t = row % T;
  const float* sr = s + row * T;
  float m = -INFINITY;
  for (std::int64_t u = threadIdx.x; u <= t; u += blockDim.x) m = fmaxf(m, sr[u]);
  m = block_max(m, shared);
  float z = 0;
  for (std::int64_t u = threadIdx.x; u <= t; u += blockDim.x) z += __expf(sr[u] - m);
  const float inv = 1.0f / block_sum(z, shared);
  for (std::int64_t u = threadIdx.x; u < T; u += blockDim.x) {
    p[row * T + u] = __float2bfloat16(u <= t ? __expf(sr[u] - m) * inv : 0.0f);
  }
}

// dS = P (dP - sum_u P dP), per row.
__global__ void causal_softmax_backward(const bf16* p, const float* dp, bf16* ds, std::int64_t T) {
  __shared__ float shared[kThreads / 32];
  const std::int64_t row = blockIdx.x;
  float dot = 0;
  for (std::int64_t u = threadIdx.x; u < T; u += blockDim.x) {
    dot += __bfloat162float(p[row * T + u]) * dp[row * T + u];
  }
  dot = block_sum(dot, shared);
  for (std::int64_t u = threadIdx.x; u < T; u += blockDim.x) {
    const float pu = __bfloat162float(p[row * T + u]);
    ds[row * T + u] = __float2bfloat16(pu * (dp[row * T + u] - dot));
  }
}

// One block per row: cross-entropy of token r+1 at position r (the last position of a sequence
// predicts nothing); dlogits = (softmax - onehot) * scale, loss summed into *loss.
__global__ void cross_entropy(const bf16* logits, const int* ids, bf16* dlogits, float* loss,
                              std::int64_t T, std::int64_t V, float scale) {
  __shared__ float shared[kThreads / 32];
  const std::int64_t r = blockIdx.x;
  const bf16* z = logits + r * V;
  bf16* dz = dlogits + r * V;
  if (r % T == T - 1) {
    for (std::int64_t j = threadIdx.x; j < V; j += blockDim.x) dz[j] = __float2bfloat16(0.0f);
    return;
  }
  const int label = ids[r + 1];
  float m = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < V; j += blockDim.x) m = fmaxf(m, __bfloat162float(z[j]));
  m = block_max(m, shared);
  float s = 0;
  for (std::int64_t j = threadIdx.x; j < V; j += blockDim.x)
    s += __expf(__bfloat162float(z[j]) - m);
  const float log_z = logf(block_sum(s, shared));
  for (std::int64_t j = threadIdx.x; j < V; j += blockDim.x) {
    const float prob = __expf(__bfloat162float(z[j]) - m - log_z);
    dz[j] = __float2bfloat16((prob - (j == label ? 1.0f : 0.0f)) * scale);
  }
  if (threadIdx.x == 0) atomicAdd(loss, log_z - (__bfloat162float(z[label]) - m));
}

// torch.optim.AdamW (decoupled weight decay) on fp32 masters; bias corrections from the host.
__global__ void adamw(float* p, const float* g, float* m, float* v, std::int64_t n, float lr,
                      float beta1, float beta2, float eps, float wd, float bc1, float bc2) {
  GRID_STRIDE(i, n) {
    p[i] *= 1.0f - lr * wd;
    m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
    v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
    p[i] -= lr * (m[i] / bc1) / (sqrtf(v[i] / bc2) + eps);
  }
}

// Device buffers, all allocated up front; bytes() is what the run holds.
class Arena {
 public:
  ~Arena() {
    for (void* p : ptrs_) cudaFree(p);
  }
  template <typename T>
  T* alloc(std::int64_t count) {
    void* p = nullptr;
    const std::size_t bytes =
        static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * sizeof(T);
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    ptrs_.push_back(p);
    bytes_ += static_cast<std::int64_t>(bytes);
    return static_cast<T*>(p);
  }
  std::int64_t bytes() const { return bytes_; }

 private:
  std::vector<void*> ptrs_;
  std::int64_t bytes_ = 0;
};

class Gemm {
 public:
  explicit Gemm(cublasHandle_t h) : h_(h) {}
  // Row-major C[M, N] = alpha op(A) op(B) + beta C; A, B bf16, C bf16 or fp32.
  void operator()(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
                  const bf16* A, std::int64_t lda, const bf16* B, std::int64_t ldb, float beta,
                  void* C, cudaDataType_t ct, std::int64_t ldc) const {
    check(
        cublasGemmEx(h_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                     static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &alpha, B,
                     CUDA_R_16BF, static_cast<int>(ldb), A, CUDA_R_16BF, static_cast<int>(lda),
                     &beta, C, ct, static_cast<int>(ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
  }
  // The same over `count` matrices `stride_*` elements apart.
  void batched(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
               const bf16* A, std::int64_t lda, std::int64_t sa, const bf16* B, std::int64_t ldb,
               std::int64_t sb, float beta, void* C, cudaDataType_t ct, std::int64_t ldc,
               std::int64_t sc, std::int64_t count) const {
    check(
        cublasGemmStridedBatchedEx(
            h_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(N),
            static_cast<int>(M), static_cast<int>(K), &alpha, B, CUDA_R_16BF, static_cast<int>(ldb),
            sb, A, CUDA_R_16BF, static_cast<int>(lda), sa, &beta, C, ct, static_cast<int>(ldc), sc,
            static_cast<int>(count), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
  }

 private:
  cublasHandle_t h_;
};

enum BlockTensor {
  kLn1W,
  kLn1B,
  kAttnW,
  kAttnB,
  kProjW,
  kProjB,
  kLn2W,
  kLn2B,
  kFcW,
  kFcB,
  kMlpW,
  kMlpB
};

struct BlockActs {
  float *in, *mean1, *rstd1, *x1, *mean2, *rstd2;
  bf16 *ln1, *qkv, *probs, *att, *ln2, *fc, *act;
};

}  // namespace

bool cuda_backend_built() { return true; }

CudaRunResult run_gpt2_cuda(const Gpt2Spec& spec, const CudaRunOptions& o) {
  CudaRunResult res;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    res.why = "no CUDA device (cudaGetDeviceCount found none)";
    return res;
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  res.device = prop.name;

  const std::int64_t B = o.batch, T = spec.seq, h = spec.embd, f = spec.inner, a = spec.heads,
                     d = h / a, V = spec.vocab, L = spec.layers, n = B * T;
  const auto numels = gpt2_tensor_numels(spec);
  std::vector<std::int64_t> off;
  std::int64_t N = 0;
  for (std::size_t t = 0; t + 1 < numels.size(); ++t) {
    off.push_back(N);
    N += numels[t];
  }
  res.param_count = N;
  auto block_off = [&](std::int64_t b, int k) {
    return off[static_cast<std::size_t>(2 + 12 * b + k)];
  };
  const std::int64_t lnf_off = off[static_cast<std::size_t>(2 + 12 * L)];

  // Parameters from the CPU network's initialisation (same seed: the same model).
  const int total_steps = o.steps + o.warmup_steps;
  std::vector<std::int64_t> samples(static_cast<std::size_t>(total_steps * B));
  std::iota(samples.begin(), samples.end(), 0);
  Gpt2 host(spec, o.seed * 1000003ull + 1, o.seed, samples, B);
  const std::vector<std::int32_t>& tokens = host.tokens();

  Arena mem;
  cublasHandle_t handle;
  check(cublasCreate(&handle), "cublasCreate");
  struct HandleGuard {
    cublasHandle_t h;
    ~HandleGuard() { cublasDestroy(h); }
  } guard{handle};
  // PyTorch's cuBLAS workspace on Hopper: CUBLAS_WORKSPACE_CONFIG :4096:8 = 32 MiB.
  const std::int64_t workspace_bytes = std::int64_t{32} << 20;
  check(cublasSetWorkspace(handle, mem.alloc<char>(workspace_bytes), workspace_bytes),
        "cublasSetWorkspace");
  const Gemm gemm(handle);

  float* p32 = mem.alloc<float>(N);
  float* g32 = mem.alloc<float>(N);
  float* m32 = mem.alloc<float>(N);
  float* v32 = mem.alloc<float>(N);
  bf16* p16 = mem.alloc<bf16>(N);
  int* ids_all = mem.alloc<int>(static_cast<std::int64_t>(tokens.size()));
  check(cudaMemcpy(p32, host.params().data(), N * sizeof(float), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(ids_all, tokens.data(), tokens.size() * sizeof(int), cudaMemcpyHostToDevice),
        "copy");
  check(cudaMemset(m32, 0, N * sizeof(float)), "memset");
  check(cudaMemset(v32, 0, N * sizeof(float)), "memset");

  std::vector<BlockActs> acts(static_cast<std::size_t>(L));
  for (auto& A : acts) {
    A.in = mem.alloc<float>(n * h);
    A.mean1 = mem.alloc<float>(n);
    A.rstd1 = mem.alloc<float>(n);
    A.x1 = mem.alloc<float>(n * h);
    A.mean2 = mem.alloc<float>(n);
    A.rstd2 = mem.alloc<float>(n);
    A.ln1 = mem.alloc<bf16>(n * h);
    A.qkv = mem.alloc<bf16>(n * 3 * h);
    A.probs = mem.alloc<bf16>(B * a * T * T);
    A.att = mem.alloc<bf16>(n * h);
    A.ln2 = mem.alloc<bf16>(n * h);
    A.fc = mem.alloc<bf16>(n * f);
    A.act = mem.alloc<bf16>(n * f);
  }
  float* out = mem.alloc<float>(n * h);
  float* meanf = mem.alloc<float>(n);
  float* rstdf = mem.alloc<float>(n);
  bf16* lnf = mem.alloc<bf16>(n * h);
  bf16* logits = mem.alloc<bf16>(n * V);
  bf16* dlogits = mem.alloc<bf16>(n * V);
  float* loss = mem.alloc<float>(1);
  bf16* tmp16 = mem.alloc<bf16>(n * h);
  float* scores = mem.alloc<float>(a * T * T);
  bf16* dscores = mem.alloc<bf16>(a * T * T);
  float* dx = mem.alloc<float>(n * h);
  bf16* dx16 = mem.alloc<bf16>(n * h);
  float* dh = mem.alloc<float>(n * h);
  float* dact = mem.alloc<float>(n * f);
  bf16* dfc = mem.alloc<bf16>(n * f);
  bf16* datt = mem.alloc<bf16>(n * h);
  bf16* dqkv = mem.alloc<bf16>(n * 3 * h);
  res.peak_bytes = mem.bytes();
  std::size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  res.device_used_bytes = static_cast<std::int64_t>(total_b - free_b);

  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float ce_scale = 1.0f / static_cast<float>(B * (T - 1));
  auto rows = [](std::int64_t r) { return static_cast<unsigned>(r); };

  auto forward = [&](const int* ids) {
    cast_to_bf16<<<blocks_for(N), kThreads>>>(p32, p16, N);
    embedding_forward<<<blocks_for(n * h), kThreads>>>(ids, p32, p32 + off[1],
                                                       acts.empty() ? out : acts[0].in, n, T, h);
    for (std::int64_t b = 0; b < L; ++b) {
      BlockActs& A = acts[static_cast<std::size_t>(b)];
      layernorm_forward<<<rows(n), kThreads>>>(A.in, p32 + block_off(b, kLn1W),
                                               p32 + block_off(b, kLn1B), A.ln1, A.mean1, A.rstd1,
                                               h, spec.ln_eps);
      bias_fill<<<blocks_for(n * 3 * h), kThreads>>>(p32 + block_off(b, kAttnB), A.qkv, n, 3 * h);
      gemm(false, false, n, 3 * h, h, 1.0f, A.ln1, h, p16 + block_off(b, kAttnW), 3 * h, 1.0f,
           A.qkv, CUDA_R_16BF, 3 * h);
      for (std::int64_t s = 0; s < B; ++s) {
        const bf16* q = A.qkv + s * T * 3 * h;
        bf16* P = A.probs + s * a * T * T;
        gemm.batched(false, true, T, T, d, scale, q, 3 * h, d, q + h, 3 * h, d, 0.0f, scores,
                     CUDA_R_32F, T, T * T, a);
        causal_softmax_forward<<<rows(a * T), kThreads>>>(scores, P, T);
        gemm.batched(false, false, T, d, T, 1.0f, P, T, T * T, q + 2 * h, 3 * h, d, 0.0f,
                     A.att + s * T * h, CUDA_R_16BF, h, d, a);
      }
      bias_fill<<<blocks_for(n * h), kThreads>>>(p32 + block_off(b, kProjB), tmp16, n, h);
      gemm(false, false, n, h, h, 1.0f, A.att, h, p16 + block_off(b, kProjW), h, 1.0f, tmp16,
           CUDA_R_16BF, h);
      residual_add<<<blocks_for(n * h), kThreads>>>(A.in, tmp16, A.x1, n * h);
      layernorm_forward<<<rows(n), kThreads>>>(A.x1, p32 + block_off(b, kLn2W),
                                               p32 + block_off(b, kLn2B), A.ln2, A.mean2, A.rstd2,
                                               h, spec.ln_eps);
      bias_fill<<<blocks_for(n * f), kThreads>>>(p32 + block_off(b, kFcB), A.fc, n, f);
      gemm(false, false, n, f, h, 1.0f, A.ln2, h, p16 + block_off(b, kFcW), f, 1.0f, A.fc,
           CUDA_R_16BF, f);
      gelu_forward<<<blocks_for(n * f), kThreads>>>(A.fc, A.act, n * f);
      bias_fill<<<blocks_for(n * h), kThreads>>>(p32 + block_off(b, kMlpB), tmp16, n, h);
      gemm(false, false, n, h, f, 1.0f, A.act, f, p16 + block_off(b, kMlpW), h, 1.0f, tmp16,
           CUDA_R_16BF, h);
      float* next = b + 1 < L ? acts[static_cast<std::size_t>(b + 1)].in : out;
      residual_add<<<blocks_for(n * h), kThreads>>>(A.x1, tmp16, next, n * h);
    }
    layernorm_forward<<<rows(n), kThreads>>>(out, p32 + lnf_off, p32 + lnf_off + h, lnf, meanf,
                                             rstdf, h, spec.ln_eps);
    gemm(false, true, n, V, h, 1.0f, lnf, h, p16, h, 0.0f, logits, CUDA_R_16BF, V);
    check(cudaMemsetAsync(loss, 0, sizeof(float)), "memset");
    cross_entropy<<<rows(n), kThreads>>>(logits, ids, dlogits, loss, T, V, ce_scale);
  };

  auto backward = [&](const int* ids) {
    check(cudaMemsetAsync(g32, 0, N * sizeof(float)), "memset");
    // lm_head, tied to wte.
    gemm(true, false, V, h, n, 1.0f, dlogits, V, lnf, h, 1.0f, g32, CUDA_R_32F, h);
    gemm(false, false, n, h, V, 1.0f, dlogits, V, p16, h, 0.0f, dh, CUDA_R_32F, h);
    layernorm_param_grad<<<column_grid(n, h), kThreads>>>(dh, out, meanf, rstdf, g32 + lnf_off,
                                                          g32 + lnf_off + h, n, h);
    layernorm_backward<<<rows(n), kThreads>>>(dh, out, p32 + lnf_off, meanf, rstdf, dx, h, false);
    for (std::int64_t b = L - 1; b >= 0; --b) {
      BlockActs& A = acts[static_cast<std::size_t>(b)];
      auto G = [&](int k) { return g32 + block_off(b, k); };
      auto W = [&](int k) { return p16 + block_off(b, k); };
      cast_to_bf16<<<blocks_for(n * h), kThreads>>>(dx, dx16, n * h);
      gemm(true, false, f, h, n, 1.0f, A.act, f, dx16, h, 1.0f, G(kMlpW), CUDA_R_32F, h);
      bias_grad<float><<<column_grid(n, h), kThreads>>>(dx, G(kMlpB), n, h);
      gemm(false, true, n, f, h, 1.0f, dx16, h, W(kMlpW), h, 0.0f, dact, CUDA_R_32F, f);
      gelu_backward<<<blocks_for(n * f), kThreads>>>(dact, A.fc, dfc, n * f);
      gemm(true, false, h, f, n, 1.0f, A.ln2, h, dfc, f, 1.0f, G(kFcW), CUDA_R_32F, f);
      bias_grad<bf16><<<column_grid(n, f), kThreads>>>(dfc, G(kFcB), n, f);
      gemm(false, true, n, h, f, 1.0f, dfc, f, W(kFcW), f, 0.0f, dh, CUDA_R_32F, h);
      layernorm_param_grad<<<column_grid(n, h), kThreads>>>(dh, A.x1, A.mean2, A.rstd2, G(kLn2W),
                                                            G(kLn2B), n, h);
      layernorm_backward<<<rows(n), kThreads>>>(dh, A.x1, p32 + block_off(b, kLn2W), A.mean2,
                                                A.rstd2, dx, h, true);

      cast_to_bf16<<<blocks_for(n * h), kThreads>>>(dx, dx16, n * h);
      gemm(true, false, h, h, n, 1.0f, A.att, h, dx16, h, 1.0f, G(kProjW), CUDA_R_32F, h);
      bias_grad<float><<<column_grid(n, h), kThreads>>>(dx, G(kProjB), n, h);
      gemm(false, true, n, h, h, 1.0f, dx16, h, W(kProjW), h, 0.0f, datt, CUDA_R_16BF, h);
      for (std::int64_t s = 0; s < B; ++s) {
        const bf16* q = A.qkv + s * T * 3 * h;
        const bf16* P = A.probs + s * a * T * T;
        const bf16* dO = datt + s * T * h;
        bf16* dq = dqkv + s * T * 3 * h;
        gemm.batched(false, true, T, T, d, 1.0f, dO, h, d, q + 2 * h, 3 * h, d, 0.0f, scores,
                     CUDA_R_32F, T, T * T, a);
        gemm.batched(true, false, T, d, T, 1.0f, P, T, T * T, dO, h, d, 0.0f, dq + 2 * h,
                     CUDA_R_16BF, 3 * h, d, a);
        causal_softmax_backward<<<rows(a * T), kThreads>>>(P, scores, dscores, T);
        gemm.batched(false, false, T, d, T, scale, dscores, T, T * T, q + h, 3 * h, d, 0.0f, dq,
                     CUDA_R_16BF, 3 * h, d, a);
        gemm.batched(true, false, T, d, T, scale, dscores, T, T * T, q, 3 * h, d, 0.0f, dq + h,
                     CUDA_R_16BF, 3 * h, d, a);
      }
      gemm(true, false, h, 3 * h, n, 1.0f, A.ln1, h, dqkv, 3 * h, 1.0f, G(kAttnW), CUDA_R_32F,
           3 * h);
      bias_grad<bf16><<<column_grid(n, 3 * h), kThreads>>>(dqkv, G(kAttnB), n, 3 * h);
      gemm(false, true, n, h, 3 * h, 1.0f, dqkv, 3 * h, W(kAttnW), 3 * h, 0.0f, dh, CUDA_R_32F, h);
      layernorm_param_grad<<<column_grid(n, h), kThreads>>>(dh, A.in, A.mean1, A.rstd1, G(kLn1W),
                                                            G(kLn1B), n, h);
      layernorm_backward<<<rows(n), kThreads>>>(dh, A.in, p32 + block_off(b, kLn1W), A.mean1,
                                                A.rstd1, dx, h, true);
    }
    embedding_backward<<<blocks_for(n * h), kThreads>>>(ids, dx, g32, g32 + off[1], n, T, h);
  };

  cudaEvent_t ev[4];
  for (auto& e : ev) check(cudaEventCreate(&e), "cudaEventCreate");
  for (int step = 0; step < total_steps; ++step) {
    const int* ids = ids_all + static_cast<std::int64_t>(step) * n;
    check(cudaEventRecord(ev[0]), "cudaEventRecord");
    forward(ids);
    check(cudaEventRecord(ev[1]), "cudaEventRecord");
    backward(ids);
    check(cudaEventRecord(ev[2]), "cudaEventRecord");
    const float t = static_cast<float>(step + 1);
    const float bc1 = 1.0f - std::pow(0.9f, t), bc2 = 1.0f - std::pow(0.999f, t);
    adamw<<<blocks_for(N), kThreads>>>(p32, g32, m32, v32, N, o.lr, 0.9f, 0.999f, 1e-8f, 0.01f, bc1,
                                       bc2);
    check(cudaEventRecord(ev[3]), "cudaEventRecord");
    check(cudaEventSynchronize(ev[3]), "step");
    check(cudaGetLastError(), "kernel launch");
    float ms[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i)
      check(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]), "cudaEventElapsedTime");
    float l = 0;
    check(cudaMemcpy(&l, loss, sizeof(float), cudaMemcpyDeviceToHost), "copy");
    if (step == 0) {
      res.first_loss = l * ce_scale;
      if (o.keep_first_gradients) {
        res.first_gradients.resize(static_cast<std::size_t>(N));
        check(
            cudaMemcpy(res.first_gradients.data(), g32, N * sizeof(float), cudaMemcpyDeviceToHost),
            "copy");
      }
    }
    if (step < o.warmup_steps) continue;
    CudaStep s;
    s.forward_s = ms[0] * 1e-3;
    s.backward_s = ms[1] * 1e-3;
    s.optimizer_s = ms[2] * 1e-3;
    s.step_s = s.forward_s + s.backward_s + s.optimizer_s;
    s.loss = l * ce_scale;
    res.steps.push_back(s);
  }
  for (auto& e : ev) cudaEventDestroy(e);
  res.ran = true;
  return res;
}

}  // namespace ddpsim::exec
