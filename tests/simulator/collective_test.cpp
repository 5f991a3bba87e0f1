// model::CollectiveOp cost formulas, each checked against a hand-computed value.
#include "simulator/collectives/collective.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "model/hardware/cluster.hpp"
#include "model/scenario/hardware_io.hpp"
#include "simulator/collectives/nccl_tuning.hpp"

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

model::HardwareSpec preset(const std::string& name, const nlohmann::json& extra = {}) {
  nlohmann::json section = {{"preset", name}};
  if (!extra.is_null()) section.update(extra);
  return model::resolve_hardware(section, "t.json", "/hardware");
}

CollectiveCost cost(model::CollectiveOp op, const model::HardwareSpec& hw, int gpus, double bytes,
                    CollectiveAlgorithm a = CollectiveAlgorithm::kAuto,
                    model::CollectiveProtocol p = model::CollectiveProtocol::kAuto) {
  return collective_cost(op, model::Topology(hw, gpus).bandwidths(), hw, bytes, a, p);
}

// NCCL's own estimate of the call it chooses (nccl_tuning.hpp NcclPlan::tuner_time_s, on the
// channels that run), us: what the formula tests below derive by hand. collective_cost returns the
// kernel's time (nccl_pipeline.hpp), which adds what the estimate leaves out.
double tuner_us(model::CollectiveOp op, const model::HardwareSpec& hw, int gpus, double bytes,
                CollectiveAlgorithm a = CollectiveAlgorithm::kAuto,
                model::CollectiveProtocol p = model::CollectiveProtocol::kAuto) {
  if (a == CollectiveAlgorithm::kNvls && gpus > hw.gpus_per_node)
    a = CollectiveAlgorithm::kNvlsTree;
  const auto plan = nccl_plan(op, model::Topology(hw, gpus).bandwidths(), hw, bytes, a, p);
  return plan ? plan->tuner_time_s * 1e6 : -1;
}

constexpr auto kAllReduce = model::CollectiveOp::kAllReduce;
constexpr double kGiB = 1073741824.0;
constexpr double kMiB = 1048576.0;

// NCCL's tuning model (NVIDIA/nccl 2.30.7 src/graph/tuning.cc) on a DGX A100, 8 GPUs, 1 GiB, Ring
// Simple. Topology search (search.cc): 240 GB/s of NVLink per GPU as NCCL counts it (12 links x
// SM80_NVLINK_BW 20); the first speed <= 240 is 40 GB/s: 6 channels; channels of >= 25 GB/s are
// split (ncclTopoDupChannels): 12 channels x 20 GB/s, busBw 240. Algorithm bandwidth 240 * n /
// nsteps = 240 * 8/14 = 137.142857 GB/s. Latency: base 8.4 + 14 steps x NVLink Ring Simple 3.4 =
// 56 us. t = 56 + 2^30 / (1000 * 137.142857) us = 56 + 7829.3675 = 7885.3675 us.
TEST(CollectiveTest, RingSimpleAllReduceIsNcclsFormula) {
  const auto c = cost(kAllReduce, preset("dgx-a100"), 8, kGiB, CollectiveAlgorithm::kRing,
                      model::CollectiveProtocol::kSimple);
  EXPECT_EQ(c.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_EQ(c.protocol, model::CollectiveProtocol::kSimple);
  EXPECT_EQ(c.channels, 24);  // connect.cc:460 runs twice the search's 12
  EXPECT_NEAR(tuner_us(kAllReduce, preset("dgx-a100"), 8, kGiB, CollectiveAlgorithm::kRing,
                       model::CollectiveProtocol::kSimple),
              56.0 + kGiB / (1000.0 * 240.0 * 8.0 / 14.0), 1e-6);
  // The kernel: 24 channels of 44.7 MB, 2 full loops of 8 x 2 MiB and a last of 11.9 MB / 8 per
  // primitive, 14 steps of two slices each paying the preset's 7 us: 84 slices x 7 us = 588 us
  // beyond the estimate's bandwidth term, 8.4 us of base instead of 56 us of latency.
  EXPECT_NEAR(c.time_s * 1e6 - (8.4 + kGiB / (1000.0 * 240.0 * 8.0 / 14.0)), 84 * 7.0, 1e-6);
  // busbw = algbw * 2(n-1)/n; at 1 GiB it approaches the 240 GB/s busBw.
  EXPECT_NEAR(c.busbw_gbytes_per_s, c.algbw_gbytes_per_s * 1.75, 1e-9);
  EXPECT_NEAR(c.algbw_gbytes_per_s, kGiB / c.time_s / 1e9, 1e-9);
}

// Ring LL at 1 KiB on the same node: busBw min(llMaxBw[Ampere][1 node] 87.7, 240 * 0.5) = 87.7,
// algorithm bandwidth 87.7 * 8/14 = 50.1143 GB/s; latency 6.6 + 14 x 0.6 = 15 us. enqueue.cc keeps
// channels while bytes >= nc * 512 threads * (8 * nRanks = 64 bytes per thread): 1 KiB runs on 1
// of the 24 channels, so its bandwidth is 50.1143 / 24. t = 15 + 1024 * 24 / 50114.29 us = 15.4904.
TEST(CollectiveTest, RingLLAtOneKiBRunsOnOneChannel) {
  const auto c = cost(kAllReduce, preset("dgx-a100"), 8, 1024);
  EXPECT_EQ(c.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_EQ(c.protocol, model::CollectiveProtocol::kLL);
  EXPECT_EQ(c.channels, 1);
  EXPECT_NEAR(c.time_s * 1e6, 15.0 + 1024.0 * 24 / (1000.0 * 87.7 * 8 / 14), 1e-6);
}

// The channel cut (enqueue.cc:2093-2096): Ring LL on 8 A100s keeps nc channels while bytes >=
// nc * 512 * 64 = nc * 32 KiB, so 64 KiB runs on 2, 512 KiB on 16 and 1 MiB on all 24.
TEST(CollectiveTest, SmallMessagesRunOnFewerChannels) {
  const auto a100 = preset("dgx-a100");
  EXPECT_EQ(cost(kAllReduce, a100, 8, 65536).channels, 2);
  EXPECT_EQ(cost(kAllReduce, a100, 8, 524288).channels, 16);
  EXPECT_EQ(cost(kAllReduce, a100, 8, 1048576).channels, 24);
  // Fewer channels cost time: 64 KiB on 2 channels is slower than on all 24 would be.
  const auto c = cost(kAllReduce, a100, 8, 65536);
  EXPECT_GT(c.time_s * 1e6, 15.0 + 65536.0 / (1000.0 * 87.7 * 8 / 14));
}

// NCCL's protocol switch points on 8 A100s (LL's 15 us vs LL128's 40.6 us and Simple's 56 us of
// latency, against bandwidths 50.1, 126.2 and 137.1 GB/s): LL up to 2 MiB, LL128 from 4 to 16
// MiB, Simple from 32 MiB.
TEST(CollectiveTest, ProtocolSwitchesFromLLToLL128ToSimple) {
  const auto a100 = preset("dgx-a100");
  using P = model::CollectiveProtocol;
  for (double b : {1024.0, 65536.0, 2097152.0})
    EXPECT_EQ(cost(kAllReduce, a100, 8, b).protocol, P::kLL);
  for (double b : {4194304.0, 16777216.0})
    EXPECT_EQ(cost(kAllReduce, a100, 8, b).protocol, P::kLL128);
  for (double b : {33554432.0, kGiB}) EXPECT_EQ(cost(kAllReduce, a100, 8, b).protocol, P::kSimple);
}

// NVLS on 8 H100s (tuning.cc:307-323): the NVLS graph has one head per GPU, 8 channels of 40 GB/s
// (8 x 40 <= 8 x 20.6 x 18 / 8 ... 370.8 GB/s), bwInter raised to 60; bw per channel = min(40 x
// nvlsEfficiency 0.85 x 7/8 x 2, 60) = 59.5, busBw 476, algorithm bandwidth 476 x 8/14 = 272;
// latency hwLat[NVLINK][NVLS][Simple] = 25 us. t(1 GiB) = 25 + 2^30 / 272000 us = 3972.58 us.
TEST(CollectiveTest, NvlsAllReduceIsNcclsFormula) {
  const auto c = cost(kAllReduce, preset("dgx-h100"), 8, kGiB);
  EXPECT_EQ(c.algorithm, CollectiveAlgorithm::kNvls);
  EXPECT_EQ(c.protocol, model::CollectiveProtocol::kSimple);
  EXPECT_EQ(c.channels, 16);  // nvls.cc NVLS_NCHANNELS_SM90
  EXPECT_NEAR(tuner_us(kAllReduce, preset("dgx-h100"), 8, kGiB),
              25.0 + kGiB / (1000.0 * 476.0 * 8 / 14), 1e-6);
}

// Two DGX A100 nodes, 8 GiB, Ring Simple: each channel crosses one 25 GB/s HDR NIC and the search's
// inter-node speeds stop at 24 GB/s: 8 channels x 24 = 192 GB/s busBw (row nccl-dgxa100-multinode
// measures 192), algorithm bandwidth 192 x 16/30 = 102.4. Latency: 8.4 + 28 intra steps x max(3.4,
// 3 x net overhead 2.0: a DGX A100's hosts are AMD EPYC) + 2 x NET Ring Simple 14 = 204.4 us,
// x 1.4 (tuning.cc:647-650) = 286.16 us.
TEST(CollectiveTest, TwoNodeRingUsesEveryNic) {
  const auto c = cost(kAllReduce, preset("dgx-a100"), 16, 8 * kGiB, CollectiveAlgorithm::kRing);
  EXPECT_EQ(c.channels, 16);
  EXPECT_NEAR(tuner_us(kAllReduce, preset("dgx-a100"), 16, 8 * kGiB, CollectiveAlgorithm::kRing),
              204.4 * 1.4 + 8 * kGiB / (1000.0 * 192.0 * 16 / 30), 1e-6);
  // The kernel: across nodes each 1 MiB slice's NIC transfer (87 us at 12 GB/s per channel)
  // hides its 7 us sync, and each step's hop (<= 14 us) hides behind the other slice: 8.4 us of
  // base + the bandwidth term alone, busbw 2 x 15/16 x 8 GiB / (8.4 us + 83,886 us) = 191.98 (the
  // estimate's 286 us of step latencies would give 191.3; the row measures 192).
  EXPECT_NEAR(c.busbw_gbytes_per_s, 191.98, 0.01);
}

TEST(CollectiveTest, SeedTextAllReduceIsAbout0p8Seconds) {
  // 10B parameters, bf16 gradients = 20e9 bytes; 64 nodes of one H100 with one 400 Gb/s NIC
  // (50 GB/s). NCCL's search runs one channel of 48 GB/s: 2*63/64 * 20e9 / 48e9 = 0.8203 s, plus
  // 126 network steps of 14 us (one GPU per node: the Tree's NET latency), 8.4 us base, x 1.4:
  // 2.48 ms -- not the seed text's "~40 ms".
  const auto hw =
      preset("dgx-h100", {{"gpus_per_node", 1}, {"inter_node", {{"nics_per_node", 1}}}});
  const auto c = cost(kAllReduce, hw, 64, 20e9, CollectiveAlgorithm::kRing);
  EXPECT_NEAR(tuner_us(kAllReduce, hw, 64, 20e9, CollectiveAlgorithm::kRing) * 1e-6,
              1.4 * (8.4 + 126 * 14.0) * 1e-6 + 2.0 * 63 / 64 * 20e9 / 48e9, 1e-9);
  EXPECT_GT(c.time_s, 0.040 * 19);  // twenty times the seed's figure
}

TEST(CollectiveTest, ReduceScatterAndAllGatherBusBandwidth) {
  // Ring ReduceScatter / AllGather: n-1 steps, algorithm bandwidth busBw * n/(n-1), so nccl-tests'
  // busbw (algbw * (n-1)/n) tends to the same 240 GB/s as the all-reduce's on 8 A100s.
  const auto a100 = preset("dgx-a100");
  for (model::CollectiveOp c :
       {model::CollectiveOp::kReduceScatter, model::CollectiveOp::kAllGather}) {
    const auto r =
        cost(c, a100, 8, kGiB, CollectiveAlgorithm::kRing, model::CollectiveProtocol::kSimple);
    // Latency 8.4 + 7 x 3.4 = 32.2 us.
    EXPECT_NEAR(
        tuner_us(c, a100, 8, kGiB, CollectiveAlgorithm::kRing, model::CollectiveProtocol::kSimple),
        32.2 + kGiB / (1000.0 * 240.0 * 8 / 7), 1e-6);
    EXPECT_NEAR(r.busbw_gbytes_per_s, r.algbw_gbytes_per_s * 0.875, 1e-9);
  }
}

TEST(CollectiveTest, BroadcastBusFactorIsOne) {
  // Ring broadcast: nsteps = n, ratio n/n = 1; latency 8.4 + one NVLink Ring Simple 3.4 (rings
  // with the same channels, tuning.cc:396-397) = 11.8 us; busbw = algbw.
  const auto r = cost(model::CollectiveOp::kBroadcast, preset("dgx-a100"), 8, kGiB,
                      CollectiveAlgorithm::kAuto, model::CollectiveProtocol::kSimple);
  EXPECT_EQ(r.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_NEAR(tuner_us(model::CollectiveOp::kBroadcast, preset("dgx-a100"), 8, kGiB,
                       CollectiveAlgorithm::kAuto, model::CollectiveProtocol::kSimple),
              11.8 + kGiB / (1000.0 * 240.0), 1e-6);
  EXPECT_NEAR(r.busbw_gbytes_per_s, r.algbw_gbytes_per_s, 1e-12);
}

TEST(CollectiveTest, TreeAllReduceAcrossNodes) {
  // 4 DGX A100 nodes, 1 GiB, Tree Simple: busBw min(8 ch x 24 x 0.92, 8 x perChMaxTreeBw[Ampere]
  // [>2 nodes] 17.8) = 142.4, stored x 0.5 = 71.2 GB/s, x treeCorrectionFactor[Simple][log2(2^30 /
  // 64) = 24 -> out of the table] 1. Latency 8.4 + 2 x (7 x 4.0 + log2(4) x 14) = 120.4 us.
  const auto r = cost(kAllReduce, preset("dgx-a100"), 32, kGiB, CollectiveAlgorithm::kTree,
                      model::CollectiveProtocol::kSimple);
  EXPECT_EQ(r.algorithm, CollectiveAlgorithm::kTree);
  EXPECT_NEAR(tuner_us(kAllReduce, preset("dgx-a100"), 32, kGiB, CollectiveAlgorithm::kTree,
                       model::CollectiveProtocol::kSimple),
              120.4 + kGiB / (1000.0 * 71.2), 1e-6);
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

TEST(CollectiveTest, AutoPicksTheFastest) {
  const auto a100 = preset("dgx-a100");
  for (int gpus : {2, 4, 8, 32}) {
    for (double bytes : {8.0, 1e4, 1e6, 1e8, 1e10}) {
      const auto a = cost(kAllReduce, a100, gpus, bytes);
      for (auto alg : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree}) {
        for (auto p : {model::CollectiveProtocol::kLL, model::CollectiveProtocol::kLL128,
                       model::CollectiveProtocol::kSimple}) {
          // NCCL compares its own estimate on all channels (the kernel's time may then rank the
          // choices differently: NCCL runs what its estimate picks).
          const auto bw = model::Topology(a100, gpus).bandwidths();
          const auto mine = nccl_plan(kAllReduce, bw, a100, bytes, CollectiveAlgorithm::kAuto,
                                      model::CollectiveProtocol::kAuto);
          const auto other = nccl_plan(kAllReduce, bw, a100, bytes, alg, p);
          if (other) {
            EXPECT_LE(mine->model_time_s, other->model_time_s) << gpus << " " << bytes;
          }
          EXPECT_EQ(a.protocol, mine->protocol);
        }
      }
    }
  }
}

TEST(CollectiveTest, OneRankCostsNothing) {
  const auto r = collective_cost(model::CollectiveOp::kAllReduce, one_node(1, 1e9), ideal(), 1e9,
                                 CollectiveAlgorithm::kAuto);
  EXPECT_EQ(r.time_s, 0.0);
  EXPECT_EQ(r.busbw_gbytes_per_s, 0.0);
}

// With every channel running. (A small message can be slower on a faster fabric: NCCL's search
// then builds more, slimmer channels, of which the call runs only as many as its size allows.)
TEST(CollectiveTest, MoreBandwidthIsNeverSlower) {
  for (double b = 1e9; b < 1e12; b *= 1.7) {
    for (double s : {1e8, 1e9}) {
      const auto slow =
          collective_cost(kAllReduce, one_node(8, b), ideal(), s, CollectiveAlgorithm::kRing);
      const auto fast =
          collective_cost(kAllReduce, one_node(8, b * 1.7), ideal(), s, CollectiveAlgorithm::kRing);
      EXPECT_LE(fast.time_s, slow.time_s) << b << " " << s;
    }
  }
}

TEST(CollectiveTest, BusFactors) {
  EXPECT_DOUBLE_EQ(model::busbw_factor(model::CollectiveOp::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(model::busbw_factor(model::CollectiveOp::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(model::busbw_factor(model::CollectiveOp::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(model::busbw_factor(model::CollectiveOp::kBroadcast, 64), 1.0);
}

// auto weighs only the algorithms NCCL has (src/enqueue.cc updateCollCostTable, tuning.cc:498-512):
// Ring and Tree everywhere, NVLS on one node and NVLS_TREE across nodes of an NVSwitch that
// reduces (Hopper). NCCL has no "hierarchical" all-reduce, so auto never returns it.
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
      } else {
        EXPECT_NE(ch, CollectiveAlgorithm::kNvls);  // NVLS alone cannot reduce across nodes
      }
      nvls_tree_seen |= ch == CollectiveAlgorithm::kNvlsTree;
      // The choice is the fastest candidate by NCCL's estimate: never slower than the ring's.
      const auto mine = nccl_plan(model::CollectiveOp::kAllReduce, bwh, h, bytes,
                                  CollectiveAlgorithm::kAuto, model::CollectiveProtocol::kAuto);
      const auto ring = nccl_plan(model::CollectiveOp::kAllReduce, bwh, h, bytes,
                                  CollectiveAlgorithm::kRing, model::CollectiveProtocol::kAuto);
      EXPECT_LE(mine->model_time_s, ring->model_time_s);
    }
  }
  // Across H100 nodes NCCL's model prefers NVLS_TREE for large messages (tuning.cc:320-322:
  // per-channel min(NVLS in-node rate, 2 x NIC channel on 2 nodes, perChMaxNVLSTreeBw 57.7)).
  EXPECT_TRUE(nvls_tree_seen);
  // With 2 NICs per node the rails are scarce and in-node reduction first pays off.
  const nlohmann::json h2 = {{"preset", "dgx-h100"}, {"inter_node", {{"nics_per_node", 2}}}};
  const model::HardwareSpec hs = model::resolve_hardware(h2, "t.json", "/hardware");
  const auto bws = model::Topology(hs, 32).bandwidths();
  EXPECT_EQ(allreduce_cost(bws, hs, 64e6, CollectiveAlgorithm::kAuto).algorithm,
            CollectiveAlgorithm::kNvlsTree);
  // Asked for, NVLS across H100 nodes runs as NVLS_TREE; NVLS on an A100 runs as the ring.
  const auto bw16 = model::Topology(h, 16).bandwidths();
  const auto nv = allreduce_cost(bw16, h, 256e6, CollectiveAlgorithm::kNvls);
  EXPECT_EQ(nv.algorithm, CollectiveAlgorithm::kNvlsTree);
  EXPECT_DOUBLE_EQ(nv.time_s,
                   allreduce_cost(bw16, h, 256e6, CollectiveAlgorithm::kNvlsTree).time_s);
  const auto bwa8 = model::Topology(a, 8).bandwidths();
  EXPECT_EQ(allreduce_cost(bwa8, a, 256e6, CollectiveAlgorithm::kNvls).algorithm,
            CollectiveAlgorithm::kRing);
}

// NVLS runs comm->nvlsChannels CTAs (nvls.cc ncclNvlsInit): NVLS_NCHANNELS_SM90 = 16 on Hopper;
// on Blackwell NVLS_NCHANNELS_SM100 = 32 across nodes and, from 2.27, NVLS_NCHANNELS_SM100_NVL
// = 24 in one node (2.26 ran 32 there too: nvls.cc:145,176 @v2.26.6-1; nvls.cc:149,193
// @v2.27.7-1). The release's figure, not one constant for every release.
TEST(CollectiveTest, NvlsChannelsAreTheReleasesPerArchitectureAndNodeCount) {
  const auto channels = [](const std::string& system, int gpus, const std::string& version) {
    const auto hw = preset(system, {{"collectives", {{"nccl_version", version}}}});
    const auto plan = nccl_plan(kAllReduce, model::Topology(hw, gpus).bandwidths(), hw, kGiB,
                                CollectiveAlgorithm::kNvls, model::CollectiveProtocol::kSimple);
    return plan ? plan->channels : -1;
  };
  EXPECT_EQ(channels("dgx-h100", 8, "2.28.9"), 16);
  EXPECT_EQ(channels("dgx-b200", 8, "2.26.6"), 32);
  EXPECT_EQ(channels("dgx-b200", 8, "2.27.7"), 24);
  EXPECT_EQ(channels("dgx-b200", 8, "2.30.7"), 24);
}

// LL128 by the release's compute-capability rule (tuning.cc's switch on minCompCap): Blackwell
// (10.0) runs it from 2.26 (tuning.cc:432-438 @v2.26.6-1) and not before (tuning.cc:288-292
// @v2.18.5-1: 7.0, 8.0 and 9.0 only); NVLS all-gather from 2.19 (tuning.cc:168-169).
TEST(CollectiveTest, TheReleaseDecidesLL128OnBlackwellAndNvlsAllGather) {
  const auto protocol = [](const std::string& system, const std::string& version) {
    const auto hw = preset(system, {{"collectives", {{"nccl_version", version}}}});
    const auto plan = nccl_plan(kAllReduce, model::Topology(hw, 8).bandwidths(), hw, 64 * 1024.0,
                                CollectiveAlgorithm::kRing, model::CollectiveProtocol::kLL128);
    return plan.has_value();
  };
  EXPECT_FALSE(protocol("dgx-b200", "2.25.1"));
  EXPECT_TRUE(protocol("dgx-b200", "2.26.6"));
  EXPECT_TRUE(protocol("dgx-h100", "2.18.5"));
  const auto nvls_all_gather = [](const std::string& version) {
    const auto hw = preset("dgx-h100", {{"collectives", {{"nccl_version", version}}}});
    return nccl_plan(model::CollectiveOp::kAllGather, model::Topology(hw, 8).bandwidths(), hw, kGiB,
                     CollectiveAlgorithm::kNvls, model::CollectiveProtocol::kSimple)
        .has_value();
  };
  EXPECT_FALSE(nvls_all_gather("2.18.5"));
  EXPECT_TRUE(nvls_all_gather("2.19.4"));
}

// The ring search walks the release's speed array (search.cc): with 50 GB/s of NVLink per GPU
// (an H100 held at a ninth of its links), 2.18's Hopper array {60, 40, 30, 24, 20, ...}
// (search.cc:812 @v2.18.5-1) gives 1 x 40, then 2 x 24 = 48 (more), stopping below 0.49 of 24:
// 2 channels of 24, too slow to split (< 25); from 2.19 the array has 50 (search.cc:843
// @v2.19.4-1): 1 x 50, which no slower speed beats, split in two of 25 (ncclTopoDupChannels).
TEST(CollectiveTest, TheRingSearchWalksTheReleasesSpeedArray) {
  const auto ring = [](const std::string& version) {
    const auto hw =
        preset("dgx-h100", {{"collectives",
                             {{"nccl_version", version},
                              {"intra_node", {{"ring_efficiency", 50.0 / 450.0 + 1e-9}}}}}});
    return nccl_system(model::Topology(hw, 8).bandwidths(), hw).ring;
  };
  EXPECT_EQ(ring("2.18.5").channels, 2);
  EXPECT_DOUBLE_EQ(ring("2.18.5").bw_intra, 24.0);
  EXPECT_EQ(ring("2.19.4").channels, 2);
  EXPECT_DOUBLE_EQ(ring("2.19.4").bw_intra, 25.0);
}

// NCCL's tuner rate of an NVLS all-gather, 8 H100 in one node: the NVLS graph has 8 channels of
// bwIntra 40, bwInter 60 GB/s (search.cc: 8 x 40 <= 370.8 GB/s of NVLink per GPU; bwInter
// raised to below twice that). 2.19-2.22: min(40, 60) x 5/6 per channel (tuning.cc:175, 199
// @v2.19.4-1); 2.23-2.26: not converted, 40 (tuning.cc:221 @v2.23.4-1); 2.27: min(40 x 7/8,
// 0.9 x 60) = 35 (tuning.cc:267-274 @v2.27.7-1). At 1 GiB the bandwidth term is all but all of
// the estimate.
TEST(CollectiveTest, NvlsAllGatherRateFollowsTheRelease) {
  const auto us = [](const std::string& version) {
    return tuner_us(model::CollectiveOp::kAllGather,
                    preset("dgx-h100", {{"collectives", {{"nccl_version", version}}}}), 8, kGiB,
                    CollectiveAlgorithm::kNvls, model::CollectiveProtocol::kSimple);
  };
  EXPECT_NEAR(us("2.22.3") / us("2.26.6"), 40.0 / (40.0 * 5 / 6), 0.005);
  EXPECT_NEAR(us("2.27.7") / us("2.26.6"), 40.0 / 35.0, 0.005);
}

// Across nodes NCCL's tuner reads the host CPU (tuning.cc): getNetOverhead is 1 us on Intel
// and 2 us on AMD hosts, and each intra-node step of an inter-node ring costs at least it. A 2 x 8
// DGX A100 ring LL all-reduce: 2(16-1) = 30 steps, 2(2-1) = 2 of them across the network; the
// other 28 cost max(NVLink's ring LL 0.6 us, overhead): 28 x 1 us on Intel, 28 x 2 us on AMD.
TEST(CollectiveTest, AnAmdHostPaysTwiceTheRingsNetworkOverhead) {
  const auto us = [](const std::string& vendor) {
    return tuner_us(kAllReduce, preset("dgx-a100", {{"cpu_vendor", vendor}}), 16, 8,
                    CollectiveAlgorithm::kRing, model::CollectiveProtocol::kLL);
  };
  EXPECT_NEAR(us("amd") - us("intel"), 28.0, 0.01);
  EXPECT_DOUBLE_EQ(us("arm"), us("intel"));  // "other" CPUs: Intel's figure
}

// NVLS_TREE's mid-size correction on Blackwell applies with x86 hosts only (tuning.cc:643-646
// @v2.30.7-1, cpuArch == X86): two GB200 NVL72 racks (Grace, Arm) keep the model's rate at
// 64 KiB; the same racks declared Intel take treeCorrectionFactor[Simple][log2(64 KiB / 64) = 10]
// = .6 of it.
TEST(CollectiveTest, NvlsTreeCorrectionNeedsX86Hosts) {
  const auto us = [](const std::string& vendor) {
    return tuner_us(kAllReduce, preset("gb200-nvl72", {{"cpu_vendor", vendor}}), 144, 65536,
                    CollectiveAlgorithm::kNvls, model::CollectiveProtocol::kSimple);
  };
  ASSERT_GT(us("arm"), 0);
  EXPECT_GT(us("intel"), us("arm"));
}

// PAT (NCCL 2.23 on) runs all-gather and reduce-scatter when every node has one GPU
// (tuning.cc:216-223, 302-303, 337, 429-433 @v2.30.7-1). 16 nodes of one H100 and one NDR NIC
// (the plugin reports no latency), 8 bytes: latency 8 + log2(16) x hwLatencies[NET][Tree][Simple]
// 14 / 3.5 + 16 x 2.8 = 8 + 16 + 44.8 = 68.8 us; the bytes add under 0.001 us. Ring LL, the next
// best: 6.6 + 15 network steps x the tree's LL network latency 5.0 (one GPU per node) = 81.6 us,
// so auto picks PAT. The bandwidth part is the tree graph's rate x channels x 0.75 (2.26 on) or
// 0.85 (2.23): at 1 GiB the two releases' transfer times are in the ratio 0.85 / 0.75.
TEST(CollectiveTest, PatRunsAllGatherAndReduceScatterWithOneGpuPerNode) {
  const auto hw = [](const std::string& version) {
    return preset("dgx-h100", {{"gpus_per_node", 1},
                               {"inter_node", {{"nics_per_node", 1}}},
                               {"collectives", {{"nccl_version", version}}}});
  };
  constexpr auto kAllGather = model::CollectiveOp::kAllGather;
  constexpr auto kReduceScatter = model::CollectiveOp::kReduceScatter;
  constexpr auto kSimple = model::CollectiveProtocol::kSimple;
  EXPECT_NEAR(tuner_us(kAllGather, hw("2.30.7"), 16, 8, CollectiveAlgorithm::kPat, kSimple), 68.8,
              1e-3);
  EXPECT_NEAR(tuner_us(kAllGather, hw("2.30.7"), 16, 8, CollectiveAlgorithm::kRing,
                       model::CollectiveProtocol::kLL),
              81.6, 0.01);  // 8 bytes at Ring LL's rate add 0.0015 us
  EXPECT_EQ(cost(kAllGather, hw("2.30.7"), 16, 8).algorithm, CollectiveAlgorithm::kPat);
  EXPECT_EQ(cost(kReduceScatter, hw("2.30.7"), 16, 8).algorithm, CollectiveAlgorithm::kPat);
  // NCCL's estimate is PAT's time here (nccl_pipeline.cpp): the kernel adds nothing to it.
  EXPECT_NEAR(cost(kAllGather, hw("2.30.7"), 16, 8).time_s * 1e6, 68.8, 1e-3);
  const double t23 =
      tuner_us(kAllGather, hw("2.23.4"), 16, kGiB, CollectiveAlgorithm::kPat, kSimple);
  const double t30 =
      tuner_us(kAllGather, hw("2.30.7"), 16, kGiB, CollectiveAlgorithm::kPat, kSimple);
  EXPECT_NEAR((t30 - 68.8) / (t23 - 68.8), 0.85 / 0.75, 1e-9);
  // Not before 2.23, not for all-reduce, not with several GPUs per node.
  EXPECT_LT(tuner_us(kAllGather, hw("2.22.3"), 16, 8, CollectiveAlgorithm::kPat, kSimple), 0);
  EXPECT_NE(cost(kAllGather, hw("2.22.3"), 16, 8).algorithm, CollectiveAlgorithm::kPat);
  EXPECT_LT(tuner_us(kAllReduce, hw("2.30.7"), 16, 8, CollectiveAlgorithm::kPat, kSimple), 0);
  EXPECT_LT(tuner_us(kAllGather, preset("dgx-h100"), 16, 8, CollectiveAlgorithm::kPat, kSimple), 0);
}

// An average (FSDP2's ReduceOp.AVG: ncclAvg, run as PreMulSum) and an fp32 max (float8's amax)
// run on neither NVLS nor NVLS_TREE (enqueue.cc:425-426 ncclNvlsSupported: Sum, or MinMax on
// 16-bit types), and an averaging reduce-scatter not on PAT (enqueue.cc:2009-2012); NCCL then
// takes the best of what remains, which is the same call forced onto that algorithm. An
// all-gather reduces nothing: its choice does not change.
TEST(CollectiveTest, AnAverageRunsOnNeitherNvlsNorPat) {
  constexpr auto kReduceScatter = model::CollectiveOp::kReduceScatter;
  constexpr auto kAllGather = model::CollectiveOp::kAllGather;
  constexpr auto kAnyProto = model::CollectiveProtocol::kAuto;
  constexpr auto kAverage = model::Reduction::kAverage;
  const auto with = [](model::CollectiveOp op, const model::HardwareSpec& hw, int gpus,
                       double bytes, model::Reduction r,
                       CollectiveAlgorithm a = CollectiveAlgorithm::kAuto) {
    return collective_cost(op, model::Topology(hw, gpus).bandwidths(), hw, bytes, a, kAnyProto, r);
  };
  const model::HardwareSpec h100 = preset("dgx-h100");
  // One B200 node on NCCL 2.26.2: a 16 MiB reduce-scatter sums on NVLS, averages on the ring.
  const model::HardwareSpec b200 =
      preset("dgx-b200", {{"collectives", {{"nccl_version", "2.26.2"}}}});
  EXPECT_EQ(cost(kReduceScatter, b200, 8, 16 * kMiB).algorithm, CollectiveAlgorithm::kNvls);
  const CollectiveCost rs = with(kReduceScatter, b200, 8, 16 * kMiB, kAverage);
  EXPECT_EQ(rs.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_DOUBLE_EQ(
      rs.time_s,
      cost(kReduceScatter, b200, 8, 16 * kMiB, CollectiveAlgorithm::kRing, kAnyProto).time_s);
  // Forced onto NVLS, an average falls back to the ring, as a sum on an A100 does.
  EXPECT_EQ(
      with(kReduceScatter, b200, 8, 16 * kMiB, kAverage, CollectiveAlgorithm::kNvls).algorithm,
      CollectiveAlgorithm::kRing);
  // Two nodes: a 1 GiB all-reduce sums on NVLS_TREE; averaged it takes the faster of ring and
  // tree; float8's fp32 amax likewise.
  EXPECT_EQ(cost(kAllReduce, h100, 16, kGiB).algorithm, CollectiveAlgorithm::kNvlsTree);
  const double ring = cost(kAllReduce, h100, 16, kGiB, CollectiveAlgorithm::kRing).time_s;
  const double tree = cost(kAllReduce, h100, 16, kGiB, CollectiveAlgorithm::kTree).time_s;
  for (model::Reduction r : {kAverage, model::Reduction::kMaxFloat32}) {
    const CollectiveCost ar = with(kAllReduce, h100, 16, kGiB, r);
    EXPECT_NE(ar.algorithm, CollectiveAlgorithm::kNvlsTree);
    EXPECT_DOUBLE_EQ(ar.time_s, std::min(ring, tree));
  }
  // One GPU per node: an averaging reduce-scatter leaves PAT for the ring; all-gathers keep it.
  const model::HardwareSpec one =
      preset("dgx-h100", {{"gpus_per_node", 1}, {"inter_node", {{"nics_per_node", 1}}}});
  EXPECT_EQ(cost(kReduceScatter, one, 16, 8).algorithm, CollectiveAlgorithm::kPat);
  EXPECT_EQ(with(kReduceScatter, one, 16, 8, kAverage).algorithm, CollectiveAlgorithm::kRing);
  EXPECT_EQ(with(kAllGather, one, 16, 8, kAverage).algorithm, CollectiveAlgorithm::kPat);
  EXPECT_EQ(with(kAllGather, b200, 8, 16 * kMiB, kAverage).algorithm,
            cost(kAllGather, b200, 8, 16 * kMiB).algorithm);
}

// Across nodes NCCL doubles few fast ring channels again (connect.cc): on Hopper in every release,
// on Blackwell from 2.26 (minCompCap >= 90; before, == 90). Two B200 nodes with 6 NICs: the ring
// search finds 6 channels of 48 GB/s (one per NIC; more than 4 under 50 GB/s are not split),
// doubled at run time to 12, and to 24 by 2.26's rule only (12 < 16, 48 > 45).
TEST(CollectiveTest, FewFastChannelsAcrossNodesDoubleByTheReleasesRule) {
  const auto channels = [](const std::string& version) {
    const auto hw =
        preset("dgx-b200", {{"collectives", {{"nccl_version", version}}},
                            {"inter_node", {{"preset", "ib-ndr-400"}, {"nics_per_node", 6}}}});
    return nccl_system(model::Topology(hw, 16).bandwidths(), hw).comm_channels;
  };
  EXPECT_EQ(channels("2.25.1"), 12);
  EXPECT_EQ(channels("2.26.6"), 24);
}

}  // namespace
}  // namespace ddpsim::sim
