// link_graph.hpp: the cluster graph as links and routes for the flow model
// (simulator/collectives/network_flow.hpp), and the ring forms of collectives over it.
//
// LinkGraph turns a model::Topology (model/hardware/cluster.hpp) into links (one per directed edge,
// capacity in bytes/s) and routes hops the way cluster.cpp does: GPU to GPU over the node's
// fabric only; GPU to NIC over PCIe or NVLink to the GPU next to the NIC (PXN), never through
// another NIC; NIC to NIC over leaves and the spine. Like the Topology, it holds at most two
// nodes standing for the whole cluster: a representative ring of m <= n members still runs the
// n-rank ring's step count and chunk size, and every link carries the same load as in the full
// cluster (cluster.hpp explains why).
//
//
//   model::Topology topo(hw, 16);
//   LinkGraph g(topo, hw);
//   CollectiveFlows f = ring_collective_flows(g, model::CollectiveOp::kAllReduce, 1e9,
//   topo.bandwidths(),
//                                             hw);
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/hardware/cluster.hpp"
#include "model/hardware/hardware.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/collectives/network_flow.hpp"

namespace ddpsim::sim {

/// The links of a Topology and NCCL-style routes over them (see the top of this file).
class LinkGraph {
 public:
  LinkGraph(const model::Topology& topo, const model::HardwareSpec& hw);

  const std::vector<double>& capacity_bytes_per_s() const { return capacity_; }
  /// "n0/gpu0->n0/nvswitch"
  const std::string& link_name(int link) const { return names_[static_cast<std::size_t>(link)]; }
  /// The link from vertex `from` to vertex `to` (names as in model/hardware/cluster.cpp), or -1.
  int find_link(const std::string& from, const std::string& to) const;
  /// True for the links of the data-centre network: NIC to leaf, leaf to spine and back (an
  /// endpoint is a leaf or spine switch). Other jobs on other GPUs of the same nodes share
  /// these, not a node's own fabric (simulator/event/contention.hpp).
  bool network_link(int link) const { return network_[static_cast<std::size_t>(link)] != 0; }
  int built_nodes() const { return built_nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int nics_per_node() const { return nics_; }

  /// GPU a to GPU b of one built node over its fabric.
  std::vector<int> gpu_to_gpu(int node, int a, int b) const;
  /// GPU `gpu` of `node` to GPU `gpu2` of `node2` through NIC `nic` of both nodes.
  std::vector<int> gpu_to_gpu_via_nic(int node, int gpu, int node2, int gpu2, int nic) const;

  /// The ring inside built node `node`, GPUs in order 0..g-1 (one channel).
  RingRoute intra_ring(int node) const;
  /// The flat multi-rail rings over every built GPU, one per NIC (channel), as cluster.cpp
  /// builds them: channel c enters each node at the GPU next to NIC c and leaves it from the
  /// GPU before that, through NIC c. One node: one ring, intra_ring(0).
  std::vector<RingRoute> flat_rings() const;
  /// Rings across nodes for hierarchical algorithms: per GPU j and per NIC of j's PCIe group,
  /// one ring over GPU j of every built node. rails_per_gpu(): NICs per GPU (the minimum).
  std::vector<RingRoute> rail_rings() const;
  int rails_per_gpu() const;

 private:
  std::vector<int> route(int from, int to, const std::vector<char>& allowed) const;
  int gpu_vertex(int node, int j) const;
  int nic_vertex(int node, int c) const;
  std::vector<char> fabric_mask(int node) const;
  std::vector<char> interior_mask(int node, int nic) const;
  int nic_group(int c) const;
  int gpu_group(int j) const;

  std::vector<double> capacity_;
  std::vector<std::string> names_;
  std::vector<char> network_;  ///< per link: network_link()
  std::vector<std::string> vertex_names_;
  std::vector<model::VertexKind> kinds_;
  std::vector<int> vertex_node_;
  std::vector<int> vertex_index_;
  std::vector<std::vector<std::pair<int, int>>> out_;  ///< per vertex: (target, link)
  bool pcie_fabric_ = false;
  bool multi_node_ = false;  ///< the Topology spans several nodes
  int built_nodes_ = 1;
  int gpus_per_node_ = 1;
  int nics_ = 0;
};

/// The flat ring form of collective `c` on `bytes` (nccl-tests' S) as collective.hpp costs it:
/// steps (2(n-1) AllReduce, n-1 otherwise), chunk = volume / steps / channels / eta, per-step
/// latency = the formula's latency term / steps (so intra- and inter-node alphas average as in
/// NCCL's model). One rank or zero bytes: no phase.
CollectiveFlows ring_collective_flows(const LinkGraph& g, model::CollectiveOp c, double bytes,
                                      const model::CollectiveBandwidths& bw,
                                      const model::HardwareSpec& hw);

/// Hierarchical AllReduce (collective.hpp): ReduceScatter inside every node, a ring AllReduce
/// of S/g across nodes on each GPU's rails, AllGather inside every node. One node: the ring.
CollectiveFlows hierarchical_allreduce_flows(const LinkGraph& g, double bytes,
                                             const model::CollectiveBandwidths& bw,
                                             const model::HardwareSpec& hw);

}  // namespace ddpsim::sim
