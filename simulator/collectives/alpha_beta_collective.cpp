#include "simulator/collectives/detail/alpha_beta_collective.hpp"

#include <algorithm>
#include <cmath>

#include "model/error.hpp"

namespace ddpsim::sim::detail {

using model::CollectiveAlgorithm;
using model::CollectiveOp;

namespace {

// Steps and volume factor of the ring form of each collective.
struct RingShape {
  double steps;          // algorithm steps, each paying alpha
  double inter_steps;    // of which cross a node boundary (NCCL's nInter)
  double volume_factor;  // bytes each rank sends = factor * S
};

RingShape ring_shape(CollectiveOp c, int n, int nodes) {
  const double dn = n;
  const double dN = nodes;
  switch (c) {
    case CollectiveOp::kAllReduce:
      return {2.0 * (dn - 1.0), nodes > 1 ? 2.0 * (dN - 1.0) : 0.0, 2.0 * (dn - 1.0) / dn};
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      return {dn - 1.0, nodes > 1 ? dN - 1.0 : 0.0, (dn - 1.0) / dn};
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return {dn - 1.0, nodes > 1 ? dN - 1.0 : 0.0, 1.0};
  }
  DDPSIM_ASSERT(false, "unknown collective");
}

double ring_time(CollectiveOp c, const model::CollectiveBandwidths& bw,
                 const model::HardwareSpec& hw, double bytes) {
  const RingShape r = ring_shape(c, bw.gpus, bw.nodes);
  const bool multi_node = bw.nodes > 1;
  // Across nodes the ring's bottleneck is the network, so the network's efficiency applies.
  const double eta = multi_node ? hw.inter_tuning.ring_efficiency : hw.intra_tuning.ring_efficiency;
  const double b = bw.ring_bus;
  return (r.steps - r.inter_steps) * bw.intra_latency + r.inter_steps * bw.inter_latency +
         r.volume_factor * bytes / (eta * b);
}

double tree_allreduce_time(const model::CollectiveBandwidths& bw, const model::HardwareSpec& hw,
                           double bytes) {
  const double g = bw.gpus_per_node;
  const double depth = bw.nodes > 1 ? std::ceil(std::log2(static_cast<double>(bw.nodes))) : 0.0;
  const bool multi_node = bw.nodes > 1;
  const double eta = multi_node ? hw.inter_tuning.tree_efficiency : hw.intra_tuning.tree_efficiency;
  // Reduce up the tree then broadcast down: every byte crosses each rank's link twice,
  // independent of n (NCCL stores Tree bandwidth as busBw * 0.5).
  return 2.0 * ((g - 1.0) * bw.intra_latency + depth * bw.inter_latency) +
         2.0 * bytes / (eta * bw.ring_bus);
}

}  // namespace

double hierarchical_allreduce_time(const model::CollectiveBandwidths& bw,
                                   const model::HardwareSpec& hw, double bytes) {
  const double g = bw.gpus_per_node;
  const double nn = bw.nodes;
  const double eta_i = hw.intra_tuning.ring_efficiency;
  const double eta_e = hw.inter_tuning.ring_efficiency;
  // ReduceScatter and AllGather inside the node, each (g-1) steps of S/g.
  const double intra = g > 1 ? 2.0 * ((g - 1.0) * bw.intra_latency +
                                      (g - 1.0) / g * bytes / (eta_i * bw.intra_node_bus))
                             : 0.0;
  // Each GPU all-reduces its S/g shard with its peers on the other nodes, over its own rail.
  const double shard = bytes / g;
  const double inter = nn > 1 ? 2.0 * (nn - 1.0) * bw.inter_latency +
                                    2.0 * (nn - 1.0) / nn * shard / (eta_e * bw.inter_node_per_gpu)
                              : 0.0;
  return intra + inter;
}

namespace {

double nvls_allreduce_time(const model::CollectiveBandwidths& bw, const model::HardwareSpec& hw,
                           double bytes) {
  // Each GPU writes S into the switch, which reduces and multicasts S back: S/B per direction.
  return hw.intra_tuning.nvls_latency + bytes / (hw.intra_tuning.nvls_efficiency * bw.nvls_bus);
}

// The node's NVSwitch reduces in the switch (NCCL's nvlsSupport: Hopper and later).
bool nvls_in_node(const model::HardwareSpec& hw, const model::CollectiveBandwidths& bw) {
  return hw.intra_node_switched && hw.intra_tuning.nvls_efficiency > 0 && bw.nvls_bus > 0;
}

bool nvls_available(const model::CollectiveBandwidths& bw, const model::HardwareSpec& hw) {
  return bw.nodes == 1 && nvls_in_node(hw, bw);
}

}  // namespace

double alpha_beta_time(CollectiveOp c, const model::CollectiveBandwidths& bw,
                       const model::HardwareSpec& hw, double bytes, CollectiveAlgorithm algorithm,
                       CollectiveAlgorithm* chosen) {
  struct {
    double time_s = 0;
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  } out;
  auto consider = [&](CollectiveAlgorithm a, double t) {
    if (out.time_s == 0 || t < out.time_s) {
      out.time_s = t;
      out.algorithm = a;
    }
  };
  const bool all_reduce = c == CollectiveOp::kAllReduce;
  // NVLS_TREE: NVLS inside each node, a tree across nodes; costed as the hierarchical form
  // (in-node reduction, then the network on every rail), pending NCCL's own tuning model.
  const bool nvls_tree = all_reduce && bw.nodes > 1 && nvls_in_node(hw, bw);
  switch (algorithm) {
    case CollectiveAlgorithm::kAuto:
      // The algorithms NCCL has for this collective on this hardware, as its tuner weighs them
      // (NVIDIA/nccl src/enqueue.cc updateCollCostTable: CollNet only with collNetSupport
      // (SHARP, not modelled); NVLS and NVLS_TREE only with nvlsSupport, NVLS on one node only;
      // src/graph/tuning.cc: NVLS_TREE disabled on one node). NCCL has no "hierarchical"
      // all-reduce: that form is costed only when asked for.
      consider(CollectiveAlgorithm::kRing, ring_time(c, bw, hw, bytes));
      if (all_reduce && bw.nodes > 1) {
        consider(CollectiveAlgorithm::kTree, tree_allreduce_time(bw, hw, bytes));
      }
      if (all_reduce && nvls_available(bw, hw)) {
        consider(CollectiveAlgorithm::kNvls, nvls_allreduce_time(bw, hw, bytes));
      }
      if (nvls_tree) {
        consider(CollectiveAlgorithm::kNvlsTree, hierarchical_allreduce_time(bw, hw, bytes));
      }
      break;
    case CollectiveAlgorithm::kRing:
    case CollectiveAlgorithm::kPat:  // PAT is NCCL's tuner's choice, never asked of this form
      consider(CollectiveAlgorithm::kRing, ring_time(c, bw, hw, bytes));
      break;
    // Trees, hierarchical and NVLS are AllReduce algorithms here; other collectives run as rings
    // (NCCL: Broadcast/Reduce are ring-only; ReduceScatter/AllGather have no tree).
    case CollectiveAlgorithm::kTree:
      consider(all_reduce ? CollectiveAlgorithm::kTree : CollectiveAlgorithm::kRing,
               all_reduce ? tree_allreduce_time(bw, hw, bytes) : ring_time(c, bw, hw, bytes));
      break;
    case CollectiveAlgorithm::kHierarchical:
      consider(
          all_reduce ? CollectiveAlgorithm::kHierarchical : CollectiveAlgorithm::kRing,
          all_reduce ? hierarchical_allreduce_time(bw, hw, bytes) : ring_time(c, bw, hw, bytes));
      break;
    case CollectiveAlgorithm::kNvls:
    case CollectiveAlgorithm::kNvlsTree:
      // Across nodes NVLS alone cannot reduce (without SHARP): NCCL runs NVLS_TREE there.
      if (all_reduce && nvls_available(bw, hw)) {
        consider(CollectiveAlgorithm::kNvls, nvls_allreduce_time(bw, hw, bytes));
      } else if (nvls_tree) {
        consider(CollectiveAlgorithm::kNvlsTree, hierarchical_allreduce_time(bw, hw, bytes));
      } else {
        consider(CollectiveAlgorithm::kRing, ring_time(c, bw, hw, bytes));
      }
      break;
  }
  *chosen = out.algorithm;
  return out.time_s;
}

}  // namespace ddpsim::sim::detail
