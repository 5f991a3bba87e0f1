#include "simulator/collectives/link_graph.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>

#include "model/error.hpp"

namespace ddpsim::sim {

LinkGraph::LinkGraph(const model::Topology& topo, const model::HardwareSpec& hw) {
  const model::TopologyGraph& g = topo.graph();
  const auto nv = boost::num_vertices(g);
  out_.resize(nv);
  for (std::size_t v = 0; v < nv; ++v) {
    const model::TopoVertex& tv = g[v];
    vertex_names_.push_back(tv.name);
    kinds_.push_back(tv.kind);
    vertex_node_.push_back(tv.node);
    vertex_index_.push_back(tv.index);
  }
  for (auto [e, eend] = boost::edges(g); e != eend; ++e) {
    const auto s = boost::source(*e, g);
    const auto t = boost::target(*e, g);
    const int id = static_cast<int>(capacity_.size());
    capacity_.push_back(g[*e].bandwidth);
    names_.push_back(g[s].name + "->" + g[t].name);
    const auto fabric = [](model::VertexKind k) {
      return k == model::VertexKind::kLeafSwitch || k == model::VertexKind::kSpineSwitch;
    };
    network_.push_back(fabric(g[s].kind) || fabric(g[t].kind) ? 1 : 0);
    out_[s].emplace_back(static_cast<int>(t), id);
  }
  pcie_fabric_ = hw.intra_node_switched && hw.intra_node.kind == "pcie";
  built_nodes_ = topo.built_nodes();
  gpus_per_node_ = topo.bandwidths().gpus_per_node;
  nics_ = std::max(0, hw.nics_per_node);
  multi_node_ = topo.nodes() > 1;
}

int LinkGraph::find_link(const std::string& from, const std::string& to) const {
  for (std::size_t v = 0; v < out_.size(); ++v) {
    if (vertex_names_[v] != from) continue;
    for (auto [t, l] : out_[v])
      if (vertex_names_[static_cast<std::size_t>(t)] == to) return l;
  }
  return -1;
}

int LinkGraph::gpu_vertex(int node, int j) const {
  for (std::size_t v = 0; v < kinds_.size(); ++v)
    if (kinds_[v] == model::VertexKind::kGpu && vertex_node_[v] == node && vertex_index_[v] == j)
      return static_cast<int>(v);
  DDPSIM_ASSERT(false, "link graph: no such GPU");
}

int LinkGraph::nic_vertex(int node, int c) const {
  for (std::size_t v = 0; v < kinds_.size(); ++v)
    if (kinds_[v] == model::VertexKind::kNic && vertex_node_[v] == node && vertex_index_[v] == c)
      return static_cast<int>(v);
  DDPSIM_ASSERT(false, "link graph: no such NIC");
}

// The node's GPUs and its fabric (an NVSwitch, the PCIe switch of a PCIe fabric, or none for a
// mesh): cluster.cpp's gpu_hop filter.
std::vector<char> LinkGraph::fabric_mask(int node) const {
  std::vector<char> m(kinds_.size(), 0);
  for (std::size_t v = 0; v < kinds_.size(); ++v) {
    if (vertex_node_[v] != node) continue;
    const auto k = kinds_[v];
    if (k == model::VertexKind::kGpu || k == model::VertexKind::kIntraSwitch ||
        (pcie_fabric_ && k == model::VertexKind::kPcieSwitch))
      m[v] = 1;
  }
  return m;
}

// cluster.cpp's interior_with: GPUs, PCIe switches and the fabric of the node, and one NIC.
std::vector<char> LinkGraph::interior_mask(int node, int nic) const {
  std::vector<char> m(kinds_.size(), 0);
  for (std::size_t v = 0; v < kinds_.size(); ++v) {
    if (vertex_node_[v] != node) continue;
    const auto k = kinds_[v];
    if (k == model::VertexKind::kGpu || k == model::VertexKind::kIntraSwitch ||
        k == model::VertexKind::kPcieSwitch)
      m[v] = 1;
  }
  m[static_cast<std::size_t>(nic_vertex(node, nic))] = 1;
  return m;
}

std::vector<int> LinkGraph::route(int from, int to, const std::vector<char>& allowed) const {
  if (from == to) return {};
  // Breadth-first search (fewest links), out-edges in insertion order, as cluster.cpp's Router.
  std::vector<int> pred_link(kinds_.size(), -1);
  std::vector<int> pred_vertex(kinds_.size(), -1);
  std::vector<char> seen(kinds_.size(), 0);
  std::deque<int> q{from};
  seen[static_cast<std::size_t>(from)] = 1;
  while (!q.empty() && !seen[static_cast<std::size_t>(to)]) {
    const int v = q.front();
    q.pop_front();
    for (auto [t, l] : out_[static_cast<std::size_t>(v)]) {
      const auto ti = static_cast<std::size_t>(t);
      if (seen[ti] || !allowed[ti]) continue;
      seen[ti] = 1;
      pred_link[ti] = l;
      pred_vertex[ti] = v;
      q.push_back(t);
    }
  }
  DDPSIM_ASSERT(seen[static_cast<std::size_t>(to)], "link graph: hop has no route");
  std::vector<int> path;
  for (int v = to; v != from; v = pred_vertex[static_cast<std::size_t>(v)])
    path.push_back(pred_link[static_cast<std::size_t>(v)]);
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<int> LinkGraph::gpu_to_gpu(int node, int a, int b) const {
  return route(gpu_vertex(node, a), gpu_vertex(node, b), fabric_mask(node));
}

std::vector<int> LinkGraph::gpu_to_gpu_via_nic(int node, int gpu, int node2, int gpu2,
                                               int nic) const {
  const int na = nic_vertex(node, nic);
  const int nb = nic_vertex(node2, nic);
  std::vector<int> path = route(gpu_vertex(node, gpu), na, interior_mask(node, nic));
  std::vector<char> net(kinds_.size(), 0);
  for (std::size_t v = 0; v < kinds_.size(); ++v)
    if (kinds_[v] == model::VertexKind::kLeafSwitch || kinds_[v] == model::VertexKind::kSpineSwitch)
      net[v] = 1;
  net[static_cast<std::size_t>(na)] = 1;
  net[static_cast<std::size_t>(nb)] = 1;
  for (int l : route(na, nb, net)) path.push_back(l);
  for (int l : route(nb, gpu_vertex(node2, gpu2), interior_mask(node2, nic))) path.push_back(l);
  return path;
}

int LinkGraph::nic_group(int c) const {
  const int groups = std::min(gpus_per_node_, nics_);
  return c * groups / nics_;
}

int LinkGraph::gpu_group(int j) const {
  const int groups = std::min(gpus_per_node_, nics_);
  return j * groups / gpus_per_node_;
}

RingRoute LinkGraph::intra_ring(int node) const {
  RingRoute r;
  const int g = gpus_per_node_;
  for (int j = 0; j < g; ++j) r.hops.push_back(gpu_to_gpu(node, j, (j + 1) % g));
  return r;
}

std::vector<RingRoute> LinkGraph::flat_rings() const {
  if (!multi_node_) return {intra_ring(0)};
  const int g = gpus_per_node_;
  const int groups = std::min(g, nics_);
  std::vector<RingRoute> rings;
  for (int c = 0; c < nics_; ++c) {
    // As cluster.cpp: enter each node at the first GPU of NIC c's group, leave from the one
    // before it, through NIC c, to the same NIC of the next node.
    const int entry = (nic_group(c) * g + groups - 1) / groups;
    const int exit = (entry + g - 1) % g;
    RingRoute r;
    for (int k = 0; k < built_nodes_; ++k) {
      for (int t = 0; t + 1 < g; ++t)
        r.hops.push_back(gpu_to_gpu(k, (entry + t) % g, (entry + t + 1) % g));
      r.hops.push_back(gpu_to_gpu_via_nic(k, exit, (k + 1) % built_nodes_, entry, c));
    }
    rings.push_back(std::move(r));
  }
  return rings;
}

std::vector<RingRoute> LinkGraph::rail_rings() const {
  std::vector<RingRoute> rings;
  if (!multi_node_) return rings;
  for (int j = 0; j < gpus_per_node_; ++j) {
    for (int c = 0; c < nics_; ++c) {
      if (nic_group(c) != gpu_group(j)) continue;
      RingRoute r;
      for (int k = 0; k < built_nodes_; ++k)
        r.hops.push_back(gpu_to_gpu_via_nic(k, j, (k + 1) % built_nodes_, j, c));
      rings.push_back(std::move(r));
    }
  }
  return rings;
}

int LinkGraph::rails_per_gpu() const {
  int rails = std::numeric_limits<int>::max();
  for (int j = 0; j < gpus_per_node_; ++j) {
    int n = 0;
    for (int c = 0; c < nics_; ++c) n += nic_group(c) == gpu_group(j) ? 1 : 0;
    rails = std::min(rails, n);
  }
  return rails;
}

// ---------------------------------------------------------------------------------------------
// model::CollectiveOp expansions. The shapes mirror collective.cpp's ring_shape and its latency and
// efficiency choices, so that an uncontended expansion reproduces the formula term by term:
// steps x (alpha_step + chunk / rate) = latency term + volume x S / (eta x B).

CollectiveFlows ring_collective_flows(const LinkGraph& g, model::CollectiveOp c, double bytes,
                                      const model::CollectiveBandwidths& bw,
                                      const model::HardwareSpec& hw) {
  CollectiveFlows out;
  if (bw.gpus <= 1 || bytes <= 0) return out;
  const double n = bw.gpus;
  const double nodes = bw.nodes;
  double steps = 0, inter = 0, volume = 0;
  switch (c) {
    case model::CollectiveOp::kAllReduce:
      steps = 2.0 * (n - 1.0);
      inter = bw.nodes > 1 ? 2.0 * (nodes - 1.0) : 0.0;
      volume = 2.0 * (n - 1.0) / n;
      break;
    case model::CollectiveOp::kReduceScatter:
    case model::CollectiveOp::kAllGather:
      steps = n - 1.0;
      inter = bw.nodes > 1 ? nodes - 1.0 : 0.0;
      volume = (n - 1.0) / n;
      break;
    case model::CollectiveOp::kBroadcast:
    case model::CollectiveOp::kReduce:  // NCCL's ring Reduce mirrors its Broadcast
      steps = n - 1.0;
      inter = bw.nodes > 1 ? nodes - 1.0 : 0.0;
      volume = 1.0;
      break;
  }
  const double eta =
      bw.nodes > 1 ? hw.inter_tuning.ring_efficiency : hw.intra_tuning.ring_efficiency;
  RingPhase p;
  p.rings = g.flat_rings();
  p.steps = static_cast<int>(steps);
  p.chunk_bytes = volume * bytes / steps / static_cast<double>(p.rings.size()) / eta;
  p.step_latency_s = ((steps - inter) * bw.intra_latency + inter * bw.inter_latency) / steps;
  out.phases.push_back(std::move(p));
  return out;
}

CollectiveFlows hierarchical_allreduce_flows(const LinkGraph& g, double bytes,
                                             const model::CollectiveBandwidths& bw,
                                             const model::HardwareSpec& hw) {
  if (bw.nodes <= 1)
    return ring_collective_flows(g, model::CollectiveOp::kAllReduce, bytes, bw, hw);
  CollectiveFlows out;
  if (bytes <= 0) return out;
  const int gpn = bw.gpus_per_node;
  const double nodes = bw.nodes;
  RingPhase intra;
  if (gpn > 1) {
    for (int k = 0; k < g.built_nodes(); ++k) intra.rings.push_back(g.intra_ring(k));
    intra.steps = gpn - 1;
    intra.chunk_bytes = bytes / gpn / hw.intra_tuning.ring_efficiency;
    intra.step_latency_s = bw.intra_latency;
    out.phases.push_back(intra);  // ReduceScatter
  }
  RingPhase rails;
  rails.rings = g.rail_rings();
  rails.steps = static_cast<int>(2.0 * (nodes - 1.0));
  rails.chunk_bytes = bytes / gpn / nodes / g.rails_per_gpu() / hw.inter_tuning.ring_efficiency;
  rails.step_latency_s = bw.inter_latency;
  out.phases.push_back(std::move(rails));
  if (gpn > 1) out.phases.push_back(std::move(intra));  // AllGather
  return out;
}

}  // namespace ddpsim::sim
