// collective.hpp: analytic cost of collectives (alpha-beta, NCCL's vocabulary).
//
// One formula family fed by a table of constants (CollectiveBandwidths from the cluster graph,
// CollectiveTuning fitted to published nccl-tests rows or to a calibration profile):
//   ring AllReduce      t = (2(n-1) - k)*a_i + k*a_e + 2(n-1)/n * S / (eta*B),
//                       k = 2(N-1) inter-node steps when the ring spans N > 1 nodes (NCCL),
//   ring ReduceScatter / AllGather   steps n-1 (k = N-1), volume (n-1)/n * S,
//   Broadcast, Reduce   t = (n-1)*a + S/(eta*B)  (pipelined ring; NCCL's Reduce mirrors it),
//   tree AllReduce      t = 2*((g-1)*a_i + ceil(log2 N)*a_e) + 2*S/(eta_tree*B)  (NCCL double
//                       binary tree across nodes, chain inside a node),
//   hierarchical        ReduceScatter inside the node, ring AllReduce of S/g across nodes on each
//                       GPU's rail, AllGather inside the node,
//   NVLS                t = a_nvls + S/(eta_nvls*B_nvls) (in-switch reduction, one node),
//   NVLS_TREE           NVLS inside each node, then across nodes: costed as the hierarchical form,
//   auto                the fastest of the algorithms NCCL has on this hardware: Ring; Tree
//                       across nodes; NVLS on one node and NVLS_TREE across nodes of an NVSwitch
//                       that reduces (NVIDIA/nccl src/enqueue.cc updateCollCostTable). NCCL has
//                       no hierarchical all-reduce: that form is costed only when asked for.
// S is the message size in bytes (nccl-tests' "size"); n ranks, N nodes, g GPUs per node.
// Every result carries time, algbw = S/t and busbw = algbw * factor (2(n-1)/n for AllReduce,
// (n-1)/n for ReduceScatter/AllGather, 1 for Broadcast and Reduce: model::busbw_factor), like
// nccl-tests. The collectives are model/collective_op.hpp's.
//
//   auto bw = model::Topology(hw, 64).bandwidths();
//   CollectiveCost c = allreduce_cost(bw, hw, 100e6, CollectiveAlgorithm::kAuto);
//   c.time_s; c.busbw_gbytes_per_s;
#pragma once

#include "model/cluster.hpp"
#include "model/collective_op.hpp"
#include "model/hardware.hpp"
#include "model/scenario.hpp"

namespace ddpsim::sim {

struct CollectiveCost {
  double time_s = 0;
  double algbw_gbytes_per_s = 0;  ///< S / t, 10^9 byte/s
  double busbw_gbytes_per_s = 0;  ///< algbw * bus factor
  model::CollectiveAlgorithm algorithm = model::CollectiveAlgorithm::kRing;
};

/// Cost of `c` on `bytes` over all GPUs of `bw`. A single rank costs nothing. Algorithms that do
/// not apply (NVLS across nodes or without in-switch reduction, hierarchical on one node) are
/// skipped by kAuto; asking for one explicitly falls back to ring for the parts it cannot do
/// (documented per case in the .cpp).
CollectiveCost collective_cost(model::CollectiveOp c, const model::CollectiveBandwidths& bw,
                               const model::HardwareSpec& hw, double bytes,
                               model::CollectiveAlgorithm algorithm);

inline CollectiveCost allreduce_cost(const model::CollectiveBandwidths& bw,
                                     const model::HardwareSpec& hw, double bytes,
                                     model::CollectiveAlgorithm algorithm) {
  return collective_cost(model::CollectiveOp::kAllReduce, bw, hw, bytes, algorithm);
}

}  // namespace ddpsim::sim
