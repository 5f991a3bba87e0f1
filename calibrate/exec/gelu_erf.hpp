// gelu_erf.hpp: the exact (erf) GELU and its derivative, as torch.nn.GELU() computes them by
// default (approximate='none'), for the executor's MLP and GPT-2; the tanh form is
// vector_kernels.hpp's.
#pragma once

#include <cmath>

namespace ddpsim::exec {

/// gelu(z) = z Phi(z) = 0.5 z (1 + erf(z / sqrt 2)).
inline float gelu_erf(float z) { return 0.5f * z * (1.0f + std::erf(z * 0.70710678118654752f)); }

/// gelu'(z) = Phi(z) + z phi(z), phi(z) = exp(-z^2 / 2) / sqrt(2 pi).
inline float gelu_erf_grad(float z) {
  return 0.5f * (1.0f + std::erf(z * 0.70710678118654752f)) +
         z * 0.39894228040143268f * std::exp(-0.5f * z * z);
}

}  // namespace ddpsim::exec
