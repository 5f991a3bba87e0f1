// Tests of the cluster graph and the collective bandwidths derived from it
// (model/hardware/cluster.hpp). Every expected value is derived by hand in the comment above it
// from the link rates typed in here: busbw = min over links of channels * bandwidth / ring hops
// crossing the link.
#include "model/hardware/cluster.hpp"

#include <gtest/gtest.h>

#include <boost/graph/graph_traits.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/error.hpp"
#include "model/units.hpp"

namespace ddpsim::model {
namespace {

LinkSpec link(const std::string& name, double bytes_per_s, double latency_s = 0) {
  return LinkSpec{name, bytes_per_s, latency_s};
}

// DGX A100: 8 x A100 on NVSwitch (NVLink3, 300 GB/s per GPU per direction), PCIe4 x16
// (31.5 GB/s per direction after 128b/130b), 8 x 200 Gb/s HDR compute NICs (25 GB/s each).
HardwareSpec dgx_a100() {
  HardwareSpec hw;
  hw.name = "dgx-a100";
  hw.gpus_per_node = 8;
  hw.intra_node = link("nvlink3", gbytes_per_s_to_bytes_per_s(300), 0.6e-6);
  hw.intra_node_switched = true;
  hw.pcie = link("pcie4-x16", gbytes_per_s_to_bytes_per_s(31.5), 1e-6);
  hw.inter_node = link("ib-hdr-200", gbps_to_bytes_per_s(200), 2.7e-6);
  hw.nics_per_node = 8;
  hw.oversubscription = 1.0;
  hw.nodes_per_leaf = 32;
  hw.intra_tuning.latency = 3.2e-6;
  hw.inter_tuning.latency = 14e-6;
  return hw;
}

double published_value(const std::string& id) {
  std::ifstream in(DDPSIM_PUBLISHED_JSON);
  EXPECT_TRUE(in.good()) << DDPSIM_PUBLISHED_JSON;
  const nlohmann::json rows = nlohmann::json::parse(in);
  for (const auto& row : rows)
    if (row.at("id") == id) return row.at("value").get<double>();
  ADD_FAILURE() << "row " << id << " not found";
  return 0;
}

TEST(Topology, DgxA100PairIsMultiRail) {
  // 2 nodes, 8 channels (one per NIC). Per channel each NIC link carries one ring hop out and
  // one in: 8 * 25 GB/s / 1 = 200 GB/s. NVLink: each GPU sends one hop per channel (to its ring
  // successor, or to the GPU next to the channel's NIC), load 8: 8 * 300 / 8 = 300. PCIe: the
  // GPU next to NIC c carries channel c only: 8 * 31.5 / 1 = 252. Minimum: 200 GB/s.
  const Topology topo(dgx_a100(), 16);
  const CollectiveBandwidths& b = topo.bandwidths();
  EXPECT_EQ(b.nodes, 2);
  EXPECT_EQ(b.gpus, 16);
  EXPECT_EQ(b.gpus_per_node, 8);
  EXPECT_EQ(b.channels, 8);
  EXPECT_DOUBLE_EQ(topo.ring_bus_bandwidth(), 200e9);
  EXPECT_DOUBLE_EQ(b.intra_node_bus, 300e9);
  // Rails: GPU j's ring across nodes uses NIC j alone: 25 GB/s per GPU = 8 * 25 / 8.
  EXPECT_DOUBLE_EQ(b.inter_node_per_gpu, 25e9);
  // A100's NVSwitch cannot reduce (tuning nvls_efficiency 0 by default).
  EXPECT_DOUBLE_EQ(b.nvls_bus, 0.0);
  EXPECT_DOUBLE_EQ(b.intra_latency, 3.2e-6);
  EXPECT_DOUBLE_EQ(b.inter_latency, 14e-6);
  // NCCL reaches 192 GB/s on DGX A100 pairs (row nccl-dgxa100-multinode): 96 % of the graph's
  // bound, not 192/25 = 7.7x "the bandwidth of one NIC".
  EXPECT_NEAR(published_value("nccl-dgxa100-multinode") / (b.ring_bus / 1e9), 0.96, 1e-12);
}

TEST(Topology, OneNodeUsesTheFabric) {
  // One DGX A100: a ring 0->1->...->7->0 over the NVSwitch loads each GPU's up and down link
  // once: 300 GB/s. Nothing crosses the network.
  const Topology topo(dgx_a100(), 8);
  EXPECT_EQ(topo.nodes(), 1);
  EXPECT_EQ(topo.bandwidths().channels, 1);
  EXPECT_DOUBLE_EQ(topo.ring_bus_bandwidth(), 300e9);
  EXPECT_DOUBLE_EQ(topo.bandwidths().intra_node_bus, 300e9);
  EXPECT_DOUBLE_EQ(topo.bandwidths().inter_node_per_gpu, 0.0);
}

TEST(Topology, PartOfOneNode) {
  // 4 GPUs of a DGX A100: still one NVSwitch hop each way per GPU: 300 GB/s.
  const Topology topo(dgx_a100(), 4);
  EXPECT_EQ(topo.nodes(), 1);
  EXPECT_EQ(topo.bandwidths().gpus_per_node, 4);
  EXPECT_DOUBLE_EQ(topo.ring_bus_bandwidth(), 300e9);
  // A single GPU crosses nothing; the fabric rate is reported.
  const Topology one(dgx_a100(), 1);
  EXPECT_DOUBLE_EQ(one.ring_bus_bandwidth(), 300e9);
}

TEST(Topology, SingleNicIsTheBottleneck) {
  // 4 nodes x 8 V100-class GPUs with one 100 Gb/s NIC each (row nccl-1nic-100g): 1 channel,
  // NIC links load 1: 1 * 12.5 GB/s / 1 = 12.5 GB/s. NCCL measured 12.2 GB/s.
  HardwareSpec hw = dgx_a100();
  hw.nics_per_node = 1;
  hw.inter_node = link("eth-100g", gbps_to_bytes_per_s(100));
  const Topology topo(hw, 32);
  EXPECT_EQ(topo.bandwidths().channels, 1);
  EXPECT_DOUBLE_EQ(topo.ring_bus_bandwidth(), 12.5e9);
  EXPECT_NEAR(published_value("nccl-1nic-100g") / 12.5, 0.976, 1e-12);
  // Rails: all 8 GPUs share the NIC: 12.5 / 8 = 1.5625 GB/s each.
  EXPECT_DOUBLE_EQ(topo.bandwidths().inter_node_per_gpu, 12.5e9 / 8);
}

TEST(Topology, OneGpuPerNode) {
  // 64 nodes x 1 GPU, one 400 Gb/s NIC each (50 GB/s) behind PCIe5 x16 (63 GB/s): the ring goes
  // GPU -> PCIe -> NIC -> leaf (-> spine) -> NIC -> PCIe -> GPU, every link load 1: 50 GB/s.
  HardwareSpec hw = dgx_a100();
  hw.gpus_per_node = 1;
  hw.nics_per_node = 1;
  hw.inter_node = link("ib-ndr-400", gbps_to_bytes_per_s(400));
  hw.pcie = link("pcie5-x16", gbytes_per_s_to_bytes_per_s(63.0));
  const Topology topo(hw, 64);
  EXPECT_EQ(topo.nodes(), 64);
  EXPECT_DOUBLE_EQ(topo.ring_bus_bandwidth(), 50e9);
  EXPECT_DOUBLE_EQ(topo.bandwidths().inter_node_per_gpu, 50e9);
  // Behind PCIe4 (31.5 GB/s) the GPU's own PCIe link binds instead: 31.5 GB/s.
  hw.pcie = link("pcie4-x16", gbytes_per_s_to_bytes_per_s(31.5));
  EXPECT_DOUBLE_EQ(Topology(hw, 64).ring_bus_bandwidth(), 31.5e9);
}

TEST(Topology, OversubscribedSpineLowersRingBandwidth) {
  // 1 node per leaf, 4:1: a leaf's uplink is 1 node * 8 NICs * 25 GB/s / 4 = 50 GB/s. With 4
  // nodes on 4 leaves every ring hop between nodes crosses the spine; per channel each uplink
  // carries 1 hop, 8 channels: 8 * 50 / 8 = 50 GB/s (instead of 200).
  HardwareSpec hw = dgx_a100();
  hw.nodes_per_leaf = 1;
  hw.oversubscription = 4.0;
  const Topology topo(hw, 32);
  EXPECT_DOUBLE_EQ(topo.ring_bus_bandwidth(), 50e9);
  // Rails: 8 rings (one per GPU) cross each uplink: 50 / 8 = 6.25 GB/s per GPU.
  EXPECT_DOUBLE_EQ(topo.bandwidths().inter_node_per_gpu, 6.25e9);
  // Non-blocking spine: back to the NIC bound, 200 GB/s.
  hw.oversubscription = 1.0;
  EXPECT_DOUBLE_EQ(Topology(hw, 32).ring_bus_bandwidth(), 200e9);
  // 32 nodes per leaf at 4:1: uplink 32 * 200 / 4 = 1600 GB/s; a ring crosses it once per
  // channel, so 8 * 1600 / 8 = 1600 >= 200: rings do not feel this oversubscription.
  hw.nodes_per_leaf = 32;
  hw.oversubscription = 4.0;
  EXPECT_DOUBLE_EQ(Topology(hw, 64 * 8).ring_bus_bandwidth(), 200e9);
}

TEST(Topology, RepresentativeNodesDoNotChangeLoads) {
  // 2 nodes per leaf, 8:1: uplink = 2 * 8 * 25 / 8 = 50 GB/s, crossed once per channel as soon
  // as the ring spans two leaves (> 2 nodes), whatever the number of leaves: 50 GB/s.
  HardwareSpec hw = dgx_a100();
  hw.nodes_per_leaf = 2;
  hw.oversubscription = 8.0;
  EXPECT_DOUBLE_EQ(Topology(hw, 2 * 8).ring_bus_bandwidth(), 200e9);  // one leaf
  for (int nodes : {3, 4, 5, 7, 64, 1000}) {
    const Topology topo(hw, nodes * 8);
    EXPECT_DOUBLE_EQ(topo.ring_bus_bandwidth(), 50e9) << nodes << " nodes";
    EXPECT_EQ(topo.nodes(), nodes);
    EXPECT_LE(topo.built_nodes(), 2);
  }
}

TEST(Topology, MillionGpusBuildFast) {
  // 125,000 DGX A100 nodes: 2 nodes are built, so construction stays far below 1 ms in an
  // optimised build (the bound is only asserted there; sanitizers and -O0 are ~100x slower).
  const HardwareSpec hw = dgx_a100();
  const int reps = 20;
  const auto t0 = std::chrono::steady_clock::now();
  double bus = 0;
  for (int i = 0; i < reps; ++i) bus = Topology(hw, 1'000'000).ring_bus_bandwidth();
  const double each_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  EXPECT_DOUBLE_EQ(bus, 200e9);
  RecordProperty("topology_build_us_1e6_gpus", std::to_string(each_s * 1e6));
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  EXPECT_LT(each_s, 1e-3);
#endif
  const Topology topo(hw, 1'000'000);
  EXPECT_EQ(topo.nodes(), 125'000);
  EXPECT_EQ(topo.built_nodes(), 2);
}

TEST(Topology, HybridCubeMeshDgx1) {
  // DGX-1: 8 V100, NVLink2 150 GB/s per GPU per direction over a mesh (no switch), PCIe3 x16
  // 15.75 GB/s, 4 x 100 Gb/s EDR (12.5 GB/s) with GPUs 2c, 2c+1 next to NIC c.
  HardwareSpec hw = dgx_a100();
  hw.name = "dgx-1";
  hw.intra_node = link("nvlink2", gbytes_per_s_to_bytes_per_s(150));
  hw.intra_node_switched = false;
  hw.pcie = link("pcie3-x16", gbytes_per_s_to_bytes_per_s(15.75));
  hw.inter_node = link("ib-edr-100", gbps_to_bytes_per_s(100));
  hw.nics_per_node = 4;
  // One node: ring-neighbour edges carry 150 GB/s, each loaded once: 150 GB/s.
  EXPECT_DOUBLE_EQ(Topology(hw, 8).ring_bus_bandwidth(), 150e9);
  // Two nodes, 4 channels: NIC links 4 * 12.5 / 1 = 50; the GPU next to NIC c carries channel
  // c's exit and entry over PCIe: 4 * 15.75 / 1 = 63; mesh edges load 4: 150. Minimum 50 GB/s,
  // of which NCCL reaches 48 (row nccl-dgx1-multinode).
  const Topology two(hw, 16);
  EXPECT_EQ(two.bandwidths().channels, 4);
  EXPECT_DOUBLE_EQ(two.ring_bus_bandwidth(), 50e9);
  // Rails: 2 GPUs share each NIC: 12.5 / 2 = 6.25 GB/s per GPU.
  EXPECT_DOUBLE_EQ(two.bandwidths().inter_node_per_gpu, 6.25e9);
  EXPECT_NEAR(published_value("nccl-dgx1-multinode") / 50.0, 0.96, 1e-12);
}

TEST(Topology, PcieFabric) {
  // 8 GPUs on one PCIe4 switch (31.5 GB/s per GPU), 2 nodes with one 100 Gb/s NIC each.
  HardwareSpec hw = dgx_a100();
  hw.intra_node = link("pcie4-x16", gbytes_per_s_to_bytes_per_s(31.5));
  hw.intra_node.kind = "pcie";
  hw.nics_per_node = 1;
  hw.inter_node = link("eth-100g", gbps_to_bytes_per_s(100));
  // In one node: each GPU's x16 link carries one hop each way: 31.5 GB/s.
  EXPECT_DOUBLE_EQ(Topology(hw, 8).ring_bus_bandwidth(), 31.5e9);
  // Across two: the NIC (12.5 GB/s, load 1) binds.
  const Topology two(hw, 16);
  EXPECT_DOUBLE_EQ(two.ring_bus_bandwidth(), 12.5e9);
  EXPECT_DOUBLE_EQ(two.bandwidths().nvls_bus, 0.0);
  bool has_pcie_fabric = false;
  for (auto [v, end] = boost::vertices(two.graph()); v != end; ++v)
    if (two.graph()[*v].kind == VertexKind::kPcieSwitch && two.graph()[*v].name == "n0/pcie-switch")
      has_pcie_fabric = true;
  EXPECT_TRUE(has_pcie_fabric);
}

TEST(Topology, NvlsOnlyWhereTheSwitchReduces) {
  // H100: NVSwitch gen3 reduces in the switch; with nvls_efficiency > 0 the NVLS bandwidth is
  // the per-GPU NVLink4 rate, 450 GB/s. Across 2 nodes of 8 x 400G NICs: 8 * 50 = 400 GB/s.
  HardwareSpec hw = dgx_a100();
  hw.intra_node = link("nvlink4", gbytes_per_s_to_bytes_per_s(450));
  hw.inter_node = link("ib-ndr-400", gbps_to_bytes_per_s(400));
  hw.pcie = link("pcie5-x16", gbytes_per_s_to_bytes_per_s(63.0));
  hw.intra_tuning.nvls_efficiency = 0.55;
  const Topology topo(hw, 16);
  EXPECT_DOUBLE_EQ(topo.bandwidths().nvls_bus, 450e9);
  EXPECT_DOUBLE_EQ(topo.ring_bus_bandwidth(), 400e9);
  EXPECT_DOUBLE_EQ(topo.bandwidths().intra_node_bus, 450e9);
}

TEST(Topology, EveryLinkIsTwoDirectedEdges) {
  HardwareSpec hw = dgx_a100();
  hw.nodes_per_leaf = 1;
  const Topology topo(hw, 64);
  const TopologyGraph& g = topo.graph();
  EXPECT_EQ(topo.built_nodes(), 2);
  int edges = 0;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    ++edges;
    const auto [back, found] = boost::edge(boost::target(*e, g), boost::source(*e, g), g);
    ASSERT_TRUE(found) << g[boost::source(*e, g)].name << " -> " << g[boost::target(*e, g)].name;
    EXPECT_EQ(g[back].bandwidth, g[*e].bandwidth);
    EXPECT_EQ(g[back].link_class, g[*e].link_class);
  }
  // Per node: 8 NVSwitch + 8 GPU-PCIe + 8 NIC-PCIe + 8 NIC-leaf links; plus 2 leaf-spine links.
  EXPECT_EQ(edges, 2 * (2 * 32 + 2));
}

TEST(Topology, SeveralNodesNeedANic) {
  HardwareSpec hw = dgx_a100();
  hw.nics_per_node = 0;
  EXPECT_NO_THROW(Topology(hw, 8));
  EXPECT_THROW(Topology(hw, 16), InputError);
}

}  // namespace
}  // namespace ddpsim::model
