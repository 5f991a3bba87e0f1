#include "calibrate/exec/vector_kernels.hpp"

#include "calibrate/exec/vector_math.hpp"

namespace ddpsim::exec {
namespace {

constexpr float kSqrt2OverPi = 0.79788456080286536f;

}  // namespace

#define DDPSIM_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))

DDPSIM_VECTOR_CLONES float exp_shifted_sum(const float* x, float shift, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = exp_approx(x[i] - shift);
  float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) part[k] += y[i + k];
  }
  float s = 0;
  for (; i < n; ++i) s += y[i];
  for (float p : part) s += p;
  return s;
}

DDPSIM_VECTOR_CLONES float max_of(const float* x, std::int64_t n) {
  float part[8];
  for (float& p : part) p = x[0];
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) part[k] = part[k] > x[i + k] ? part[k] : x[i + k];
  }
  float m = x[0];
  for (; i < n; ++i) m = m > x[i] ? m : x[i];
  for (float p : part) m = m > p ? m : p;
  return m;
}

DDPSIM_VECTOR_CLONES void gelu_tanh_forward(const float* z, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float x = z[i];
    y[i] = 0.5f * x * (1.0f + tanh_approx(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
  }
}

DDPSIM_VECTOR_CLONES void gelu_tanh_backward(const float* z, float* dy, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float x = z[i];
    const float t = tanh_approx(kSqrt2OverPi * (x + 0.044715f * x * x * x));
    dy[i] *= 0.5f * (1.0f + t) +
             0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * 0.044715f * x * x);
  }
}

}  // namespace ddpsim::exec
