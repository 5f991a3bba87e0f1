// comm_hooks.hpp: PyTorch's DDP communication hooks as the analytic model costs them
// (comm_hooks.cpp): which tensors PowerSGD compresses (powerSGD_hook.py's rules), the matrices
// of a bucket, and top-k's element count and all-gather size. The Predictor turns them into the
// planned buckets of a step (StepPlan::buckets).
//
//   PowerSgdBucket b = powersgd_bucket(workload, bucket_plan.buckets[0], 4);
//   bool c = powersgd_compresses(1024, 4096, 4);   // (1024 + 4096) x 4 x 2 < 1024 x 4096
#pragma once

#include <cstdint>
#include <vector>

#include "model/workload/bucketing.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::sim {

/// PowerSGD's state as PyTorch's powerSGD_hook.PowerSGDState defaults it (ecosystem.md 1.4):
/// matrix_approximation_rank is the scenario's r, the rest are the defaults.
inline constexpr double kPowerSgdMinCompressionRate = 2;  ///< min_compression_rate
inline constexpr int kPowerSgdStartIter = 1000;           ///< start_powerSGD_iter

/// One bucket as powerSGD_hook splits it (torch/distributed/algorithms/ddp_comm_hooks/
/// powerSGD_hook.py): every gradient is viewed as tensor.view(shape[0], -1), an n x m matrix
/// (1-D tensors: never compressed); with r' = min(n, m, r) it is compressed iff
/// (n + m) * r' * min_compression_rate < n * m (_should_compress).
struct PowerSgdMatrix {
  std::int64_t n = 0, m = 0;
  int rank = 0;  ///< r' = min(n, m, r)
};
struct PowerSgdBucket {
  std::int64_t elements = 0;               ///< the whole bucket (error feedback covers it all)
  std::int64_t uncompressed_elements = 0;  ///< all-reduce (1): the uncompressed tensors, together
  std::int64_t p_elements = 0;             ///< all-reduce (2): sum of n * r' over compressed
  std::int64_t q_elements = 0;             ///< all-reduce (3): sum of m * r'
  std::vector<PowerSgdMatrix> compressed;
};
/// The exact PyTorch rule _should_compress(n, m, r', min_compression_rate).
bool powersgd_compresses(std::int64_t n, std::int64_t m, int rank,
                         double min_compression_rate = kPowerSgdMinCompressionRate);
PowerSgdBucket powersgd_bucket(const model::Workload& w, const model::Bucket& b, int rank);

/// top-k with fraction F: k = ceil(F * elements) per bucket and rank (at least 1).
std::int64_t topk_count(std::int64_t elements, double fraction);
/// Index bytes per selected element: torch.topk returns int64 indices (torch.return_types.topk
/// (values, indices), indices a LongTensor), which PyTorch-style top-k hooks all-gather as is.
inline constexpr int kTopKIndexBytes = 8;
/// The all-gather's total size (nccl-tests' S for AllGather): every rank contributes k values
/// and k indices, S = ranks * k * (value_bytes + 8).
inline double topk_gather_bytes(int ranks, std::int64_t k, int value_bytes) {
  return static_cast<double>(ranks) * static_cast<double>(k) * (value_bytes + kTopKIndexBytes);
}

}  // namespace ddpsim::sim
