// nccl_tuning.hpp: NCCL's own cost model and tuner, rebuilt from its source (NVIDIA/nccl 2.30.7,
// mirrored commit; file:line cited in nccl_tuning.cpp).
//
// NCCL predicts every collective as time = latency + bytes / bandwidth for each (algorithm,
// protocol) it has on the machine (src/graph/tuning.cc ncclTopoTuneModel, ncclTopoGetAlgoTime)
// and runs the fastest (src/enqueue.cc topoGetAlgoInfo). The latency is a per-call base
// latency plus per-step hardware latencies by link type (NVLink, PCIe, network); the bandwidth
// is channels x per-channel bandwidth from its topology search (src/graph/search.cc), capped per
// protocol (LL: half the line is flags; LL128: 120 of 128 bytes; Simple), then converted from
// bus to algorithm bandwidth. For small messages NCCL runs fewer channels than it has
// (enqueue.cc: while nBytes < nc*nt*threshold, nc--); the time returned here charges the
// channels that really run.
//
// What ddpsim supplies: the per-GPU NVLink/PCIe rate and the NIC rates from the cluster graph
// (physical link rates from the presets) times the achievable fraction the preset names
// (`ring_efficiency`: NCCL's own per-link NVLink figure over the datasheet's, src/graph/topo.h),
// the GPU generation (`gpu.compute_capability`) and NVLS efficiency (`nvls_efficiency`,
// tuning.cc nvlsEfficiency). Everything else is NCCL's constants.
//
//   auto bw = model::Topology(hw, 8).bandwidths();
//   NcclPlan p = *nccl_plan(model::CollectiveOp::kAllReduce, bw, hw, 1 << 20,
//                           model::CollectiveAlgorithm::kAuto, model::CollectiveProtocol::kAuto);
//   p.algorithm; p.protocol; p.channels; p.time_s;
#pragma once

#include <optional>

#include "model/collective_op.hpp"
#include "model/hardware/cluster.hpp"
#include "model/hardware/hardware.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/collectives/nccl_pipeline.hpp"

namespace ddpsim::sim {

/// NCCL's view of one communicator on this machine: the graphs its topology search would find.
/// Bandwidths are GB/s (10^9 byte/s) per channel, as NCCL keeps them.
struct NcclGraph {
  int channels = 0;     ///< graph->nChannels (0: no such graph)
  double bw_intra = 0;  ///< graph->bwIntra
  double bw_inter = 0;  ///< graph->bwInter
};

namespace detail {
struct NcclVersionConstants;  // detail/nccl_versions.hpp
}

struct NcclSystem {
  const detail::NcclVersionConstants* version = nullptr;  ///< the release's tuner constants
  int arch = 1;  ///< tuning.cc compCapIndex: 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell
  int ranks = 1;
  int nodes = 1;
  double ppn = 1;      ///< ranks per node
  bool nvlink = true;  ///< intra-node graph over NVLink (else PCIe: no LL128)
  /// LL128 enabled for this GPU by the release's compute-capability rule (tuning.cc's switch on
  /// minCompCap: 7.0, 8.0, 9.0 until 2.25; 10.0 and 12.0 too from 2.26; any >= 7.0 from 2.27).
  bool ll128_arch = true;
  /// The hosts' CPU vendor (HardwareSpec::cpu_vendor): across nodes AMD hosts read the AMD row of
  /// llMaxBws and getNetOverhead's AMD figure.
  model::HardwareSpec::CpuVendor cpu_vendor = model::HardwareSpec::CpuVendor::kIntel;
  NcclGraph ring;  ///< also the tree graph's channels (init.cc: tree min=max=ring)
  NcclGraph tree;
  NcclGraph nvls;             ///< channels 0 unless the NVSwitch reduces (Hopper and later)
  int comm_channels = 1;      ///< comm->nChannels at run time (connect.cc doubles the graph's)
  int nvls_run_channels = 0;  ///< comm->nvlsChannels (nvls.cc NVLS_NCHANNELS_SM90 16)
  double nvls_efficiency = 0;
  double net_reported_us = 0;  ///< the plugin's latency NCCL's tuner adds per network step
  double net_physical_us = 0;  ///< the NIC's per-hop latency the time charges
};

/// The system NCCL would see for `bw` (GPUs, nodes, link rates) on `hw`.
NcclSystem nccl_system(const model::CollectiveBandwidths& bw, const model::HardwareSpec& hw);

/// One (algorithm, protocol) as NCCL costs it and runs it.
struct NcclPlan {
  model::CollectiveAlgorithm algorithm = model::CollectiveAlgorithm::kRing;
  model::CollectiveProtocol protocol = model::CollectiveProtocol::kSimple;
  int channels = 1;         ///< channels that run this call (after NCCL's small-message cut)
  double model_time_s = 0;  ///< NCCL's own estimate (all channels), what its tuner compares
  double tuner_time_s = 0;  ///< that estimate on the channels that run (lat + bytes / bw)
  double time_s = 0;        ///< the call as the kernel runs it (nccl_pipeline.hpp)
  NcclKernelTime kernel;    ///< where time_s goes: kernel, host, chunks, loops
};

/// NCCL's choice for `bytes` (nccl-tests' "size") of collective `op`: the fastest (algorithm,
/// protocol) NCCL enables here for `reduction` (model::Reduction: an average runs on neither
/// NVLS nor PAT), restricted to `algorithm` / `protocol` unless kAuto (like NCCL_ALGO /
/// NCCL_PROTO). nullopt when nothing NCCL has matches the restriction (e.g. NVLS on an A100,
/// tree for an all-gather, NVLS for an average). Preconditions: bw.gpus >= 2, bytes > 0;
/// `algorithm` is not kHierarchical (not an NCCL algorithm).
std::optional<NcclPlan> nccl_plan(model::CollectiveOp op, const model::CollectiveBandwidths& bw,
                                  const model::HardwareSpec& hw, double bytes,
                                  model::CollectiveAlgorithm algorithm,
                                  model::CollectiveProtocol protocol,
                                  model::Reduction reduction = model::Reduction::kSum);

}  // namespace ddpsim::sim
