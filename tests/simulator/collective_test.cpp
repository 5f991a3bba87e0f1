// model::CollectiveOp cost formulas, each checked against a hand-computed value.
#include "simulator/collective.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "model/cluster.hpp"
#include "model/hardware_io.hpp"

namespace ddpsim::sim {
namespace {

using model::CollectiveAlgorithm;

// A machine with round numbers: efficiency 1, chosen latencies, and explicit bandwidths so the
// formulas are tested apart from the cluster graph.
model::HardwareSpec ideal() {
  model::HardwareSpec hw;
  hw.intra_tuning = {1.0, 1.0, 1.0, 0.0};
  hw.inter_tuning = {1.0, 1.0, 0.0, 0.0};
  hw.intra_node_switched = true;
  return hw;
}

model::CollectiveBandwidths one_node(int n, double b) {
  model::CollectiveBandwidths bw;
  bw.gpus = n;
  bw.nodes = 1;
  bw.gpus_per_node = n;
  bw.ring_bus = b;
  bw.intra_node_bus = b;
  bw.nvls_bus = b;
  return bw;
}

TEST(CollectiveTest, RingAllReduceBandwidthTerm) {
  // 8 GPUs, 300 GB/s, 1 GB: 2(n-1)/n * S/B = 1.75 * 1e9 / 300e9 = 5.8333 ms.
  const auto c = collective_cost(model::CollectiveOp::kAllReduce, one_node(8, 300e9), ideal(), 1e9,
                                 CollectiveAlgorithm::kRing);
  EXPECT_NEAR(c.time_s, 1.75e9 / 300e9, 1e-15);
  // algbw = S/t = 171.43 GB/s; busbw = algbw * 2(n-1)/n = 300 GB/s exactly.
  EXPECT_NEAR(c.algbw_gbytes_per_s, 1e9 / (1.75e9 / 300e9) / 1e9, 1e-9);
  EXPECT_NEAR(c.busbw_gbytes_per_s, 300.0, 1e-9);
}

TEST(CollectiveTest, RingAllReduceLatencyTerm) {
  // 2(n-1) steps of alpha: 8 GPUs, alpha = 5 us -> 14 * 5 us = 70 us for a 0-cost payload.
  auto bw = one_node(8, 1e30);
  bw.intra_latency = 5e-6;
  const auto c =
      collective_cost(model::CollectiveOp::kAllReduce, bw, ideal(), 8, CollectiveAlgorithm::kRing);
  EXPECT_NEAR(c.time_s, 70e-6, 1e-12);
}

TEST(CollectiveTest, SeedTextAllReduceIsAbout0p79Seconds) {
  // 10B parameters, bf16 gradients = 20e9 bytes; 64 GPUs, one per node, one 400 Gb/s NIC each
  // (50 GB/s). Ring: 2*63/64 * 20e9 / 50e9 = 0.7875 s -- not the seed text's "~40 ms".
  model::CollectiveBandwidths bw;
  bw.gpus = 64;
  bw.nodes = 64;
  bw.gpus_per_node = 1;
  bw.ring_bus = 50e9;
  bw.intra_node_bus = 50e9;
  bw.inter_node_per_gpu = 50e9;
  const auto c = collective_cost(model::CollectiveOp::kAllReduce, bw, ideal(), 20e9,
                                 CollectiveAlgorithm::kRing);
  EXPECT_NEAR(c.time_s, 0.7875, 1e-12);
  EXPECT_GT(c.time_s, 0.040 * 19);  // twenty times the seed's figure
}

TEST(CollectiveTest, InterNodeStepsPayTheNetworkLatency) {
  // 16 GPUs on 2 nodes: 2(n-1) = 30 steps, of which NCCL counts 2(N-1) = 2 across nodes.
  // alpha_i = 1 us, alpha_e = 10 us: 28 * 1 + 2 * 10 = 48 us.
  model::CollectiveBandwidths bw = one_node(16, 1e30);
  bw.nodes = 2;
  bw.gpus_per_node = 8;
  bw.intra_latency = 1e-6;
  bw.inter_latency = 10e-6;
  const auto c =
      collective_cost(model::CollectiveOp::kAllReduce, bw, ideal(), 1, CollectiveAlgorithm::kRing);
  EXPECT_NEAR(c.time_s, 48e-6, 1e-12);
}

TEST(CollectiveTest, ReduceScatterAndAllGatherAreHalfAnAllReduce) {
  // (n-1) alpha + (n-1)/n S/B: 4 GPUs, 100 GB/s, alpha 2 us, S = 400 MB:
  // 3 * 2 us + 0.75 * 4e8 / 1e11 = 6 us + 3 ms.
  auto bw = one_node(4, 100e9);
  bw.intra_latency = 2e-6;
  for (model::CollectiveOp c :
       {model::CollectiveOp::kReduceScatter, model::CollectiveOp::kAllGather}) {
    const auto r = collective_cost(c, bw, ideal(), 4e8, CollectiveAlgorithm::kRing);
    EXPECT_NEAR(r.time_s, 6e-6 + 3e-3, 1e-12);
    EXPECT_NEAR(r.busbw_gbytes_per_s, r.algbw_gbytes_per_s * 0.75, 1e-9);
  }
  const auto ar = collective_cost(model::CollectiveOp::kAllReduce, bw, ideal(), 4e8,
                                  CollectiveAlgorithm::kRing);
  EXPECT_NEAR(ar.time_s, 2 * (6e-6 + 3e-3), 1e-12);
}

TEST(CollectiveTest, BroadcastBusFactorIsOne) {
  // Pipelined ring broadcast: (n-1) alpha + S/B = 0 + 1e9/1e11 = 10 ms; busbw = algbw.
  const auto r = collective_cost(model::CollectiveOp::kBroadcast, one_node(8, 100e9), ideal(), 1e9,
                                 CollectiveAlgorithm::kRing);
  EXPECT_NEAR(r.time_s, 0.01, 1e-12);
  EXPECT_NEAR(r.busbw_gbytes_per_s, r.algbw_gbytes_per_s, 1e-12);
}

TEST(CollectiveTest, TreeAllReduce) {
  // 4 nodes x 8 GPUs: 2 * ((g-1) alpha_i + ceil(log2 4) alpha_e) + 2 S/B
  // = 2 * (7 * 1 us + 2 * 10 us) + 2 * 1e9 / 200e9 = 54 us + 10 ms.
  model::CollectiveBandwidths bw = one_node(32, 200e9);
  bw.nodes = 4;
  bw.gpus_per_node = 8;
  bw.intra_latency = 1e-6;
  bw.inter_latency = 10e-6;
  const auto r = collective_cost(model::CollectiveOp::kAllReduce, bw, ideal(), 1e9,
                                 CollectiveAlgorithm::kTree);
  EXPECT_NEAR(r.time_s, 54e-6 + 0.01, 1e-12);
}

TEST(CollectiveTest, HierarchicalAllReduce) {
  // 2 nodes x 8 GPUs, NVLink 300 GB/s, each GPU's rail 25 GB/s, S = 800 MB, alphas 0:
  // intra: 2 * (7/8 * 8e8 / 3e11) = 4.6667 ms; inter on S/8 = 1e8 over 2 nodes:
  // 2 * 1/2 * 1e8 / 2.5e10 = 4 ms.
  model::CollectiveBandwidths bw = one_node(16, 200e9);
  bw.nodes = 2;
  bw.gpus_per_node = 8;
  bw.intra_node_bus = 300e9;
  bw.inter_node_per_gpu = 25e9;
  const auto r = collective_cost(model::CollectiveOp::kAllReduce, bw, ideal(), 8e8,
                                 CollectiveAlgorithm::kHierarchical);
  EXPECT_NEAR(r.time_s, 2 * 0.875 * 8e8 / 3e11 + 1e8 / 2.5e10, 1e-12);
}

TEST(CollectiveTest, NvlsAllReduce) {
  // a_nvls + S / (eta B): a_nvls 6 us, eta 0.5, B 450 GB/s, 9e8 bytes -> 6 us + 4 ms.
  auto bw = one_node(8, 450e9);
  bw.intra_latency = 3e-6;
  auto hw = ideal();
  hw.intra_tuning.nvls_efficiency = 0.5;
  hw.intra_tuning.nvls_latency = 6e-6;
  const auto r =
      collective_cost(model::CollectiveOp::kAllReduce, bw, hw, 9e8, CollectiveAlgorithm::kNvls);
  EXPECT_NEAR(r.time_s, 6e-6 + 4e-3, 1e-12);
  EXPECT_EQ(r.algorithm, CollectiveAlgorithm::kNvls);
}

TEST(CollectiveTest, AutoPicksTheFastest) {
  model::CollectiveBandwidths bw = one_node(32, 200e9);
  bw.nodes = 4;
  bw.gpus_per_node = 8;
  bw.intra_node_bus = 300e9;
  bw.inter_node_per_gpu = 25e9;
  bw.intra_latency = 1e-6;
  bw.inter_latency = 10e-6;
  for (double bytes : {8.0, 1e4, 1e6, 1e8, 1e10}) {
    const auto a = collective_cost(model::CollectiveOp::kAllReduce, bw, ideal(), bytes,
                                   CollectiveAlgorithm::kAuto);
    for (auto alg : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
                     CollectiveAlgorithm::kHierarchical}) {
      EXPECT_LE(a.time_s,
                collective_cost(model::CollectiveOp::kAllReduce, bw, ideal(), bytes, alg).time_s)
          << bytes;
    }
  }
  // Small messages are latency-bound: the tree's log2 depth beats the ring's 62 steps.
  EXPECT_EQ(
      collective_cost(model::CollectiveOp::kAllReduce, bw, ideal(), 8, CollectiveAlgorithm::kAuto)
          .algorithm,
      CollectiveAlgorithm::kTree);
}

TEST(CollectiveTest, OneRankCostsNothing) {
  const auto r = collective_cost(model::CollectiveOp::kAllReduce, one_node(1, 1e9), ideal(), 1e9,
                                 CollectiveAlgorithm::kAuto);
  EXPECT_EQ(r.time_s, 0.0);
  EXPECT_EQ(r.busbw_gbytes_per_s, 0.0);
}

TEST(CollectiveTest, MoreBandwidthIsNeverSlower) {
  for (double b = 1e9; b < 1e12; b *= 1.7) {
    for (double s : {64.0, 1e6, 1e9}) {
      const auto slow = collective_cost(model::CollectiveOp::kAllReduce, one_node(8, b), ideal(), s,
                                        CollectiveAlgorithm::kAuto);
      const auto fast = collective_cost(model::CollectiveOp::kAllReduce, one_node(8, b * 1.7),
                                        ideal(), s, CollectiveAlgorithm::kAuto);
      EXPECT_LE(fast.time_s, slow.time_s);
    }
  }
}

TEST(CollectiveTest, BusFactors) {
  EXPECT_DOUBLE_EQ(model::busbw_factor(model::CollectiveOp::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(model::busbw_factor(model::CollectiveOp::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(model::busbw_factor(model::CollectiveOp::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(model::busbw_factor(model::CollectiveOp::kBroadcast, 64), 1.0);
}

// auto weighs only the algorithms NCCL has (src/enqueue.cc updateCollCostTable): Ring and
// Tree everywhere (Tree across nodes), NVLS on one node and NVLS_TREE across nodes of an
// NVSwitch that reduces. NCCL has no "hierarchical" all-reduce, so auto never returns it.
TEST(CollectiveTest, AutoPicksOnlyWhatNcclHas) {
  const nlohmann::json a100 = {{"preset", "dgx-a100"}};
  const nlohmann::json h100 = {{"preset", "dgx-h100"}};
  const model::HardwareSpec a = model::resolve_hardware(a100, "t.json", "/hardware");
  const model::HardwareSpec h = model::resolve_hardware(h100, "t.json", "/hardware");
  bool nvls_tree_seen = false;
  for (int gpus : {8, 16, 32, 128}) {
    const auto bwa = model::Topology(a, gpus).bandwidths();
    const auto bwh = model::Topology(h, gpus).bandwidths();
    for (double bytes = 1024; bytes <= 4e9; bytes *= 4) {
      const auto ca = allreduce_cost(bwa, a, bytes, CollectiveAlgorithm::kAuto).algorithm;
      EXPECT_TRUE(ca == CollectiveAlgorithm::kRing || ca == CollectiveAlgorithm::kTree)
          << "A100 x " << gpus << ", " << bytes << " B: " << model::algorithm_name(ca);
      const auto ch = allreduce_cost(bwh, h, bytes, CollectiveAlgorithm::kAuto).algorithm;
      EXPECT_NE(ch, CollectiveAlgorithm::kHierarchical);
      if (gpus <= 8) {
        EXPECT_NE(ch, CollectiveAlgorithm::kNvlsTree);  // NVLS_TREE is off on one node
        EXPECT_NE(ch, CollectiveAlgorithm::kTree);
      } else {
        EXPECT_NE(ch, CollectiveAlgorithm::kNvls);  // NVLS alone cannot reduce across nodes
      }
      nvls_tree_seen |= ch == CollectiveAlgorithm::kNvlsTree;
      // The choice is the fastest candidate: never slower than the ring.
      EXPECT_LE(allreduce_cost(bwh, h, bytes, CollectiveAlgorithm::kAuto).time_s,
                allreduce_cost(bwh, h, bytes, CollectiveAlgorithm::kRing).time_s);
    }
  }
  EXPECT_FALSE(nvls_tree_seen);  // with a NIC per GPU, Ring or Tree always beat it here
  // With 2 NICs per node the rails are scarce and in-node reduction first pays off.
  const nlohmann::json h2 = {{"preset", "dgx-h100"}, {"inter_node", {{"nics_per_node", 2}}}};
  const model::HardwareSpec hs = model::resolve_hardware(h2, "t.json", "/hardware");
  const auto bws = model::Topology(hs, 32).bandwidths();
  EXPECT_EQ(allreduce_cost(bws, hs, 64e6, CollectiveAlgorithm::kAuto).algorithm,
            CollectiveAlgorithm::kNvlsTree);
  // Asked for, NVLS across H100 nodes runs as NVLS_TREE, costed as the hierarchical form.
  const auto bw16 = model::Topology(h, 16).bandwidths();
  const auto nv = allreduce_cost(bw16, h, 256e6, CollectiveAlgorithm::kNvls);
  EXPECT_EQ(nv.algorithm, CollectiveAlgorithm::kNvlsTree);
  EXPECT_DOUBLE_EQ(nv.time_s,
                   allreduce_cost(bw16, h, 256e6, CollectiveAlgorithm::kHierarchical).time_s);
}

}  // namespace
}  // namespace ddpsim::sim
