// nccl_pipeline.hpp: the time of one NCCL call as its kernel runs it, for the (algorithm,
// protocol) NCCL's tuner chose (nccl_tuning.hpp). The tuner's estimate ranks choices; it is not
// the time: NCCL says it lacks chunk modelling (src/graph/tuning.cc:399) and patches trees at mid
// sizes with static factors (tuning.cc:620-627).
//
// What the kernels run (NVIDIA/nccl v2.30.7, file:line in nccl_pipeline.cpp): each channel takes
// an equal share S_c of the message (enqueue.cc:585-700, 32 KiB traffic cells) and loops over it
// in chunks; a ring all-reduce loop is 2(n-1) primitives (device/all_reduce.h:33-80), each moving
// one chunk split into work items: 2 slices with Simple (prims_simple.h:183-184; each slice
// serialised by a peer-flag spin, two barriers, a system fence and a flag store, 165-173 and
// 217-282), block iterations of 20 warps x 1920 bytes with LL128 (prims_ll128.h), 8-byte flagged
// lines with LL (no per-item sync). NVLS runs chunks of 16-128 KiB (enqueue.cc:2258-2274)
// through a scatter / multimem reduce-broadcast / gather pipeline (all_reduce.h:390-457).
//
// Per step of a ring, W items each cost c = (item bytes at the tuner's per-channel rate) + tau_p
// (the serialized per-item cost, hardware.collectives.*_us), and a step cannot finish before the
// previous rank's first item arrived (the tuner's per-step hop latency h):
//   step = max(W * c, c + h),   T_kernel = base + sum over loops of steps * step.
// With tau = 0 and one item per step this is the tuner's own latency + bytes / bandwidth. The
// host enqueues one kernel per GPU it drives (nccl-tests -g N from one thread, DDP one per
// process; none per call from a CUDA graph), and calls queue behind it:
//   T = max(T_kernel, gpus_per_process * host_launch).
#pragma once

#include "model/collective_op.hpp"
#include "model/hardware/hardware.hpp"
#include "model/scenario/scenario.hpp"

namespace ddpsim::sim {

/// One call as the tuner chose it.
struct NcclCall {
  model::CollectiveOp op = model::CollectiveOp::kAllReduce;
  model::CollectiveAlgorithm algorithm = model::CollectiveAlgorithm::kRing;
  model::CollectiveProtocol protocol = model::CollectiveProtocol::kSimple;
  int ranks = 2;
  int nodes = 1;
  int channels = 1;         ///< channels that run (enqueue.cc's small-message cut)
  int nvls_heads = 1;       ///< NVLS heads (GPUs of the node)
  double bytes = 0;         ///< nccl-tests' "size"
  double base_us = 0;       ///< the tuner's per-call base latency of this (algorithm, protocol)
  double step_us = 0;       ///< its per-step hop latency (averaged over the steps)
  double tuner_us = 0;      ///< its whole estimate on the running channels (lat + bytes / bw)
  double bandwidth_us = 0;  ///< the bytes / bandwidth part of tuner_us
  /// Trees: the per-channel rate of an intra-node hop (GB/s), NCCL's tree graph bwIntra.
  double intra_channel_gbytes_per_s = 0;
};

/// Where the time goes.
struct NcclKernelTime {
  double time_s = 0;       ///< max(kernel, host)
  double kernel_s = 0;     ///< the kernel on the GPU
  double host_s = 0;       ///< host enqueue per call (0 from a CUDA graph)
  double chunk_bytes = 0;  ///< per primitive (ring) or per NVLS/tree chunk, first loop
  long long loops = 0;     ///< loops (ring) or chunks (NVLS, tree) per channel
  int items_per_step = 0;  ///< work items per primitive (first loop)
};

/// The call's time under `costs` (hardware.collectives' slice, iteration, chunk and launch
/// costs). Precondition: c.bytes > 0, c.ranks >= 2, c.channels >= 1.
NcclKernelTime nccl_kernel_time(const NcclCall& c, const model::NcclKernelCosts& costs);

}  // namespace ddpsim::sim
