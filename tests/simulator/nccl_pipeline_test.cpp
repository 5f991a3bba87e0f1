// nccl_kernel_time: NCCL's kernels' loops, slices, iterations and chunks, each case checked
// against a value computed by hand from the formula in nccl_pipeline.hpp.
#include "simulator/collectives/nccl_pipeline.hpp"

#include <gtest/gtest.h>

#include "model/error.hpp"

namespace ddpsim::sim {
namespace {

using model::CollectiveAlgorithm;
using model::CollectiveOp;
using model::CollectiveProtocol;

// An 8-rank ring all-reduce on one channel with round numbers: base 10 us, hop 2 us per step,
// 1 us of bandwidth per KiB each rank moves (bandwidth_us = 14 steps x S/8 bytes / 1024).
NcclCall ring(CollectiveProtocol p, double bytes) {
  NcclCall c;
  c.op = CollectiveOp::kAllReduce;
  c.algorithm = CollectiveAlgorithm::kRing;
  c.protocol = p;
  c.ranks = 8;
  c.channels = 1;
  c.bytes = bytes;
  c.base_us = 10;
  c.step_us = 2;
  c.bandwidth_us = 14 * bytes / 8 / 1024;
  c.tuner_us = c.base_us + 14 * c.step_us + c.bandwidth_us;
  return c;
}

model::NcclKernelCosts costs(double slice_us, double iteration_us, double chunk_us) {
  model::NcclKernelCosts k;
  k.simple_slice = slice_us * 1e-6;
  k.ll128_iteration = iteration_us * 1e-6;
  k.nvls_chunk = chunk_us * 1e-6;
  return k;
}

// An all-reduce by `a` on 16 channels over `ranks` ranks in `nodes` nodes, with the estimate's
// bandwidth part; the tests set what else their case reads.
NcclCall on_16_channels(CollectiveAlgorithm a, int ranks, int nodes, double bandwidth_us) {
  NcclCall c;
  c.algorithm = a;
  c.ranks = ranks;
  c.nodes = nodes;
  c.channels = 16;
  c.bandwidth_us = bandwidth_us;
  return c;
}

// An NVLS_TREE all-reduce on 2 nodes x 8 heads, 16 channels: the estimate 340 us, 300 of them
// bandwidth.
NcclCall nvls_tree_2x8() {
  NcclCall c = on_16_channels(CollectiveAlgorithm::kNvlsTree, 16, 2, 300);
  c.nvls_heads = 8;
  c.tuner_us = 340;
  return c;
}

TEST(NcclPipeline, WithoutItemCostsLLIsTheTunersLatencyPlusBandwidth) {
  // LL, one loop (S/8 = 4 KiB per primitive < the 32 KiB LL chunk): 10 + 14 x (4 + 2) = 94 us,
  // the tuner's 10 + 14 x 2 + 56.
  const NcclKernelTime t = nccl_kernel_time(ring(CollectiveProtocol::kLL, 32768), costs(0, 0, 0));
  EXPECT_NEAR(t.time_s * 1e6, 94.0, 1e-9);
  EXPECT_EQ(t.loops, 1);
  EXPECT_NEAR(t.chunk_bytes, 4096, 1e-9);
}

TEST(NcclPipeline, SimpleSlicesPaySerializedCostsPerSlice) {
  // 8 MiB: one loop (8 ranks x 2 MiB chunks = 16 MiB), 1 MiB per primitive, two 512 KiB
  // slices of 512 us each at 1 us/KiB, plus 7 us per slice: step = max(2 x 519, 519 + 2) =
  // 1038 us; kernel = 10 + 14 x 1038 = 14542 us.
  const NcclKernelTime t =
      nccl_kernel_time(ring(CollectiveProtocol::kSimple, 8 << 20), costs(7, 0, 0));
  EXPECT_NEAR(t.time_s * 1e6, 14542.0, 1e-6);
  EXPECT_EQ(t.items_per_step, 2);
  // 48 MiB: three full loops of 2 MiB primitives, two 1 MiB slices each (2 x (1024 + 7) = 2062
  // us per step): 10 + 3 x 14 x 2062 us.
  const NcclKernelTime big =
      nccl_kernel_time(ring(CollectiveProtocol::kSimple, 48 << 20), costs(7, 0, 0));
  EXPECT_EQ(big.loops, 3);
  EXPECT_NEAR(big.time_s * 1e6, 10 + 3 * 14 * 2062.0, 1e-6);
}

TEST(NcclPipeline, SmallSimplePrimitivesFitOneSliceAndWaitForTheHop) {
  // 64 KiB: 8 KiB per primitive < the 32 KiB smallest slice: one slice of 8 us + 7 us, the
  // second empty (7 us): step = max(15 + 7, 15 + 2) = 22 us; 10 + 14 x 22 = 318 us.
  const NcclKernelTime t =
      nccl_kernel_time(ring(CollectiveProtocol::kSimple, 65536), costs(7, 0, 0));
  EXPECT_EQ(t.items_per_step, 1);
  EXPECT_NEAR(t.time_s * 1e6, 318.0, 1e-9);
  // With no slice cost the hop dominates: max(8 + 0, 8 + 2) = 10 us per step: 150 us.
  EXPECT_NEAR(
      nccl_kernel_time(ring(CollectiveProtocol::kSimple, 65536), costs(0, 0, 0)).time_s * 1e6,
      150.0, 1e-9);
}

TEST(NcclPipeline, AcrossNodesTheNicTransferHidesTheSliceSync) {
  // The 8 MiB Simple case on two nodes: each slice costs max(512 us, 7 us) = 512 us, not 519:
  // 10 + 14 x 1024 us.
  NcclCall c = ring(CollectiveProtocol::kSimple, 8 << 20);
  c.nodes = 2;
  EXPECT_NEAR(nccl_kernel_time(c, costs(7, 0, 0)).time_s * 1e6, 10 + 14 * 1024.0, 1e-6);
  // A slice smaller than its sync: 64 KiB -> one 8 KiB slice (8 us) and an empty one, each
  // max(bytes, 7 us): step = max(8 + 7, 8 + 2) = 15 us; 10 + 14 x 15 = 220 us.
  c = ring(CollectiveProtocol::kSimple, 65536);
  c.nodes = 2;
  EXPECT_NEAR(nccl_kernel_time(c, costs(7, 0, 0)).time_s * 1e6, 220.0, 1e-9);
}

TEST(NcclPipeline, LL128PrimitivesRunInBlockIterationsOf38400Bytes) {
  // 768000 B: 96000 B per primitive = ceil(96000 / 38400) = 3 iterations of 32000 B (31.25 us
  // at 1 us/KiB) + 3 us each: step = max(3 x 34.25, 34.25 + 2) = 102.75; 10 + 14 x 102.75.
  const NcclKernelTime t =
      nccl_kernel_time(ring(CollectiveProtocol::kLL128, 768000), costs(0, 3, 0));
  EXPECT_EQ(t.items_per_step, 3);
  EXPECT_NEAR(t.time_s * 1e6, 10 + 14 * 102.75, 1e-9);
}

TEST(NcclPipeline, NvlsChunksHalveWithSizeAndPayPerChunk) {
  NcclCall c = on_16_channels(CollectiveAlgorithm::kNvls, 8, 1, 100);
  c.nvls_heads = 8;
  c.base_us = 25;
  // 1 GiB over 16 channels = 64 MiB each = 64 x 8 heads x 128 KiB: the chunk stays 128 KiB
  // (enqueue.cc:2272 halves below that); 64 iterations: 25 + 100 x 66 / 64 + 64 x 1 us.
  c.bytes = 1 << 30;
  NcclKernelTime t = nccl_kernel_time(c, costs(0, 0, 1));
  EXPECT_NEAR(t.chunk_bytes, 131072, 0);
  EXPECT_EQ(t.loops, 64);
  EXPECT_NEAR(t.time_s * 1e6, 25 + 100.0 * 66 / 64 + 64, 1e-9);
  // Half of it: 32 MiB per channel < 64 MiB -> 64 KiB chunks, 64 iterations again.
  c.bytes = 1 << 29;
  t = nccl_kernel_time(c, costs(0, 0, 1));
  EXPECT_NEAR(t.chunk_bytes, 65536, 0);
  EXPECT_EQ(t.loops, 64);
  // 4 MiB: 256 KiB per channel < 2 x 8 x 32 KiB = 512 KiB -> 16 KiB chunks, 2 iterations.
  c.bytes = 4 << 20;
  t = nccl_kernel_time(c, costs(0, 0, 1));
  EXPECT_NEAR(t.chunk_bytes, 16384, 0);
  EXPECT_EQ(t.loops, 2);
}

TEST(NcclPipeline, NvlsTreeFillsTwoChunkTimesAcrossNodes) {
  // 2 nodes x 8 heads, 16 channels, 64 MiB: 4 MiB per channel; NVLS_TREE chunks start at 128 KiB
  // (fewer than 4 nodes) and 4 MiB is not under 4 x 8 x 128 KiB: 4 iterations of 8 x 128 KiB.
  // Time = the estimate (40 us + 300 us of bandwidth) + 2 fill chunk times (300 x 2 / 4 = 150 us)
  // + 4 x 1 us per chunk = 494 us.
  NcclCall c = nvls_tree_2x8();
  c.bytes = 64 << 20;
  const NcclKernelTime t = nccl_kernel_time(c, costs(0, 0, 1));
  EXPECT_NEAR(t.chunk_bytes, 131072, 0);
  EXPECT_EQ(t.loops, 4);
  EXPECT_NEAR(t.time_s * 1e6, 494.0, 1e-9);
  // From 4 nodes the chunk starts at 64 KiB (nvls.cc:225-227 treeMaxChunkSize): 8 iterations.
  c.nodes = 4;
  EXPECT_EQ(nccl_kernel_time(c, costs(0, 0, 1)).loops, 8);
}

// aws-ofi-nccl's p5 environment (src/platform-aws.cpp): NCCL_NVLS_CHUNKSIZE and
// NCCL_NVLSTREE_MAX_CHUNKSIZE 512 KiB. enqueue.cc:2281-2285 then drops the NVLS_TREE chunk to
// 256 / 128 / 64 / 32 KiB under 32 / 16 / 4 / 1 x heads x the chunk per channel. 2 nodes x 8
// heads, 16 channels:
//   8 GiB: 512 MiB per channel >= 32 x 8 x 512 KiB = 128 MiB: 512 KiB chunks, 128 iterations;
//   1 GiB: 64 MiB < 128 MiB -> 256 KiB; 64 MiB >= 16 x 8 x 256 KiB = 32 MiB: stays, 32 iterations;
//   64 MiB: 4 MiB < 128 MiB -> 256 KiB; < 32 MiB -> 128 KiB; 4 MiB >= 4 x 8 x 128 KiB = 4 MiB:
//   stays 128 KiB (NCCL's default start), 4 iterations.
TEST(NcclPipeline, NvlsTreeChunksFromTheConfiguredSizes) {
  NcclCall c = nvls_tree_2x8();
  model::NcclKernelCosts k = costs(0, 0, 1);
  k.nvls_chunk_bytes = 524288;
  k.nvls_tree_max_chunk_bytes = 524288;
  c.bytes = 8.0 * (1 << 30);
  EXPECT_NEAR(nccl_kernel_time(c, k).chunk_bytes, 524288, 0);
  EXPECT_EQ(nccl_kernel_time(c, k).loops, 128);
  c.bytes = 1 << 30;
  EXPECT_NEAR(nccl_kernel_time(c, k).chunk_bytes, 262144, 0);
  EXPECT_EQ(nccl_kernel_time(c, k).loops, 32);
  c.bytes = 64 << 20;
  EXPECT_NEAR(nccl_kernel_time(c, k).chunk_bytes, 131072, 0);
  EXPECT_EQ(nccl_kernel_time(c, k).loops, 4);
  // The NVLS chunk alone raised, the tree's maximum left at NCCL's default: below 4 nodes the
  // maximum is the NVLS chunk (512 KiB); from 4 nodes 64 KiB whatever the NVLS chunk.
  k.nvls_tree_max_chunk_bytes = 0;
  c.bytes = 8.0 * (1 << 30);
  EXPECT_NEAR(nccl_kernel_time(c, k).chunk_bytes, 524288, 0);
  c.nodes = 4;
  EXPECT_NEAR(nccl_kernel_time(c, k).chunk_bytes, 65536, 0);
}

// NCCL_BUFFSIZE 8 MiB (aws-ofi-nccl on p4d, p4de, p5): Simple ring chunks of 4 slots of 1 MiB
// (collectives.h CHUNKSTEPS), twice the default's 4 x 512 KiB. On the 8-rank ring above, a
// 32 MiB message is two loops of 8 x 2 MiB primitives with the default buffer, one loop of
// 8 x 4 MiB with 8 MiB.
TEST(NcclPipeline, SimpleRingChunksFollowTheBufferSize) {
  model::NcclKernelCosts k = costs(7, 0, 0);
  const NcclKernelTime four = nccl_kernel_time(ring(CollectiveProtocol::kSimple, 32 << 20), k);
  EXPECT_NEAR(four.chunk_bytes, 2 << 20, 0);  // 4 x 4 MiB / 8
  EXPECT_EQ(four.loops, 2);
  k.buffsize_bytes = 8 << 20;
  const NcclKernelTime eight = nccl_kernel_time(ring(CollectiveProtocol::kSimple, 32 << 20), k);
  EXPECT_NEAR(eight.chunk_bytes, 4 << 20, 0);  // 4 x 8 MiB / 8
  EXPECT_EQ(eight.loops, 1);
}

// A multi-node LL128 tree all-reduce (2 nodes x 8 GPUs, 16 channels, NVLink hops of 20 GB/s per
// channel): enqueue.cc's chunk rule, nsteps = 1 + log2(2) + 0.1 x 8 = 2.8, halves the 576,000-byte
// LL128 chunk while the channel holds fewer than floor-counted 22.4 chunks (down to 131,072),
// then fewer than 5.6 (down to 32,768); each of the 2 x 7 NVLink hops then adds one chunk time
// (its bytes at 20 GB/s plus 0.75 us per 38,400-byte block iteration) to the estimate.
//   16 MiB: 1 MiB per channel; 576,000 -> 288,000 -> 144,000 -> 72,000 (14 per channel >= 5.6):
//     hop = 72,000 / 20,000 + 2 x 0.75 = 5.1 us; 200 + 14 x 5.1 = 271.4 us, 15 chunks.
//   1 MiB: 64 KiB per channel; 72,000 -> 36,000 -> 18,000 (floor 3 < 5.6, but not above 32,768):
//     hop = 0.9 + 0.75 = 1.65 us; 200 + 14 x 1.65 = 223.1 us.
TEST(NcclPipeline, MultiNodeLL128TreeFillsItsNvlinkHops) {
  NcclCall c = on_16_channels(CollectiveAlgorithm::kTree, 16, 2, 100);
  c.protocol = CollectiveProtocol::kLL128;
  c.tuner_us = 200;
  c.intra_channel_gbytes_per_s = 20;
  c.bytes = 16 << 20;
  NcclKernelTime t = nccl_kernel_time(c, costs(0, 0.75, 0));
  EXPECT_NEAR(t.chunk_bytes, 72000, 0);
  EXPECT_EQ(t.loops, 15);
  EXPECT_NEAR(t.time_s * 1e6, 271.4, 1e-9);
  c.bytes = 1 << 20;
  t = nccl_kernel_time(c, costs(0, 0.75, 0));
  EXPECT_NEAR(t.chunk_bytes, 18000, 0);
  EXPECT_NEAR(t.time_s * 1e6, 223.1, 1e-9);
  // One node: a chain, no network hop; the intra-node tree keeps its per-item costs instead.
  c.nodes = 1;
  c.ranks = 8;
  EXPECT_NE(nccl_kernel_time(c, costs(0, 0.75, 0)).chunk_bytes, 18000);
}

TEST(NcclPipeline, TheHostFloorIsOneLaunchPerDrivenGpuUnlessGraphed) {
  // nccl-tests -g 8 at 5 us per launch: a 94 us kernel still dominates 40 us of launches; a
  // 1 KiB call (10 + 14 x (0.125 + 2) = 39.75 us) queues behind them.
  model::NcclKernelCosts k = costs(0, 0, 0);
  k.host_launch = 5e-6;
  k.gpus_per_process = 8;
  EXPECT_NEAR(nccl_kernel_time(ring(CollectiveProtocol::kLL, 32768), k).time_s * 1e6, 94.0, 1e-9);
  const NcclKernelTime small = nccl_kernel_time(ring(CollectiveProtocol::kLL, 1024), k);
  EXPECT_NEAR(small.kernel_s * 1e6, 39.75, 1e-9);
  EXPECT_NEAR(small.time_s * 1e6, 40.0, 1e-9);
  k.cuda_graphs = true;
  EXPECT_NEAR(nccl_kernel_time(ring(CollectiveProtocol::kLL, 1024), k).time_s * 1e6, 39.75, 1e-9);
}

}  // namespace
}  // namespace ddpsim::sim
