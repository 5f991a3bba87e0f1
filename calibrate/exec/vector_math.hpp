// vector_math.hpp: exp and tanh in branch-free float arithmetic that the compiler vectorizes, as
// PyTorch's CPU kernels compute them (ATen's Vectorized<float>::exp / tanh over SLEEF, many lanes
// at a time), where a scalar libm call per element costs 10-20 ns: on the executor's GPT-2 the
// scalar double exp of the cross-entropy alone took 58 of a 334 ms step (4 blocks x 256 wide,
// 8,192-token vocabulary, 512 tokens; ddpsim-exec --trace), more than its lm_head GEMM.
//
// exp_approx is Cephes' expf: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two for an exact
// product), a degree-6 minimax polynomial for e^r, 2^n built in the exponent bits; relative
// error below 2e-7 on [-87, 88] (tests/calibrate/exec/gpt2_test.cpp checks it against std::exp);
// inputs are clamped there (e^-87 ~ 1.6e-38: underflow to the smallest normal, not to 0).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ddpsim::exec {

inline float exp_approx(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  // Round x / ln2 to the nearest integer with the 1.5 * 2^23 trick (exact in float arithmetic).
  const float shifted = x * 1.44269504088896341f + 12582912.0f;
  const float n = shifted - 12582912.0f;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  std::int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  // The low bits of `shifted` hold n (two's complement, offset by the trick's 2^22 mantissa bit).
  const std::int32_t e = (bits - 0x4B400000) + 127;
  const std::int32_t scale_bits = e << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return p * scale;
}

/// tanh(z) = 1 - 2 / (e^{2z} + 1): -1 and 1 at the clamp, no branch.
inline float tanh_approx(float z) { return 1.0f - 2.0f / (exp_approx(2.0f * z) + 1.0f); }

}  // namespace ddpsim::exec
