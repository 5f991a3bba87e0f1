// detail/gpt2_kernels.cuh: the device kernels of the CUDA GPT-2 step (gpt2_cuda.cu, which alone
// includes this file): embeddings, LayerNorm, bias, residual, GELU, causal softmax, cross-entropy
// and AdamW, each over row-major bf16/fp32 buffers, launched with kThreads threads per block.
// Not part of the public API: the definitions live in the one translation unit that uses them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace ddpsim::exec {
namespace {

using bf16 = __nv_bfloat16;

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

}  // namespace
}  // namespace ddpsim::exec
