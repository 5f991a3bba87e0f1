// comm_hooks.cpp: the compression hooks' side of the analytic model (comm_hooks.hpp): which
// tensors PowerSGD compresses (PyTorch's powerSGD_hook rules) and the top-k count. The buckets
// as the hooks run them (their collectives, bytes on the wire, extra compute and state) are the
// Predictor's (Predictor::powersgd_buckets, topk_buckets in analytic_plan.cpp).
#include "simulator/analytic/comm_hooks.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "model/error.hpp"

namespace ddpsim::sim {

using model::DType;

bool powersgd_compresses(std::int64_t n, std::int64_t m, int rank, double min_compression_rate) {
  // powerSGD_hook.py _should_compress: uncompressed_size = n * m, compressed_size = (n + m) *
  // rank; compress iff compressed_size * min_compression_rate < uncompressed_size.
  return static_cast<double>(n + m) * rank * min_compression_rate <
         static_cast<double>(n) * static_cast<double>(m);
}

PowerSgdBucket powersgd_bucket(const model::Workload& w, const model::Bucket& b, int rank) {
  PowerSgdBucket out;
  for (int t : b.tensors) {
    const model::ParamTensor& p = w.tensors[static_cast<std::size_t>(t)];
    const std::int64_t numel = p.numel();
    out.elements += numel;
    // matrix = tensor.view(tensor.shape[0], -1): a 1-D tensor of length n is n x 1, which the
    // rule never compresses ((n + 1) * 2 >= n), so no special case is needed.
    const std::int64_t n = p.shape.empty() ? 1 : p.shape[0];
    const std::int64_t m = n > 0 ? numel / n : 0;
    // matrix_approximation_rank = min(n, m, state.matrix_approximation_rank).
    const int r = static_cast<int>(std::min<std::int64_t>({n, m, rank}));
    if (n > 0 && m > 0 && powersgd_compresses(n, m, r)) {
      out.compressed.push_back({n, m, r});
      out.p_elements += n * r;
      out.q_elements += m * r;
    } else {
      out.uncompressed_elements += numel;
    }
  }
  return out;
}

std::int64_t topk_count(std::int64_t elements, double fraction) {
  // ceil(F * elements); the relative 1e-12 keeps a product that is an integer up to rounding
  // (0.01 * 1e6 in binary) from being rounded up to the next one.
  const double x = fraction * static_cast<double>(elements);
  const auto k = static_cast<std::int64_t>(std::ceil(x * (1.0 - 1e-12)));
  return std::clamp<std::int64_t>(k, 1, std::max<std::int64_t>(elements, 1));
}

}  // namespace ddpsim::sim
