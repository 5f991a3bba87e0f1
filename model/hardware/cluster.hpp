// cluster.hpp: the cluster as a graph, and the collective bandwidth it allows.
//
// Topology builds a Boost.Graph of the machines a scenario uses: GPUs, the intra-node fabric
// (an NVSwitch, or a PCIe switch), the PCIe path from GPUs to NICs, NICs, leaf switches and a
// spine (fat tree with oversubscription). Every edge holds a physical rate (bytes/s, one
// direction) and a latency; physical rates are typed in once, in the hardware preset.
//
// Effective collective bandwidth is derived from the graph the way NCCL uses it: one ring per
// channel, one channel per NIC (multi-rail), each ring hop routed over the graph; a link's load
// is the number of ring hops that cross it, and the bus bandwidth is
//     busbw = min over links l of  channels * bandwidth(l) / load(l),
// i.e. the minimum over cuts of cut bandwidth / ring crossings. Example: a DGX A100 pair
// (8 x 200 Gb/s HDR per node) gives 8 * 25 GB/s = 200 GB/s busbw across nodes, of which NCCL
// reaches ~192 GB/s (published row nccl-dgxa100-multinode), not the 25 GB/s of one NIC.
//
//   Topology topo(hw, /*gpus=*/64);
//   double b = topo.ring_bus_bandwidth();   // bytes/s
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <string>

#include "model/hardware/hardware.hpp"

namespace ddpsim::model {

enum class VertexKind { kGpu, kIntraSwitch, kPcieSwitch, kNic, kLeafSwitch, kSpineSwitch };

struct TopoVertex {
  VertexKind kind = VertexKind::kGpu;
  int node = -1;  ///< node index, -1 for network switches
  int index = 0;  ///< local index within the node (GPU 0..7, NIC 0..7)
  std::string name;
};

struct TopoEdge {
  double bandwidth = 0;    ///< bytes/s in this direction
  double latency = 0;      ///< seconds
  std::string link_class;  ///< "nvlink4", "pcie4-x16", "ib-ndr-400", "spine"...
};

/// Directed graph: every physical link is two edges, one per direction.
using TopologyGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, TopoVertex, TopoEdge>;

/// Bandwidths the collective cost model needs, all bytes/s in one direction.
struct CollectiveBandwidths {
  int gpus = 1;
  int nodes = 1;
  int gpus_per_node = 1;          ///< GPUs used per node (min(gpus, hardware gpus_per_node))
  int channels = 1;               ///< rings NCCL would run (one per NIC across nodes; 1 in a node,
                                  ///< where the count changes no ratio)
  double ring_bus = 0;            ///< busbw of rings over all GPUs (flat ring, multi-rail)
  double intra_node_bus = 0;      ///< busbw of rings within one node
  double inter_node_per_gpu = 0;  ///< network bandwidth per GPU (its rail) for hierarchical
                                  ///< algorithms: one ring per GPU across nodes; 0 for one node
  double nvls_bus = 0;            ///< per-GPU fabric bandwidth usable by in-switch reduction:
                                  ///< the NVLink rate on an NVSwitch whose tuning has
                                  ///< nvls_efficiency > 0 (H100/H200), else 0
  double intra_latency = 0;       ///< alpha per step inside a node (from the tuning)
  double inter_latency = 0;       ///< alpha per step across nodes (from the tuning)
};

/// Topologies with equal keys have equal bandwidths and per-step latencies (only the `gpus` and
/// `nodes` counts differ): within one node every GPU count is its own shape; across nodes the
/// built graph is two nodes, under one leaf or across the spine. Caches key on this.
int topology_shape_key(const HardwareSpec& hw, int gpus);

class Topology {
 public:
  /// Builds the graph for `gpus` GPUs (>= 1). When gpus > gpus_per_node it must be a multiple
  /// (the scenario validator guarantees it). Rings are symmetric, so a large cluster may be
  /// represented by a bounded number of nodes without changing any load ratio.
  ///
  /// Representation: the graph holds at most 2 nodes (under one leaf when the cluster fits in
  /// one, else one node under each of two leaves joined by a spine). Every ring, whatever the
  /// node count, crosses each NIC link and (when it spans several leaves) each leaf uplink once
  /// per channel and loads every node's fabric alike, so the loads and hence every bandwidth
  /// equal those of the full cluster; leaf uplinks keep the capacity of a full leaf
  /// (nodes_per_leaf * nics_per_node * NIC rate / oversubscription).
  /// Construction is O(1) in `gpus` (tens of microseconds).
  ///
  /// Preconditions (asserted): gpus >= 1; gpus_per_node >= 1; nodes_per_leaf >= 1;
  /// oversubscription >= 1; positive intra-node, PCIe and (for several nodes) NIC rates.
  /// Throws InputError when the cluster spans several nodes but nics_per_node < 1.
  ///
  /// Intra-node fabric: an NVSwitch (kIntraSwitch) when intra_node_switched and the link class
  /// is not PCIe; a PCIe switch (kPcieSwitch, link class name starting "pcie") shared with the
  /// NICs; or, for intra_node_switched == false (DGX-1's hybrid cube-mesh), direct GPU-GPU
  /// edges between ring neighbours i and i+1 carrying the GPU's whole NVLink rate: a documented
  /// simplification that holds when the mesh decomposes into edge-disjoint Hamiltonian cycles
  /// (DGX-1's 6 links per V100 do: NCCL builds its rings along them).
  Topology(const HardwareSpec& hw, int gpus);

  const TopologyGraph& graph() const { return graph_; }
  const CollectiveBandwidths& bandwidths() const { return bw_; }
  /// Convenience accessors.
  double ring_bus_bandwidth() const { return bw_.ring_bus; }
  int nodes() const { return bw_.nodes; }
  /// Nodes actually present in graph() (<= 2; see the constructor).
  int built_nodes() const { return built_nodes_; }

 private:
  TopologyGraph graph_;
  CollectiveBandwidths bw_;
  int built_nodes_ = 1;
};

}  // namespace ddpsim::model
