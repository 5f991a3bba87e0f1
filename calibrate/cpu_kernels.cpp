#include "calibrate/cpu_kernels.hpp"

#include <cblas.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

// OpenBLAS extensions (declared in OpenBLAS's cblas.h; repeated so another cblas.h also works).
extern "C" {
void openblas_set_num_threads(int num_threads);
char* openblas_get_config(void);
}

namespace ddpsim::calib {

void blas_single_thread() {
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  openblas_set_num_threads(1);
}

std::string blas_config() {
  const char* c = openblas_get_config();
  return c ? c : "unknown";
}

namespace {

// Deterministic operand values in [-1, 1): the time of sgemm does not depend on them, but
// denormals or NaNs would, so they are kept ordinary.
void fill(std::vector<float>& v, unsigned seed) {
  unsigned x = seed * 2654435761u + 1;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
}

}  // namespace

std::function<void()> make_sgemm_call(const model::GemmShape& s) {
  struct Operands {
    std::vector<float> a, b, c;
  };
  const std::size_t m = static_cast<std::size_t>(s.m), n = static_cast<std::size_t>(s.n),
                    k = static_cast<std::size_t>(s.k), count = static_cast<std::size_t>(s.count);
  auto ops = std::make_shared<Operands>();
  ops->a.resize(m * k * count);
  ops->b.resize(k * n * count);
  ops->c.resize(m * n * count);
  fill(ops->a, 1);
  fill(ops->b, 2);
  // Row-major leading dimensions: the stored row length of each operand.
  const int lda = s.trans_a ? static_cast<int>(m) : static_cast<int>(k);
  const int ldb = s.trans_b ? static_cast<int>(k) : static_cast<int>(n);
  const int ldc = static_cast<int>(n);
  return [ops, s, m, n, k, count, lda, ldb, ldc] {
    for (std::size_t i = 0; i < count; ++i) {
      cblas_sgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans,
                  s.trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                  static_cast<int>(k), 1.0f, ops->a.data() + i * m * k, lda,
                  ops->b.data() + i * k * n, ldb, 0.0f, ops->c.data() + i * m * n, ldc);
    }
  };
}

Stats time_sgemm(const model::GemmShape& s, const TimingOptions& o) {
  return time_calls(make_sgemm_call(s), o);
}

double stream_bytes(StreamKernel k, std::size_t elements) {
  return (k == StreamKernel::kCopy ? 2.0 : 3.0) * 4.0 * static_cast<double>(elements);
}

Stats time_stream(StreamKernel kind, std::size_t elements, const TimingOptions& o) {
  std::vector<float> a(elements, 1.0f), b(elements, 2.0f), c(elements, 0.5f);
  const float scalar = 3.0f;
  float* pa = a.data();
  float* pb = b.data();
  float* pc = c.data();
  auto call = [&] {
    if (kind == StreamKernel::kCopy) {
      for (std::size_t i = 0; i < elements; ++i) pc[i] = pa[i];
    } else {
      for (std::size_t i = 0; i < elements; ++i) pa[i] = pb[i] + scalar * pc[i];
    }
  };
  Stats s = time_calls(call, o);
  // Keep the stores observable so the loops are not removed.
  volatile float sink = a[elements / 2] + c[elements / 3];
  (void)sink;
  return s;
}

Stats time_adam(std::size_t elements, const TimingOptions& o) {
  std::vector<float> p(elements, 0.1f), g(elements, 0.01f), m(elements, 0.0f), v(elements, 0.0f);
  const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
  int step = 0;
  auto call = [&] {
    ++step;
    // Bias corrections as torch.optim.Adam (foreach=False) computes them per step.
    const float c1 = 1.0f - std::pow(b1, static_cast<float>(step));
    const float c2 = std::sqrt(1.0f - std::pow(b2, static_cast<float>(step)));
    const float step_size = lr / c1;
    for (std::size_t i = 0; i < elements; ++i) {
      m[i] = b1 * m[i] + (1.0f - b1) * g[i];
      v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
      p[i] -= step_size * m[i] / (std::sqrt(v[i]) / c2 + eps);
    }
  };
  Stats s = time_calls(call, o);
  volatile float sink = p[elements / 2];
  (void)sink;
  return s;
}

}  // namespace ddpsim::calib
