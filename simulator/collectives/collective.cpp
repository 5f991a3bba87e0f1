#include "simulator/collectives/collective.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "model/error.hpp"
#include "simulator/collectives/detail/alpha_beta_collective.hpp"
#include "simulator/collectives/nccl_tuning.hpp"

namespace ddpsim::sim {

using model::CollectiveAlgorithm;
using model::CollectiveOp;

CollectiveCost collective_cost(CollectiveOp c, const model::CollectiveBandwidths& bw,
                               const model::HardwareSpec& hw, double bytes,
                               CollectiveAlgorithm algorithm, model::CollectiveProtocol protocol,
                               model::Reduction reduction) {
  DDPSIM_ASSERT(bytes >= 0, "negative message size");
  CollectiveCost out;
  out.algorithm = algorithm == CollectiveAlgorithm::kAuto ? CollectiveAlgorithm::kRing : algorithm;
  if (bw.gpus <= 1 || bytes == 0) return out;

  if (hw.collective_model == model::CollectiveModel::kAlphaBeta) {
    out.time_s = detail::alpha_beta_time(c, bw, hw, bytes, algorithm, &out.algorithm);
    out.channels = bw.channels;
  } else if (algorithm == CollectiveAlgorithm::kHierarchical && c == CollectiveOp::kAllReduce) {
    out.time_s = detail::hierarchical_allreduce_time(bw, hw, bytes);
    out.channels = bw.channels;
  } else {
    CollectiveAlgorithm a =
        algorithm == CollectiveAlgorithm::kHierarchical ? CollectiveAlgorithm::kRing : algorithm;
    // Across nodes NVLS alone cannot reduce (without SHARP): NCCL runs NVLS_TREE there.
    if (a == CollectiveAlgorithm::kNvls && bw.nodes > 1) a = CollectiveAlgorithm::kNvlsTree;
    std::optional<NcclPlan> plan = nccl_plan(c, bw, hw, bytes, a, protocol, reduction);
    if (!plan && protocol != model::CollectiveProtocol::kAuto) {
      plan = nccl_plan(c, bw, hw, bytes, a, model::CollectiveProtocol::kAuto, reduction);
    }
    if (!plan) plan = nccl_plan(c, bw, hw, bytes, CollectiveAlgorithm::kRing, protocol, reduction);
    if (!plan) {
      plan = nccl_plan(c, bw, hw, bytes, CollectiveAlgorithm::kRing,
                       model::CollectiveProtocol::kAuto, reduction);
    }
    DDPSIM_ASSERT(plan.has_value(), "NCCL always has a ring");
    out.time_s = plan->time_s;
    out.algorithm = plan->algorithm;
    out.protocol = plan->protocol;
    out.channels = plan->channels;
    out.chunk_bytes = plan->kernel.chunk_bytes;
    out.host_s = plan->kernel.host_s;
  }
  out.algbw_gbytes_per_s = bytes / out.time_s / 1e9;
  out.busbw_gbytes_per_s = out.algbw_gbytes_per_s * model::busbw_factor(c, bw.gpus);
  return out;
}

}  // namespace ddpsim::sim
