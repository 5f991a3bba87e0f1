// alpha_beta_collective.hpp: the alpha-beta line of a measured or hand-described machine.
//
// A machine whose collective library is not NCCL's tuning model -- a calibration profile's
// measured line (Gloo on CPUs, or any backend `ddpsim calibrate` timed), or a round-number
// machine in a test -- is costed by one alpha-beta formula per algorithm with the constants of
// its `collectives` section (model::CollectiveTuning): hardware `collectives.model:
// "alpha_beta"`. Presets use NCCL's own model (nccl_tuning.hpp).
//   ring AllReduce      t = (2(n-1) - k)*a_i + k*a_e + 2(n-1)/n * S / (eta*B),
//                       k = 2(N-1) inter-node steps when the ring spans N > 1 nodes,
//   ring ReduceScatter / AllGather   steps n-1 (k = N-1), volume (n-1)/n * S,
//   Broadcast, Reduce   t = (n-1)*a + S/(eta*B),
//   tree AllReduce      t = 2*((g-1)*a_i + ceil(log2 N)*a_e) + 2*S/(eta_tree*B),
//   hierarchical        ReduceScatter in the node, ring AllReduce of S/g across nodes on each
//                       GPU's rail, AllGather in the node,
//   NVLS                t = a_nvls + S/(eta_nvls*B_nvls) (one node),
//   NVLS_TREE           costed as the hierarchical form; auto: ring, tree across nodes, NVLS on
//                       one node, NVLS_TREE across nodes of a reducing NVSwitch.
//
//   double t = detail::alpha_beta_time(op, bw, hw, bytes, CollectiveAlgorithm::kAuto, &algo);
#pragma once

#include "model/collective_op.hpp"
#include "model/hardware/cluster.hpp"
#include "model/hardware/hardware.hpp"
#include "model/scenario/scenario.hpp"

namespace ddpsim::sim::detail {

/// Time (s) of `c` on `bytes` (> 0, bw.gpus >= 2) by the alpha-beta formulas; `*chosen` gets
/// the algorithm costed (a request that does not apply falls back to the ring).
double alpha_beta_time(model::CollectiveOp c, const model::CollectiveBandwidths& bw,
                       const model::HardwareSpec& hw, double bytes,
                       model::CollectiveAlgorithm algorithm, model::CollectiveAlgorithm* chosen);

/// The hierarchical all-reduce alone (also what an NCCL machine runs when asked for it).
double hierarchical_allreduce_time(const model::CollectiveBandwidths& bw,
                                   const model::HardwareSpec& hw, double bytes);

}  // namespace ddpsim::sim::detail
