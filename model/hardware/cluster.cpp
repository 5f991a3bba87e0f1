#include "model/hardware/cluster.hpp"

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/visitors.hpp>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/error.hpp"

namespace ddpsim::model {

namespace {

using Vertex = boost::graph_traits<TopologyGraph>::vertex_descriptor;
using Edge = boost::graph_traits<TopologyGraph>::edge_descriptor;
constexpr Vertex kNone = std::numeric_limits<Vertex>::max();

// The vertices of one built node.
struct NodeVertices {
  std::vector<Vertex> gpus;
  std::vector<Vertex> nics;
  std::vector<Vertex> pcie;  // one PCIe switch per GPU/NIC group (none on a PCIe fabric)
  Vertex fabric = kNone;     // NVSwitch or PCIe switch; kNone for a mesh
  Vertex leaf = kNone;
};

// Which vertices a route may pass through. filtered_graph copies its predicate and needs it
// default-constructible, hence a plain struct over a shared mask.
struct AllowedVertices {
  const std::vector<char>* mask = nullptr;
  bool operator()(Vertex v) const { return (*mask)[v] != 0; }
};

// Link load: ring hops crossing each directed edge. Edge properties never move once the graph
// is built, so their address identifies the edge.
using Loads = std::unordered_map<const TopoEdge*, int>;

class Router {
 public:
  explicit Router(const TopologyGraph& g)
      : g_(g), mask_(boost::num_vertices(g), 0), pred_(boost::num_vertices(g)) {}

  void allow_none() { std::fill(mask_.begin(), mask_.end(), 0); }
  void allow(Vertex v) { mask_[v] = 1; }

  // Adds one to the load of every edge on a shortest (fewest links) path from `from` to `to`
  // through allowed vertices (breadth-first search). Unit hop cost is enough: the callers'
  // filters leave only the physically meaningful kind of path (the fabric inside a node,
  // NIC-leaf-spine outside, never a NIC as a shortcut between GPUs), and within it the fewest
  // links is the direct route.
  void add_route(Vertex from, Vertex to, Loads& loads) {
    if (from == to) return;
    boost::filtered_graph<TopologyGraph, boost::keep_all, AllowedVertices> fg(
        g_, boost::keep_all(), AllowedVertices{&mask_});
    found_.assign(boost::num_vertices(g_), 0);
    auto pred_map =
        boost::make_iterator_property_map(pred_.begin(), boost::get(boost::vertex_index, g_));
    boost::breadth_first_search(
        fg, from,
        boost::visitor(boost::make_bfs_visitor(
            std::make_pair(boost::record_edge_predecessors(pred_map, boost::on_tree_edge()),
                           MarkFound{&found_}))));
    DDPSIM_ASSERT(found_[to], "topology: ring hop has no route (graph construction bug)");
    for (Vertex v = to; v != from; v = boost::source(pred_[v], g_)) ++loads[&g_[pred_[v]]];
  }

 private:
  struct MarkFound {
    using event_filter = boost::on_tree_edge;
    std::vector<char>* found;
    template <class E, class G>
    void operator()(E e, const G& g) const {
      (*found)[boost::target(e, g)] = 1;
    }
  };

  const TopologyGraph& g_;
  std::vector<char> mask_;
  std::vector<Edge> pred_;
  std::vector<char> found_;
};

// busbw = min over loaded links of channels * bandwidth / load: each of `channels` rings runs at
// a rate r, and a link crossed by `load` ring hops needs load * r <= bandwidth.
double bus_bandwidth(const Loads& loads, int channels) {
  double bus = std::numeric_limits<double>::infinity();
  for (const auto& [edge, load] : loads)
    bus = std::min(bus, channels * edge->bandwidth / static_cast<double>(load));
  return bus;
}

bool is_pcie_fabric(const LinkSpec& l) { return l.kind == "pcie"; }

class Builder {
 public:
  Builder(const HardwareSpec& hw, TopologyGraph& g) : hw_(hw), g_(g) {}

  Vertex add_vertex(VertexKind kind, int node, int index, std::string name) {
    return boost::add_vertex(TopoVertex{kind, node, index, std::move(name)}, g_);
  }
  // One physical link = two directed edges of the same rate.
  void add_link(Vertex a, Vertex b, const LinkSpec& link, double bandwidth,
                const std::string& link_class) {
    boost::add_edge(a, b, TopoEdge{bandwidth, link.latency, link_class}, g_);
    boost::add_edge(b, a, TopoEdge{bandwidth, link.latency, link_class}, g_);
  }

  NodeVertices add_node(int node, int gpus, int nics, Vertex leaf) {
    NodeVertices nv;
    nv.leaf = leaf;
    const std::string prefix = "n" + std::to_string(node) + "/";
    for (int j = 0; j < gpus; ++j)
      nv.gpus.push_back(add_vertex(VertexKind::kGpu, node, j, prefix + "gpu" + std::to_string(j)));

    const bool pcie_fabric = is_pcie_fabric(hw_.intra_node);
    if (hw_.intra_node_switched) {
      nv.fabric = add_vertex(pcie_fabric ? VertexKind::kPcieSwitch : VertexKind::kIntraSwitch, node,
                             0, prefix + (pcie_fabric ? "pcie-switch" : "nvswitch"));
      for (Vertex gpu : nv.gpus)
        add_link(gpu, nv.fabric, hw_.intra_node, hw_.intra_node.bandwidth, hw_.intra_node.name);
    } else if (gpus == 2) {
      add_link(nv.gpus[0], nv.gpus[1], hw_.intra_node, hw_.intra_node.bandwidth,
               hw_.intra_node.name);
    } else if (gpus > 2) {
      // Mesh simplification (see cluster.hpp): the ring-neighbour edges stand for the union of
      // the edge-disjoint Hamiltonian cycles NCCL builds its rings on, so each carries the GPU's
      // whole NVLink rate in each direction.
      for (int j = 0; j < gpus; ++j)
        add_link(nv.gpus[j], nv.gpus[(j + 1) % gpus], hw_.intra_node, hw_.intra_node.bandwidth,
                 hw_.intra_node.name);
    }

    for (int c = 0; c < nics; ++c)
      nv.nics.push_back(add_vertex(VertexKind::kNic, node, c, prefix + "nic" + std::to_string(c)));
    if (nics > 0) {
      if (pcie_fabric && nv.fabric != kNone) {
        // GPUs already hang off this PCIe switch with their one x16 link; the NICs join it.
        for (Vertex nic : nv.nics)
          add_link(nic, nv.fabric, hw_.pcie, hw_.pcie.bandwidth, hw_.pcie.name);
      } else {
        // P = min(gpus, nics) PCIe switches; GPU j and NIC c sit on switch j*P/gpus and
        // c*P/nics, so NIC c is "near" GPU c*gpus/nics (DGX-1: GPUs 2c, 2c+1 share a switch
        // with NIC c; DGX A100/H100: one GPU per NIC).
        const int p = std::min(gpus, nics);
        for (int s = 0; s < p; ++s)
          nv.pcie.push_back(
              add_vertex(VertexKind::kPcieSwitch, node, s, prefix + "pcie" + std::to_string(s)));
        for (int j = 0; j < gpus; ++j)
          add_link(nv.gpus[j], nv.pcie[j * p / gpus], hw_.pcie, hw_.pcie.bandwidth, hw_.pcie.name);
        for (int c = 0; c < nics; ++c)
          add_link(nv.nics[c], nv.pcie[c * p / nics], hw_.pcie, hw_.pcie.bandwidth, hw_.pcie.name);
      }
      if (leaf != kNone)
        for (Vertex nic : nv.nics)
          add_link(nic, leaf, hw_.inter_node, hw_.inter_node.bandwidth, hw_.inter_node.name);
    }
    return nv;
  }

 private:
  const HardwareSpec& hw_;
  TopologyGraph& g_;
};

// The representative nodes of a cluster (cluster.hpp) built into `graph`: their leaf switches,
// the spine when they span two leaves, and each node's GPUs, fabric, PCIe and NICs.
// Representative nodes: a ring over consecutive nodes crosses every NIC link once per channel
// and, when it spans L >= 2 leaves, every leaf uplink and downlink exactly once per channel (it
// enters and leaves each leaf's block of nodes once), for any L. Two nodes reproduce that: under
// one leaf when the cluster fits in one, else under two leaves (a hop inside a leaf loads the
// same NIC-leaf links as one that crosses the spine).
struct BuiltNodes {
  std::vector<Vertex> leaves;
  std::vector<NodeVertices> nodes;
};

BuiltNodes build_nodes(const HardwareSpec& hw, TopologyGraph& graph, int g, int nics, int nodes,
                       int built_nodes) {
  const int per_leaf_cap = std::max(1, hw.nodes_per_leaf);
  const bool spans_leaves = nodes > per_leaf_cap;
  const int built_leaves = spans_leaves ? 2 : 1;
  Builder builder(hw, graph);
  BuiltNodes out;
  if (nodes > 1) {
    for (int l = 0; l < built_leaves; ++l)
      out.leaves.push_back(
          builder.add_vertex(VertexKind::kLeafSwitch, -1, l, "leaf" + std::to_string(l)));
  }
  if (built_leaves > 1) {
    const Vertex spine = builder.add_vertex(VertexKind::kSpineSwitch, -1, 0, "spine");
    // A leaf's uplinks are sized for the NICs of a full leaf, whatever part of it a job uses.
    const double uplink =
        static_cast<double>(per_leaf_cap) * nics * hw.inter_node.bandwidth / hw.oversubscription;
    for (Vertex leaf : out.leaves) builder.add_link(leaf, spine, hw.inter_node, uplink, "spine");
  }
  for (int k = 0; k < built_nodes; ++k)
    out.nodes.push_back(
        builder.add_node(k, g, nics, nodes > 1 ? out.leaves[spans_leaves ? k : 0] : kNone));
  return out;
}

// The hops a ring is made of, each adding the links it loads to `loads`. Routes are memoised by
// (from, to): each pair implies its own filter, and most hops repeat across channels.
class RingHops {
 public:
  RingHops(const TopologyGraph& graph, const BuiltNodes& built)
      : graph_(graph), built_(built), router_(graph) {}

  // GPU -> GPU inside a node: the fabric only (an NVSwitch, a PCIe switch or the mesh edges).
  void gpu_hop(int node, int a, int b, Loads& loads) {
    const NodeVertices& nv = built_.nodes[node];
    route(
        nv.gpus[a], nv.gpus[b],
        [&] {
          router_.allow_none();
          for (Vertex v : nv.gpus) router_.allow(v);
          if (nv.fabric != kNone) router_.allow(nv.fabric);
        },
        loads);
  }

 private:
  // GPU <-> NIC inside a node: PCIe, or NVLink to the GPU next to the NIC first (NCCL's PXN),
  // never through another NIC.
  auto interior_with(const NodeVertices& nv, Vertex nic) {
    return [this, &nv, nic] {
      router_.allow_none();
      for (Vertex v : nv.gpus) router_.allow(v);
      for (Vertex v : nv.pcie) router_.allow(v);
      if (nv.fabric != kNone) router_.allow(nv.fabric);
      router_.allow(nic);
    };
  }

 public:
  // GPU j of node k to GPU j2 of node k2 through NIC c of both: out through the node's PCIe or
  // PXN path, over the network (NIC, leaf, spine), in through the peer's.
  void network_hop(int k, int j, int k2, int j2, int c, Loads& loads) {
    const NodeVertices& a = built_.nodes[k];
    const NodeVertices& b = built_.nodes[k2];
    route(a.gpus[j], a.nics[c], interior_with(a, a.nics[c]), loads);
    route(
        a.nics[c], b.nics[c],
        [&] {
          router_.allow_none();
          router_.allow(a.nics[c]);
          router_.allow(b.nics[c]);
          for (Vertex v : built_.leaves) router_.allow(v);
          for (auto [v, vend] = boost::vertices(graph_); v != vend; ++v)
            if (graph_[*v].kind == VertexKind::kSpineSwitch) router_.allow(*v);
        },
        loads);
    route(b.nics[c], b.gpus[j2], interior_with(b, b.nics[c]), loads);
  }

 private:
  template <typename Filter>
  void route(Vertex from, Vertex to, Filter&& set_filter, Loads& loads) {
    const unsigned long long key = (static_cast<unsigned long long>(from) << 32) | to;
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      Loads path;
      set_filter();
      router_.add_route(from, to, path);
      it = cache_.emplace(key, std::move(path)).first;
    }
    for (const auto& [edge, n] : it->second) loads[edge] += n;
  }

  const TopologyGraph& graph_;
  const BuiltNodes& built_;
  Router router_;
  std::unordered_map<unsigned long long, Loads> cache_;
};

}  // namespace

Topology::Topology(const HardwareSpec& hw, int gpus) {
  DDPSIM_ASSERT(gpus >= 1, "topology: gpus must be >= 1");
  DDPSIM_ASSERT(hw.gpus_per_node >= 1, "topology: gpus_per_node must be >= 1");
  const int g = std::min(gpus, hw.gpus_per_node);
  const int nodes = gpus <= hw.gpus_per_node ? 1 : gpus / hw.gpus_per_node;
  DDPSIM_ASSERT(nodes == 1 || gpus % hw.gpus_per_node == 0,
                "topology: gpus above gpus_per_node must be a multiple of it");
  DDPSIM_ASSERT(g == 1 || hw.intra_node.bandwidth > 0, "topology: intra-node rate must be > 0");
  if (nodes > 1 && hw.nics_per_node < 1)
    throw InputError(hw.name.empty() ? "hardware" : hw.name, "/hardware/inter_node/nics_per_node",
                     "an integer >= 1 when the cluster spans several nodes",
                     std::to_string(hw.nics_per_node));
  if (nodes > 1) {
    DDPSIM_ASSERT(hw.inter_node.bandwidth > 0, "topology: NIC rate must be > 0");
    DDPSIM_ASSERT(hw.pcie.bandwidth > 0, "topology: PCIe rate must be > 0");
    DDPSIM_ASSERT(hw.nodes_per_leaf >= 1, "topology: nodes_per_leaf must be >= 1");
    DDPSIM_ASSERT(hw.oversubscription >= 1, "topology: oversubscription must be >= 1");
  }
  const int nics = std::max(0, hw.nics_per_node);
  built_nodes_ = std::min(nodes, 2);
  const BuiltNodes built = build_nodes(hw, graph_, g, nics, nodes, built_nodes_);
  RingHops hops(graph_, built);

  // GPU j and NIC c belong to group j*P/g and c*P/nics (P = min(g, nics)), as in add_node; on a
  // PCIe fabric the groups are only a way to spread channels over the GPUs.
  const int groups = std::min(g, nics);
  auto gpu_group = [&](int j) { return j * groups / g; };
  auto nic_group = [&](int c) { return c * groups / nics; };
  auto first_gpu_of_group = [&](int s) { return (s * g + groups - 1) / groups; };

  bw_.gpus = gpus;
  bw_.nodes = nodes;
  bw_.gpus_per_node = g;
  bw_.intra_latency = hw.intra_tuning.latency;
  bw_.inter_latency = hw.inter_tuning.latency;

  // A ring inside one node, in GPU order. Every channel would take the same links, so the
  // channel count cancels out of channels * bandwidth / load: route one ring.
  if (g == 1) {
    bw_.intra_node_bus = hw.intra_node.bandwidth;  // nothing is crossed; report the link rate
  } else {
    Loads loads;
    for (int j = 0; j < g; ++j) hops.gpu_hop(0, j, (j + 1) % g, loads);
    bw_.intra_node_bus = bus_bandwidth(loads, 1);
  }

  // NVLS needs an NVSwitch that reduces (NVSwitch gen3, H100/H200); the tuning's
  // nvls_efficiency says whether the library may use it on this system.
  const bool nvswitch = hw.intra_node_switched && !is_pcie_fabric(hw.intra_node);
  bw_.nvls_bus =
      nvswitch && hw.intra_tuning.nvls_efficiency > 0 && g > 1 ? hw.intra_node.bandwidth : 0.0;

  if (nodes == 1) {
    bw_.channels = 1;
    bw_.ring_bus = bw_.intra_node_bus;
    bw_.inter_node_per_gpu = 0;
    return;
  }

  // Flat multi-rail ring: channel c enters each node at the GPU next to NIC c, visits the node's
  // GPUs in order and leaves from the last one through NIC c again, towards the same NIC of the
  // next node (rail-aligned, as NCCL's ring search prefers).
  bw_.channels = nics;
  {
    Loads loads;
    for (int c = 0; c < nics; ++c) {
      const int entry = first_gpu_of_group(nic_group(c));
      const int exit = (entry + g - 1) % g;
      for (int k = 0; k < built_nodes_; ++k) {
        for (int t = 0; t + 1 < g; ++t)
          hops.gpu_hop(k, (entry + t) % g, (entry + t + 1) % g, loads);
        hops.network_hop(k, exit, (k + 1) % built_nodes_, entry, c, loads);
      }
    }
    bw_.ring_bus = bus_bandwidth(loads, nics);
  }

  // Rails for hierarchical algorithms: one ring across nodes per (GPU, NIC of its group); a GPU's
  // inter-node bandwidth is the ring rate times its number of such NICs.
  {
    Loads loads;
    int rails_per_gpu = std::numeric_limits<int>::max();
    for (int j = 0; j < g; ++j) {
      int rails = 0;
      for (int c = 0; c < nics; ++c) {
        if (nic_group(c) != gpu_group(j)) continue;
        ++rails;
        for (int k = 0; k < built_nodes_; ++k)
          hops.network_hop(k, j, (k + 1) % built_nodes_, j, c, loads);
      }
      rails_per_gpu = std::min(rails_per_gpu, rails);
    }
    bw_.inter_node_per_gpu = rails_per_gpu * bus_bandwidth(loads, 1);
  }
}

int topology_shape_key(const HardwareSpec& hw, int gpus) {
  const int g = std::max(1, hw.gpus_per_node);
  if (gpus <= g) return -gpus;
  const int nodes = gpus / g;
  // Mirrors the constructor: at most two nodes are built, under one leaf or across two.
  return nodes > std::max(1, hw.nodes_per_leaf) ? 2 : 1;
}

}  // namespace ddpsim::model
