#include "simulator/collectives/nccl_pipeline.hpp"

#include <algorithm>
#include <cmath>

#include "model/error.hpp"

// Sizes are NVIDIA/nccl v2.30.7 (5067397c), file:line at that commit; they are the same in
// every release from 2.18.5 (tests/simulator/nccl_pipeline_test.cpp holds the derivations).

namespace ddpsim::sim {

using model::CollectiveAlgorithm;
using model::CollectiveOp;
using model::CollectiveProtocol;

namespace {

constexpr double kSteps = 8;  // device.h:26 NCCL_STEPS
// init.cc:810-813 default buffers per protocol, one step each = buffer / NCCL_STEPS. Simple's is
// NCCL_BUFFSIZE (NcclKernelCosts::buffsize_bytes, DEFAULT_BUFFSIZE 4 MiB).
constexpr double kLLStep = 8.0 * 512 * kSteps * 16 / kSteps;  // lines x threads x 16 B
constexpr double kLL128Step = 120.0 * 640 * kSteps * 8 / kSteps;
// collectives.h:19-22: ring all-reduce / all-gather / reduce-scatter chunks are 4 steps of 2
// slices (CHUNKSTEPS NCCL_STEPS/2, SLICESTEPS NCCL_STEPS/4); broadcast and reduce 1 step.
constexpr double kRingChunkSteps = 4;
constexpr double kSlicesPerChunk = 2;
// prims_ll128.h:291-293: a warp moves 32 x 8 words per iteration, 1/16 of them flags (1920 data
// bytes); device.h:114 640 threads = 20 warps.
constexpr double kLL128IterationBytes = 20 * 1920.0;
// enqueue.cc:2227: LL128 chunks carry 120 of every 128 bytes; 2226: LL chunks half (flags).
constexpr double kLL128Chunk = kLL128Step * 120 / 128;
constexpr double kLLChunk = kLLStep / 2;

// init.cc:810-813: the Simple protocol's step is NCCL_BUFFSIZE / NCCL_STEPS.
double simple_step(const model::NcclKernelCosts& k) { return k.buffsize_bytes / kSteps; }

// enqueue.cc (v2.22.3-1 1795-1800, v2.30.7 the same rule): an LL128 tree's chunk halves from the
// LL128 step while the channel holds fewer than nsteps x 64 / ppn (then x 16 / ppn) chunks,
// nsteps = 1 + log2(nodes) + 0.1 ppn (counts floored, as NCCL's integer division).
double ll128_tree_chunk(double channel_bytes, int ranks, int nodes) {
  const double ppn = static_cast<double>(ranks) / nodes;
  const double nsteps = 1 + std::floor(std::log2(static_cast<double>(nodes))) + 0.1 * ppn;
  double chunk = kLL128Chunk;
  while (std::floor(channel_bytes / chunk) < nsteps * 64 / ppn && chunk > 131072) chunk /= 2;
  while (std::floor(channel_bytes / chunk) < nsteps * 16 / ppn && chunk > 32768) chunk /= 2;
  return chunk;
}

bool ring_like(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather ||
         op == CollectiveOp::kReduceScatter;
}

// enqueue.cc:2258-2274: NVLS chunks start at NCCL_NVLS_CHUNKSIZE (nvls.cc, 128 KiB) and drop to
// 64 / 32 / 16 KiB while the message is under 64 / 8 / 2 x channels x heads x the chunk.
double nvls_chunk(double channel_bytes, int heads, double start) {
  double chunk = start;
  if (channel_bytes < 64 * heads * chunk && chunk > 65536) chunk = 65536;
  if (channel_bytes < 8 * heads * chunk && chunk > 32768) chunk = 32768;
  if (channel_bytes < 2 * heads * chunk && chunk > 16384) chunk = 16384;
  return chunk;
}

// enqueue.cc:2279-2285: NVLS_TREE chunks start at min(NVLS chunk, NCCL_NVLSTREE_MAX_CHUNKSIZE),
// whose default is 64 KiB from 4 nodes and the NVLS chunk below (nvls.cc:225-227), and drop to
// 256 / 128 / 64 / 32 KiB under 32 / 16 / 4 / 1 x channels x heads x the chunk.
double nvls_tree_chunk(double channel_bytes, int heads, int nodes, double start, double max) {
  if (max <= 0) max = nodes >= 4 ? 65536 : start;
  double chunk = std::min(start, max);
  if (channel_bytes < 32 * heads * chunk && chunk > 262144) chunk = 262144;
  if (channel_bytes < 16 * heads * chunk && chunk > 131072) chunk = 131072;
  if (channel_bytes < 4 * heads * chunk && chunk > 65536) chunk = 65536;
  if (channel_bytes < 1 * heads * chunk && chunk > 32768) chunk = 32768;
  return chunk;
}

// One ring loop whose primitives move `prim` bytes each: the step time.
struct RingStep {
  double time_us = 0;
  int items = 1;
};
// `net`: the ring crosses nodes, so its slowest hop is a NIC, whose transfer the proxy thread
// drives while the GPU syncs the next item (NCCL_STEPS deep): an item costs the larger of its
// transfer and its sync, not their sum.
double item_us(double bytes, double us_per_byte, double tau_us, bool net) {
  return net ? std::max(bytes * us_per_byte, tau_us) : bytes * us_per_byte + tau_us;
}

RingStep ring_step(CollectiveProtocol p, double prim, double us_per_byte, double h,
                   const model::NcclKernelCosts& k, bool net) {
  RingStep s;
  if (p == CollectiveProtocol::kLL) {
    // Flagged 8-byte lines: the receiver forwards as lines land; no per-item sync.
    s.time_us = prim * us_per_byte + h;
    return s;
  }
  if (p == CollectiveProtocol::kLL128) {
    s.items = std::max(1, static_cast<int>(std::ceil(prim / kLL128IterationBytes)));
    const double c = item_us(prim / s.items, us_per_byte, k.ll128_iteration * 1e6, net);
    s.time_us = std::max(s.items * c, c + h);
    return s;
  }
  // Simple: two slices, the second empty when the first (at least 1/32 of a slice's full size,
  // prims_simple.h:183-184) holds it all; an empty slice still spins, barriers and posts
  // (prims_simple.h:285-300).
  const double slice = std::max(prim / kSlicesPerChunk, simple_step(k) * 2 / 32);
  const double first = std::min(slice, prim);
  const double tau = k.simple_slice * 1e6;
  const double c0 = item_us(first, us_per_byte, tau, net);
  const double c1 = item_us(prim - first, us_per_byte, tau, net);
  s.items = prim > first ? 2 : 1;
  s.time_us = std::max(c0 + c1, c0 + h);
  return s;
}

}  // namespace

NcclKernelTime nccl_kernel_time(const NcclCall& c, const model::NcclKernelCosts& k) {
  DDPSIM_ASSERT(c.bytes > 0 && c.ranks >= 2 && c.channels >= 1, "nccl_kernel_time: bad call");
  NcclKernelTime out;
  const double n = c.ranks;
  // enqueue.cc:585-700: the message is cut into cells and spread evenly over the channels.
  const double sc = c.bytes / c.channels;
  double kernel_us = c.tuner_us;
  if (c.algorithm == CollectiveAlgorithm::kRing && ring_like(c.op)) {
    // all_reduce.h:33-80: 2(n-1) primitives per loop (n-1 for all-gather / reduce-scatter),
    // each moving one chunk of the loop's n; the last loop's chunk is what remains over n.
    const double steps = c.op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
    const double chunk = c.protocol == CollectiveProtocol::kSimple
                             ? simple_step(k) * kRingChunkSteps
                         : c.protocol == CollectiveProtocol::kLL128 ? kLL128Chunk
                                                                    : kLLChunk;
    const double loop_bytes = n * chunk;
    const double full = std::floor(sc / loop_bytes);
    const double rest = sc - full * loop_bytes;
    // The bandwidth part of the tuner's estimate, spread over the bytes each rank moves.
    const double us_per_byte = c.bandwidth_us / (steps * sc / n);
    const double h = c.step_us;
    double t = 0;
    if (full > 0) {
      const RingStep s = ring_step(c.protocol, chunk, us_per_byte, h, k, c.nodes > 1);
      t += full * steps * s.time_us;
      out.chunk_bytes = chunk;
      out.items_per_step = s.items;
    }
    if (rest > 0) {
      const RingStep s = ring_step(c.protocol, rest / n, us_per_byte, h, k, c.nodes > 1);
      t += steps * s.time_us;
      if (full == 0) {
        out.chunk_bytes = rest / n;
        out.items_per_step = s.items;
      }
    }
    out.loops = static_cast<long long>(full) + (rest > 0 ? 1 : 0);
    kernel_us = c.base_us + t;
  } else if (c.algorithm == CollectiveAlgorithm::kNvls) {
    // all_reduce.h:390-457: per channel, loops of heads x chunk through three warp groups
    // (scatter, multimem reduce-broadcast, gather): two stages of fill, then one chunk per step.
    const double chunk = nvls_chunk(sc, c.nvls_heads, k.nvls_chunk_bytes);
    const double iters = std::max(1.0, std::ceil(sc / (c.nvls_heads * chunk)));
    kernel_us = c.base_us + c.bandwidth_us * (iters + 2) / iters + iters * k.nvls_chunk * 1e6;
    out.chunk_bytes = chunk;
    out.loops = static_cast<long long>(iters);
    out.items_per_step = 1;
  } else if (c.algorithm == CollectiveAlgorithm::kNvlsTree) {
    // all_reduce.h:527-640: the same loops of heads x chunk, with the reduce group sending up the
    // cross-node tree and the broadcast group receiving down it. The NIC is the slowest stage;
    // the in-node stages before and after it fill like NVLS's (two chunk times).
    const double chunk =
        nvls_tree_chunk(sc, c.nvls_heads, c.nodes, k.nvls_chunk_bytes, k.nvls_tree_max_chunk_bytes);
    const double iters = std::max(1.0, std::ceil(sc / (c.nvls_heads * chunk)));
    kernel_us = c.tuner_us + c.bandwidth_us * 2 / iters + iters * k.nvls_chunk * 1e6;
    out.chunk_bytes = chunk;
    out.loops = static_cast<long long>(iters);
    out.items_per_step = 1;
  } else if (c.algorithm == CollectiveAlgorithm::kPat) {
    // PAT (collectives.h PatAGAlgorithm / PatRSAlgorithm): log2(n) dimensions of a Bruck-like
    // exchange, several chunks aggregated per network step while the buffer holds them. Its
    // kernel is not pipelined here: NCCL's estimate (8 us, log2(nodes) network steps, 2.8 us per
    // rank, and the bytes at the tree graph's rate) is the time. The chunk as enqueue.cc:2295-2298
    // (@v2.30.7-1) sets it: one Simple step, halved while the message is under channels x 32
    // (all-gather) or x 16 (reduce-scatter) chunks, down to 64 KiB.
    const double per = c.op == CollectiveOp::kAllGather ? 32.0 : 16.0;
    double chunk = simple_step(k);
    while (chunk * c.channels * per > c.bytes && chunk > 65536) chunk /= 2;
    out.chunk_bytes = std::min(chunk, sc);
    out.loops = static_cast<long long>(std::max(1.0, std::ceil(sc / chunk)));
    out.items_per_step = 1;
  } else {
    // Trees (all_reduce.h:86-160: reduce up, broadcast down, chunk by chunk) and rooted rings
    // (broadcast, reduce: one step per chunk, collectives.h:27-34): every chunk is one work item
    // per phase, pipelined, each paying the protocol's serialized cost.
    const bool multi_node_ll128_tree =
        c.algorithm == CollectiveAlgorithm::kTree && c.protocol == CollectiveProtocol::kLL128 &&
        c.nodes > 1 && c.op == CollectiveOp::kAllReduce && c.intra_channel_gbytes_per_s > 0;
    const double chunk = c.protocol == CollectiveProtocol::kSimple ? simple_step(k)
                         : multi_node_ll128_tree ? ll128_tree_chunk(sc, c.ranks, c.nodes)
                         : c.protocol == CollectiveProtocol::kLL128 ? kLL128Chunk
                                                                    : kLLChunk;
    const double items = std::max(1.0, std::ceil(sc / chunk));
    const double phases = c.algorithm == CollectiveAlgorithm::kTree ? 2 : 1;
    // Across nodes the NIC's transfer hides the sync (item_us): the estimate's bandwidth stays.
    const double tau = c.nodes > 1                                 ? 0.0
                       : c.protocol == CollectiveProtocol::kSimple ? k.simple_slice
                       : c.protocol == CollectiveProtocol::kLL128  ? k.ll128_iteration
                                                                   : 0.0;
    kernel_us = c.tuner_us + phases * items * tau * 1e6;
    out.chunk_bytes = std::min(chunk, sc);
    out.loops = static_cast<long long>(items);
    out.items_per_step = 1;
    if (multi_node_ll128_tree) {
      // runTreeSplit pipelines the chunks up the node's chain and down again (2 (ppn - 1)
      // NVLink hops beside the network's): each hop forwards a chunk once its warps have it, a
      // chunk's bytes at the channel's intra-node rate plus one serialized cost per LL128 block
      // iteration. The network hop is the bottleneck the estimate's bandwidth times; the
      // NVLink hops add their chunk time once each (the pipeline's fill).
      const double ppn = static_cast<double>(c.ranks) / c.nodes;
      const double item = out.chunk_bytes;
      const double hop_us = item / (c.intra_channel_gbytes_per_s * 1e3) +
                            std::ceil(item / kLL128IterationBytes) * k.ll128_iteration * 1e6;
      kernel_us += 2 * (ppn - 1) * hop_us;
    }
  }
  out.kernel_s = kernel_us * 1e-6;
  out.host_s = k.cuda_graphs ? 0.0 : k.gpus_per_process * k.host_launch;
  out.time_s = std::max(out.kernel_s, out.host_s);
  return out;
}

}  // namespace ddpsim::sim
