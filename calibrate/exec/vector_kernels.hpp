// vector_kernels.hpp: the GPT-2's element-wise loops over whole rows, built twice (AVX2 and the
// x86-64 baseline, chosen at load time by GCC's target_clones), as ATen dispatches its CPU kernels
// by the processor's capability; exp and tanh are vector_math.hpp's branch-free forms. The sums
// keep eight partial sums, so that the compiler vectorizes them without reassociating (no
// -ffast-math); the file is built with -fno-trapping-math, without which GCC keeps the clamps as
// branches and nothing vectorizes. tests/bench/exec_kernels_bench.cpp times them against the
// scalar loops they replaced (results/BENCHMARKS.md: 9x and 12x here).
#pragma once

#include <cstdint>

namespace ddpsim::exec {

/// y[i] = exp(x[i] - shift); returns the sum of the y[i].
float exp_shifted_sum(const float* x, float shift, float* y, std::int64_t n);
/// The largest x[i] (n >= 1).
float max_of(const float* x, std::int64_t n);
/// y = gelu(z), tanh form: 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))).
void gelu_tanh_forward(const float* z, float* y, std::int64_t n);
/// dy *= gelu'(z), tanh form.
void gelu_tanh_backward(const float* z, float* dy, std::int64_t n);

}  // namespace ddpsim::exec
