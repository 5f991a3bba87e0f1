// comm_hooks.cpp: the compression hooks' side of the analytic model (comm_hooks.hpp): which
// tensors PowerSGD compresses (PyTorch's powerSGD_hook rules), the top-k count, and the buckets
// as the hooks run them (Predictor::powersgd_buckets, topk_buckets in analytic.hpp): their
// collectives, bytes on the wire, extra compute and state.
#include "simulator/analytic/comm_hooks.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "model/error.hpp"
#include "simulator/analytic/analytic.hpp"

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

std::vector<PlannedBucket> Predictor::powersgd_buckets(const model::BucketPlan& plan,
                                                       const model::CollectiveBandwidths& bw,
                                                       DType dt, int gpus,
                                                       const model::ParallelismConfig& par,
                                                       double& hook_memory_bytes) const {
  // PyTorch powerSGD_hook (use_error_feedback = warm_start = true), per bucket of L elements,
  // U of them in uncompressed tensors, g bytes per element (the bucket's dtype):
  //   input += error (read 2L, write L); input_cp = clone(input) (read L, write L);
  //   uncompressed = cat(...) (2U); orthogonalise every Q (warm start); P = M Q;
  //   all_reduce(uncompressed) -> div_ + copy back (4U); all_reduce(P); orthogonalise every P;
  //   Q = M^T P; all_reduce(Q) -> Q.div_(world) (2 |Q|); M = P Q^T;
  //   error = input_cp - input (read 2L, write L).
  // Element-wise passes: g (8L + 6U + 2|Q|) bytes at HBM speed. Each GEMM of an n x m matrix at
  // rank r: 2 n m r FLOPs, g (n m + n r + m r) bytes, on the roofline of dt (at small r it is
  // HBM-bound: r/2 FLOP per byte in fp32). Orthogonalisation of an x x r matrix
  // (_orthogonalize_gram_schmidt, or QR for r > 2, ~ the same work): 2 x r^2 FLOPs; per column
  // one norm + scale (3 x elements) and one projection of the remaining columns (read for the
  // dot, read + write for the subtraction: 2 x per pair of columns, counted twice for the
  // temporaries): g x (3r + 2r(r-1)) bytes. Kernel-launch latency is not modelled.
  // Memory (persistent per GPU): error_dict (L per bucket), p/q_memory_dict (|P| + |Q| per
  // bucket), plus the transient clone of the largest bucket.
  const double g = model::dtype_bytes(dt);
  const Roofline roof = roofline(dt);
  std::map<double, CollectiveCost> costs;
  auto allreduce = [&](double bytes) -> CollectiveCost {
    // An empty all-reduce (no uncompressed tensor, or nothing compressed) launches no NCCL
    // kernel (count 0 returns at once): no latency is paid.
    if (bytes <= 0 || gpus <= 1) return {};
    auto [it, inserted] = costs.try_emplace(bytes);
    if (inserted) it->second = allreduce_cost(bw, hw_, bytes, par.algorithm);
    return it->second;
  };
  auto orthogonalise_s = [&](double x, double r) {
    return roof.time_s(2.0 * x * r * r, g * x * (3.0 * r + 2.0 * r * (r - 1.0)));
  };
  std::vector<PlannedBucket> out;
  out.reserve(plan.buckets.size());
  double state = 0, largest = 0;
  for (const model::Bucket& b : plan.buckets) {
    const PowerSgdBucket pb = powersgd_bucket(*workload_, b, par.comm_hook.rank);
    const double u = g * static_cast<double>(pb.uncompressed_elements);
    const double p = g * static_cast<double>(pb.p_elements);
    const double q = g * static_cast<double>(pb.q_elements);
    const CollectiveCost cu = allreduce(u), cp = allreduce(p), cq = allreduce(q);
    PlannedBucket planned;
    planned.cost.grad_bytes = b.bytes;
    planned.cost.bytes = static_cast<std::int64_t>(std::llround(u + p + q));
    planned.cost.tensors = static_cast<int>(b.tensors.size());
    planned.collective_s = cu.time_s + cp.time_s + cq.time_s;
    // The busbw of the three together (nccl-tests' AllReduce factor on their summed bytes).
    planned.cost.busbw_gbytes_per_s =
        planned.collective_s > 0
            ? (u + p + q) / planned.collective_s *
                  model::busbw_factor(model::CollectiveOp::kAllReduce, gpus) / 1e9
            : 0.0;
    // The largest of the three names the algorithm, protocol and channels.
    const CollectiveCost& big = u >= p + q ? cu : (p >= q ? cp : cq);
    planned.cost.algorithm = big.algorithm;
    planned.cost.protocol = big.protocol;
    planned.cost.channels = big.channels;
    planned.ready_layer = b.ready_layer;
    if (gpus > 1) {
      const double l = static_cast<double>(pb.elements);
      double t = g *
                 (8.0 * l + 6.0 * static_cast<double>(pb.uncompressed_elements) +
                  2.0 * static_cast<double>(pb.q_elements)) /
                 roof.bytes_per_s;
      for (const PowerSgdMatrix& mx : pb.compressed) {
        const double n = static_cast<double>(mx.n), m = static_cast<double>(mx.m);
        const double r = mx.rank;
        t += 3.0 * roof.time_s(2.0 * n * m * r, g * (n * m + n * r + m * r));
        t += orthogonalise_s(n, r) + orthogonalise_s(m, r);
      }
      planned.overhead_s = t;
      state += g * (l + static_cast<double>(pb.p_elements + pb.q_elements));
      largest = std::max(largest, g * l);
    }
    out.push_back(planned);
  }
  hook_memory_bytes = state + largest;
  return out;
}

std::vector<PlannedBucket> Predictor::topk_buckets(const model::BucketPlan& plan,
                                                   const model::CollectiveBandwidths& bw, DType dt,
                                                   int gpus, const model::ParallelismConfig& par,
                                                   double& hook_memory_bytes) const {
  // Per bucket of L elements (g bytes each) on n ranks, k = ceil(F L):
  //   selection: |grad| (read L, write L), torch.topk's radix select (one counting pass per
  //   8-bit digit of the 32-bit key: 4 reads of L, then one gather pass: L), writing k values
  //   and k int64 indices: g 7L + k (g + 8) bytes;
  //   all-gather of S = n k (g + 8) bytes (values + indices of every rank);
  //   decompression: zero the bucket (L), scatter-add the n k pairs (read n k (g + 8), read +
  //   write 2 n k g), divide by n (read L, write L): g 3L + n k (3g + 8) bytes.
  // Everything element-wise runs at HBM speed. Memory: the gathered buffer and the local top-k
  // of the largest bucket.
  const double g = model::dtype_bytes(dt);
  const double ranks = gpus;
  const double mem_rate = roofline(dt).bytes_per_s;
  std::vector<PlannedBucket> out;
  out.reserve(plan.buckets.size());
  double largest = 0;
  for (const model::Bucket& b : plan.buckets) {
    const std::int64_t k = topk_count(b.elements, par.comm_hook.fraction);
    const double kd = static_cast<double>(k), l = static_cast<double>(b.elements);
    const double s = topk_gather_bytes(gpus, k, static_cast<int>(g));
    PlannedBucket planned;
    planned.cost.grad_bytes = b.bytes;
    planned.cost.bytes = static_cast<std::int64_t>(std::llround(s));
    planned.cost.tensors = static_cast<int>(b.tensors.size());
    planned.ready_layer = b.ready_layer;
    if (gpus > 1) {
      const CollectiveCost c =
          collective_cost(model::CollectiveOp::kAllGather, bw, hw_, s, par.algorithm);
      planned.collective_s = c.time_s;
      planned.cost.busbw_gbytes_per_s = c.busbw_gbytes_per_s;
      planned.cost.algorithm = c.algorithm;
      planned.cost.protocol = c.protocol;
      planned.cost.channels = c.channels;
      const double select = g * 7.0 * l + kd * (g + kTopKIndexBytes);
      const double scatter = g * 3.0 * l + ranks * kd * (3.0 * g + kTopKIndexBytes);
      planned.overhead_s = (select + scatter) / mem_rate;
      largest = std::max(largest, s + kd * (g + kTopKIndexBytes));
    }
    out.push_back(planned);
  }
  hook_memory_bytes = largest;
  return out;
}

}  // namespace ddpsim::sim
