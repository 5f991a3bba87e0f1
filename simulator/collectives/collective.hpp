// collective.hpp: analytic cost of collectives (alpha-beta, NCCL's vocabulary).
//
// The NCCL algorithms (ring, tree, NVLS, NVLS_TREE) are costed by NCCL's own tuning model
// (simulator/collectives/nccl_tuning.hpp): for every (algorithm, protocol) NCCL has on the
// hardware, t = base latency + per-step hardware latencies (NVLink / PCIe / network) + bytes /
// bandwidth, the bandwidth being channels x per-channel rate from the cluster graph's link rates,
// capped per protocol (LL, LL128, Simple), with the channels NCCL really runs for that size; `auto`
// takes the (algorithm, protocol) NCCL's tuner takes (NVIDIA/nccl src/enqueue.cc
// topoGetAlgoInfo), a forced algorithm or protocol restricts the choice like NCCL_ALGO /
// NCCL_PROTO. NCCL has no hierarchical all-reduce: that form (ReduceScatter inside the node,
// ring AllReduce of S/g across nodes on each GPU's rail, AllGather inside the node, with the
// preset's per-step latencies) is costed only when asked for.
// S is the message size in bytes (nccl-tests' "size"); n ranks, N nodes, g GPUs per node.
// Every result carries time, algbw = S/t and busbw = algbw * factor (2(n-1)/n for AllReduce,
// (n-1)/n for ReduceScatter/AllGather, 1 for Broadcast and Reduce: model::busbw_factor), like
// nccl-tests. The collectives are model/collective_op.hpp's.
//
//   auto bw = model::Topology(hw, 64).bandwidths();
//   CollectiveCost c = allreduce_cost(bw, hw, 100e6, CollectiveAlgorithm::kAuto);
//   c.time_s; c.busbw_gbytes_per_s;
#pragma once

#include "model/collective_op.hpp"
#include "model/hardware/cluster.hpp"
#include "model/hardware/hardware.hpp"
#include "model/scenario/scenario.hpp"

namespace ddpsim::sim {

struct CollectiveCost {
  double time_s = 0;
  double algbw_gbytes_per_s = 0;  ///< S / t, 10^9 byte/s
  double busbw_gbytes_per_s = 0;  ///< algbw * bus factor
  model::CollectiveAlgorithm algorithm = model::CollectiveAlgorithm::kRing;
  model::CollectiveProtocol protocol = model::CollectiveProtocol::kSimple;  ///< NCCL's protocol
  int channels = 1;        ///< channels (CUDA blocks) the call runs on
  double chunk_bytes = 0;  ///< NCCL: bytes per primitive (ring) or per chunk (NVLS, tree)
  double host_s = 0;       ///< NCCL: host enqueue per call (the call takes at least this)
};

/// Cost of `c` on `bytes` over all GPUs of `bw`. A single rank costs nothing. kAuto weighs what
/// NCCL has here for `reduction`; an algorithm NCCL does not have for this collective, reduction
/// or hardware (NVLS on an A100, NVLS across nodes runs as NVLS_TREE, tree for an all-gather,
/// NVLS for an average) falls back to the ring, and a protocol the algorithm cannot run (LL with
/// NVLS) to the algorithm's own choice.
CollectiveCost collective_cost(
    model::CollectiveOp c, const model::CollectiveBandwidths& bw, const model::HardwareSpec& hw,
    double bytes, model::CollectiveAlgorithm algorithm,
    model::CollectiveProtocol protocol = model::CollectiveProtocol::kAuto,
    model::Reduction reduction = model::Reduction::kSum);

inline CollectiveCost allreduce_cost(
    const model::CollectiveBandwidths& bw, const model::HardwareSpec& hw, double bytes,
    model::CollectiveAlgorithm algorithm,
    model::CollectiveProtocol protocol = model::CollectiveProtocol::kAuto) {
  return collective_cost(model::CollectiveOp::kAllReduce, bw, hw, bytes, algorithm, protocol);
}

}  // namespace ddpsim::sim
