// Link contention: max-min fair shares by hand, the fluid simulation by hand, and collectives
// expanded into flows on the cluster graph, checked against collective.hpp's formulas.
#include "simulator/collectives/network_flow.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "model/scenario/hardware_io.hpp"
#include "model/scenario/scenario.hpp"
#include "round_machine.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/collectives/link_graph.hpp"

namespace ddpsim::sim {
namespace {

TEST(MaxMinTest, TwoFlowsOnOneLinkGetHalfEach) {
  const auto r = max_min_rates({10e9}, {{0}, {0}});
  EXPECT_DOUBLE_EQ(r[0], 5e9);
  EXPECT_DOUBLE_EQ(r[1], 5e9);
}

TEST(MaxMinTest, FlowBottleneckedElsewhereLeavesTheRest) {
  // Link 0 (10) carries flows 0 and 1; flow 0 also crosses link 1 (4). Water level rises to 4,
  // where link 1 is full: flow 0 freezes at 4; flow 1 takes the remaining 10 - 4 = 6.
  const auto r = max_min_rates({10.0, 4.0}, {{0, 1}, {0}});
  EXPECT_DOUBLE_EQ(r[0], 4.0);
  EXPECT_DOUBLE_EQ(r[1], 6.0);
}

TEST(MaxMinTest, ParkingLotAndThreeLevels) {
  // Parking lot: flow 0 crosses links 0 and 1 (1 each), flows 1 and 2 one link each: every
  // link is shared by two flows, so all get 1/2.
  auto r = max_min_rates({1.0, 1.0}, {{0, 1}, {0}, {1}});
  for (double x : r) EXPECT_DOUBLE_EQ(x, 0.5);
  // Three levels: link 0 (3) has flows 0,1,2; link 1 (0.5) flow 0; link 2 (2) flows 2 and 3.
  // Round 1: shares 1, 0.5, 1 -> level 0.5, link 1 full, flow 0 = 0.5. Residuals: link 0
  // 3 - 1.5 = 1.5 over flows 1,2 (0.75 more each); link 2 2 - 1 = 1 over flows 2,3 (0.5 more).
  // Round 2: level 1.0, link 2 full: flows 2, 3 = 1.0. Link 0 has 1.5 - 0.5*2 = 0.5 left, all
  // for flow 1: 1.5.
  r = max_min_rates({3.0, 0.5, 2.0}, {{0, 1}, {0}, {0, 2}, {2}});
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 1.5);
  EXPECT_DOUBLE_EQ(r[2], 1.0);
  EXPECT_DOUBLE_EQ(r[3], 1.0);
  // Every link is at most full.
  EXPECT_LE(r[0] + r[1] + r[2], 3.0 * (1 + 1e-15));
}

TEST(MaxMinTest, EmptyPathIsUnbounded) {
  const auto r = max_min_rates({1.0}, {{}, {0}});
  EXPECT_EQ(r[0], std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(r[1], 1.0);
}

struct Recorder : FlowListener {
  std::vector<std::pair<std::uint64_t, double>> done;
  void on_flow_done(std::uint64_t tag, double at_s) override { done.emplace_back(tag, at_s); }
};

TEST(FlowSimulatorTest, RatesChangeAtArrivalsAndDepartures) {
  // 1 GB/s link. Flow A: 1 GB at t=0. Flow B: 0.25 GB at t=0.5. A alone moves 0.5 GB by 0.5;
  // then both get 0.5 GB/s: B needs 0.5 s (ends 1.0), A moves 0.25 GB meanwhile; the last
  // 0.25 GB alone takes 0.25 s: A ends at 1.25.
  FlowSimulator sim({1e9});
  const int p = sim.add_path({0});
  Recorder rec;
  sim.add_flow(p, 1e9, 0.0, &rec, 1);
  sim.add_flow(p, 0.25e9, 0.5, &rec, 2);
  sim.run_until(0.75);
  EXPECT_DOUBLE_EQ(sim.now_s(), 0.75);
  EXPECT_EQ(sim.active_flows(), 2u);
  // At 0.75: A has 0.5 - 0.125 GB left, B 0.125 GB.
  EXPECT_NEAR(sim.bytes_in_flight(), 0.5e9, 1.0);
  EXPECT_DOUBLE_EQ(sim.link_load_bytes_per_s()[0], 1e9);
  sim.run();
  ASSERT_EQ(rec.done.size(), 2u);
  EXPECT_EQ(rec.done[0].first, 2u);
  EXPECT_NEAR(rec.done[0].second, 1.0, 1e-12);
  EXPECT_EQ(rec.done[1].first, 1u);
  EXPECT_NEAR(rec.done[1].second, 1.25, 1e-12);
  EXPECT_TRUE(sim.idle());
}

TEST(FlowSimulatorTest, EmptyFlowsFinishAtTheirStart) {
  FlowSimulator sim({1.0});
  Recorder rec;
  sim.add_flow(sim.add_path({}), 5.0, 2.0, &rec, 7);
  sim.add_flow(sim.add_path({0}), 0.0, 3.0, &rec, 8);
  sim.run();
  ASSERT_EQ(rec.done.size(), 2u);
  EXPECT_DOUBLE_EQ(rec.done[0].second, 2.0);
  EXPECT_DOUBLE_EQ(rec.done[1].second, 3.0);
}

// Runs `flows` collectives, all started at t=0, alone on the network; returns the end times.
std::vector<double> run_together(const LinkGraph& g, const std::vector<CollectiveFlows>& flows) {
  NetworkSim net(g.capacity_bytes_per_s());
  std::vector<double> end(flows.size(), -1);
  for (std::size_t i = 0; i < flows.size(); ++i)
    net.start(flows[i], 0.0, [&end, i](double t) { end[i] = t; });
  net.run();
  EXPECT_TRUE(net.idle());
  EXPECT_EQ(net.running(), 0u);
  return end;
}

model::HardwareSpec hardware_preset(const std::string& name) {
  return model::resolve_hardware({{"preset", name}}, "test", "/hardware");
}

TEST(NetworkSimTest, UncontendedRingEqualsTheFormulaOnEveryPreset) {
  // With nothing else on the network the expanded ring is steps x (alpha + chunk / rate) and the
  // slowest flow's rate is min over links of bandwidth / load, so the time is collective.hpp's
  // 2(n-1) alpha + 2(n-1)/n S / (eta B) (and (n-1) steps for ReduceScatter/AllGather): the
  // alpha-beta line of the preset's constants (the flows expand that line, not NCCL's protocols).
  for (const std::string name : {"dgx-1", "dgx-a100", "dgx-h100", "hgx-h200"}) {
    model::HardwareSpec hw = hardware_preset(name);
    hw.collective_model = model::CollectiveModel::kAlphaBeta;
    for (int gpus : {2, 8, 16, 64, 1024}) {
      const model::Topology topo(hw, gpus);
      const LinkGraph g(topo, hw);
      for (model::CollectiveOp c :
           {model::CollectiveOp::kAllReduce, model::CollectiveOp::kReduceScatter,
            model::CollectiveOp::kAllGather, model::CollectiveOp::kBroadcast}) {
        const double bytes = 256e6;
        const double want =
            collective_cost(c, topo.bandwidths(), hw, bytes, model::CollectiveAlgorithm::kRing)
                .time_s;
        const double got =
            run_together(g, {ring_collective_flows(g, c, bytes, topo.bandwidths(), hw)})[0];
        EXPECT_NEAR(got, want, 1e-9 * want)
            << name << " gpus=" << gpus << " " << model::collective_op_name(c);
      }
    }
  }
}

TEST(NetworkSimTest, UncontendedHierarchicalEqualsTheFormula) {
  for (const std::string name : {"dgx-1", "dgx-a100", "dgx-h100"}) {
    const model::HardwareSpec hw = hardware_preset(name);
    for (int gpus : {16, 128}) {
      const model::Topology topo(hw, gpus);
      const LinkGraph g(topo, hw);
      const double want =
          allreduce_cost(topo.bandwidths(), hw, 1e9, model::CollectiveAlgorithm::kHierarchical)
              .time_s;
      const double got =
          run_together(g, {hierarchical_allreduce_flows(g, 1e9, topo.bandwidths(), hw)})[0];
      EXPECT_NEAR(got, want, 1e-9 * want) << name << " gpus=" << gpus;
    }
  }
}

TEST(NetworkSimTest, SmallRingByHand) {
  // Round machine, 4 GPUs on one NVSwitch (100 GB/s per GPU), alpha 10 us, eta 1: AllReduce of
  // 400 MB is 6 steps of 100 MB: 6 x (10 us + 1 ms) = 6.06 ms.
  model::HardwareSpec hw = fixtures::round_machine();
  hw.intra_tuning.latency = 10e-6;
  const model::Topology topo(hw, 4);
  const LinkGraph g(topo, hw);
  const double t = run_together(g, {ring_collective_flows(g, model::CollectiveOp::kAllReduce, 400e6,
                                                          topo.bandwidths(), hw)})[0];
  EXPECT_NEAR(t, 6.06e-3, 1e-15);
}

TEST(NetworkSimTest, TwoRingsOnOneNicTakeTwiceTheBandwidthTerm) {
  // One GPU and one 12.5 GB/s NIC per node, 4 nodes: a ring AllReduce of S = 1 GB is 6 steps
  // of 250 MB; alone each step takes alpha + 20 ms. Two such collectives at once share every
  // NIC link: 6 x (alpha + 40 ms). The latency term is unchanged.
  model::HardwareSpec hw = fixtures::round_machine();
  hw.gpus_per_node = 1;
  hw.nics_per_node = 1;
  hw.inter_tuning.latency = 5e-6;
  const model::Topology topo(hw, 4);
  const LinkGraph g(topo, hw);
  const CollectiveFlows ar =
      ring_collective_flows(g, model::CollectiveOp::kAllReduce, 1e9, topo.bandwidths(), hw);
  const double alone = run_together(g, {ar})[0];
  const std::vector<double> both = run_together(g, {ar, ar});
  const double latency = 6 * 5e-6;
  EXPECT_NEAR(alone, latency + 6 * 0.02, 1e-12);
  EXPECT_NEAR(both[0], latency + 6 * 0.04, 1e-12);
  EXPECT_NEAR(both[1], both[0], 1e-12);
  EXPECT_NEAR(both[0] - latency, 2 * (alone - latency), 1e-12);
}

TEST(NetworkSimTest, SecondCollectiveStartingLaterSharesOnlyTheOverlap) {
  // Same network, alpha 0: collective A starts at 0, B at 60 ms (A has done 3 of its 6 steps of
  // 20 ms). Steps 4-6 of A and 1-3 of B share the links: 40 ms each, A ends at 60 + 120 = 180
  // ms; B's last three steps run alone: 180 + 60 = 240 ms.
  model::HardwareSpec hw = fixtures::round_machine();
  hw.gpus_per_node = 1;
  hw.nics_per_node = 1;
  const model::Topology topo(hw, 4);
  const LinkGraph g(topo, hw);
  const CollectiveFlows ar =
      ring_collective_flows(g, model::CollectiveOp::kAllReduce, 1e9, topo.bandwidths(), hw);
  NetworkSim net(g.capacity_bytes_per_s());
  double a = -1, b = -1;
  net.start(ar, 0.0, [&](double t) { a = t; });
  net.run_until(0.06);
  net.start(ar, 0.06, [&](double t) { b = t; });
  net.run();
  EXPECT_NEAR(a, 0.18, 1e-12);
  EXPECT_NEAR(b, 0.24, 1e-12);
}

// busbw of an AllReduce run alone, alpha = 0: algbw x 2(n-1)/n. With `rails_only`, only the
// cross-node phase of the hierarchical form (a ring AllReduce of S/g on every GPU's rail).
double simulated_busbw(const model::HardwareSpec& hw, int gpus, bool rails_only) {
  const model::Topology topo(hw, gpus);
  const LinkGraph g(topo, hw);
  const double bytes = 1e9;
  CollectiveFlows f =
      ring_collective_flows(g, model::CollectiveOp::kAllReduce, bytes, topo.bandwidths(), hw);
  double s = bytes;
  int n = gpus;
  if (rails_only) {
    f = hierarchical_allreduce_flows(g, bytes, topo.bandwidths(), hw);
    EXPECT_EQ(f.phases.size(), 3u);  // ReduceScatter, rails, AllGather
    f.phases = {f.phases[1]};
    s = bytes / topo.bandwidths().gpus_per_node;
    n = topo.bandwidths().nodes;
  }
  const double t = run_together(g, {f})[0];
  return s / t * model::busbw_factor(model::CollectiveOp::kAllReduce, n);
}

TEST(NetworkSimTest, OversubscribedSpineHalvesCrossSpineBusbw) {
  // Round machine (8 GPUs and eight 12.5 GB/s NICs per node), one node per leaf so every ring
  // crosses the spine. A leaf's uplink is 8 x 12.5 / oversubscription GB/s and carries 8 ring
  // hops (one per channel of the flat ring, one per rail of the hierarchical form): 1:1 leaves
  // the NICs as the bottleneck (flat busbw 8 x 12.5 = 100 GB/s, 12.5 GB/s per rail); 2:1 gives
  // each hop 6.25 GB/s, half.
  model::HardwareSpec hw = fixtures::round_machine();
  hw.nodes_per_leaf = 1;
  for (bool rails : {false, true}) {
    hw.oversubscription = 1;
    const double full = simulated_busbw(hw, 32, rails);
    hw.oversubscription = 2;
    const double over = simulated_busbw(hw, 32, rails);
    EXPECT_NEAR(full, rails ? 12.5e9 : 100e9, 1e-9 * full);
    EXPECT_NEAR(over / full, 0.5, 1e-12) << (rails ? "rails" : "flat ring");
    // The flat ring agrees with the graph's min-cut bandwidth (cluster.hpp).
    if (!rails) {
      const model::Topology topo(hw, 32);
      EXPECT_NEAR(over, topo.bandwidths().ring_bus, 1e-9 * over);
    }
  }
}

TEST(LinkGraphTest, RoutesFollowTheClusterRules) {
  const model::HardwareSpec hw = fixtures::round_machine();
  const model::Topology topo(hw, 16);
  const LinkGraph g(topo, hw);
  // GPU to GPU inside a node: up to the NVSwitch and down.
  const std::vector<int> p = g.gpu_to_gpu(0, 0, 1);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(g.link_name(p[0]), "n0/gpu0->n0/nvswitch");
  EXPECT_EQ(g.link_name(p[1]), "n0/nvswitch->n0/gpu1");
  // Across nodes through NIC 3: GPU, PCIe switch, NIC, leaf, NIC, PCIe switch, GPU.
  const std::vector<int> q = g.gpu_to_gpu_via_nic(0, 3, 1, 3, 3);
  ASSERT_EQ(q.size(), 6u);
  EXPECT_EQ(g.link_name(q[2]), "n0/nic3->leaf0");
  EXPECT_EQ(g.link_name(q[3]), "leaf0->n1/nic3");
  EXPECT_GE(g.find_link("n0/nic3", "leaf0"), 0);
  EXPECT_EQ(g.find_link("n0/gpu0", "leaf0"), -1);
  EXPECT_EQ(g.flat_rings().size(), 8u);
  EXPECT_EQ(g.flat_rings()[0].hops.size(), 16u);
  EXPECT_EQ(g.rail_rings().size(), 8u);
  EXPECT_EQ(g.rails_per_gpu(), 1);
}

}  // namespace
}  // namespace ddpsim::sim
