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

#include "calibrate/exec/detail/gpt2_kernels.cuh"
#include "calibrate/exec/gpt2_cuda.hpp"
#include "model/error.hpp"

namespace ddpsim::exec {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw Error(std::string("cuBLAS ") + what + ": status " + std::to_string(static_cast<int>(s)));
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

// One GPT-2 training run on the device: the dimensions (B samples of T tokens, n = B T rows; h
// hidden, f MLP, a heads of d, V vocabulary, L blocks), where each parameter tensor starts in the
// flat buffers, and every buffer the forward and backward passes read and write.
struct Gpt2Run {
  Gpt2Run(const Gpt2Spec& s, const Gemm& g, std::int64_t batch)
      : spec(s),
        gemm(g),
        B(batch),
        T(s.seq),
        h(s.embd),
        f(s.inner),
        a(s.heads),
        d(h / a),
        V(s.vocab),
        L(s.layers),
        n(B * T) {
    const auto numels = gpt2_tensor_numels(spec);
    for (std::size_t t = 0; t + 1 < numels.size(); ++t) {
      off.push_back(N);
      N += numels[t];
    }
    lnf_off = off[static_cast<std::size_t>(2 + 12 * L)];
    scale = 1.0f / std::sqrt(static_cast<float>(d));
    ce_scale = 1.0f / static_cast<float>(B * (T - 1));
  }

  // Every buffer, from `mem`: parameters, gradients and Adam's moments (fp32), the bf16 copy of
  // the parameters, the token ids of every step, each block's activations and the workspaces.
  void allocate(Arena& mem, std::int64_t token_count) {
    p32 = mem.alloc<float>(N);
    g32 = mem.alloc<float>(N);
    m32 = mem.alloc<float>(N);
    v32 = mem.alloc<float>(N);
    p16 = mem.alloc<bf16>(N);
    ids_all = mem.alloc<int>(token_count);
    acts.resize(static_cast<std::size_t>(L));
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
    out = mem.alloc<float>(n * h);
    meanf = mem.alloc<float>(n);
    rstdf = mem.alloc<float>(n);
    lnf = mem.alloc<bf16>(n * h);
    logits = mem.alloc<bf16>(n * V);
    dlogits = mem.alloc<bf16>(n * V);
    loss = mem.alloc<float>(1);
    tmp16 = mem.alloc<bf16>(n * h);
    scores = mem.alloc<float>(a * T * T);
    dscores = mem.alloc<bf16>(a * T * T);
    dx = mem.alloc<float>(n * h);
    dx16 = mem.alloc<bf16>(n * h);
    dh = mem.alloc<float>(n * h);
    dact = mem.alloc<float>(n * f);
    dfc = mem.alloc<bf16>(n * f);
    datt = mem.alloc<bf16>(n * h);
    dqkv = mem.alloc<bf16>(n * 3 * h);
  }

  std::int64_t block_off(std::int64_t b, int k) const {
    return off[static_cast<std::size_t>(2 + 12 * b + k)];
  }
  static unsigned rows(std::int64_t r) { return static_cast<unsigned>(r); }

  // The forward pass of one step's tokens and the loss (into `loss`, and its gradient into
  // `dlogits`).
  void forward(const int* ids) {
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
  }

  // The backward pass: every parameter's gradient into g32 (lm_head tied to wte).
  void backward(const int* ids) {
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
  }

  const Gpt2Spec& spec;
  const Gemm& gemm;
  const std::int64_t B, T, h, f, a, d, V, L, n;
  std::int64_t N = 0;  // parameters
  std::vector<std::int64_t> off;
  std::int64_t lnf_off = 0;
  float scale = 0, ce_scale = 0;
  float *p32 = nullptr, *g32 = nullptr, *m32 = nullptr, *v32 = nullptr;
  bf16* p16 = nullptr;
  int* ids_all = nullptr;
  std::vector<BlockActs> acts;
  float *out = nullptr, *meanf = nullptr, *rstdf = nullptr, *loss = nullptr, *scores = nullptr;
  float *dx = nullptr, *dh = nullptr, *dact = nullptr;
  bf16 *lnf = nullptr, *logits = nullptr, *dlogits = nullptr, *tmp16 = nullptr, *dscores = nullptr;
  bf16 *dx16 = nullptr, *dfc = nullptr, *datt = nullptr, *dqkv = nullptr;
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

  // Parameters from the CPU network's initialisation (same seed: the same model).
  const std::int64_t B = o.batch;
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

  Gpt2Run run(spec, gemm, B);
  const std::int64_t N = run.N, n = run.n;
  res.param_count = N;
  run.allocate(mem, static_cast<std::int64_t>(tokens.size()));
  check(cudaMemcpy(run.p32, host.params().data(), N * sizeof(float), cudaMemcpyHostToDevice),
        "copy");
  check(cudaMemcpy(run.ids_all, tokens.data(), tokens.size() * sizeof(int), cudaMemcpyHostToDevice),
        "copy");
  check(cudaMemset(run.m32, 0, N * sizeof(float)), "memset");
  check(cudaMemset(run.v32, 0, N * sizeof(float)), "memset");
  res.peak_bytes = mem.bytes();
  std::size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  res.device_used_bytes = static_cast<std::int64_t>(total_b - free_b);

  const float ce_scale = run.ce_scale;

  cudaEvent_t ev[4];
  for (auto& e : ev) check(cudaEventCreate(&e), "cudaEventCreate");
  for (int step = 0; step < total_steps; ++step) {
    const int* ids = run.ids_all + static_cast<std::int64_t>(step) * n;
    check(cudaEventRecord(ev[0]), "cudaEventRecord");
    run.forward(ids);
    check(cudaEventRecord(ev[1]), "cudaEventRecord");
    run.backward(ids);
    check(cudaEventRecord(ev[2]), "cudaEventRecord");
    const float t = static_cast<float>(step + 1);
    const float bc1 = 1.0f - std::pow(0.9f, t), bc2 = 1.0f - std::pow(0.999f, t);
    adamw<<<blocks_for(N), kThreads>>>(run.p32, run.g32, run.m32, run.v32, N, o.lr, 0.9f, 0.999f,
                                       1e-8f, 0.01f, bc1, bc2);
    check(cudaEventRecord(ev[3]), "cudaEventRecord");
    check(cudaEventSynchronize(ev[3]), "step");
    check(cudaGetLastError(), "kernel launch");
    float ms[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i)
      check(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]), "cudaEventElapsedTime");
    float l = 0;
    check(cudaMemcpy(&l, run.loss, sizeof(float), cudaMemcpyDeviceToHost), "copy");
    if (step == 0) {
      res.first_loss = l * ce_scale;
      if (o.keep_first_gradients) {
        res.first_gradients.resize(static_cast<std::size_t>(N));
        check(cudaMemcpy(res.first_gradients.data(), run.g32, N * sizeof(float),
                         cudaMemcpyDeviceToHost),
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
