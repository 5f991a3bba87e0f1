// hardware.hpp: the machines a scenario runs on, as plain data.
//
// A HardwareSpec is what the scenario's "hardware" section resolves to after its preset
// (scenarios/hardware/<name>.json) and the keys beside it are merged. Physical link rates are
// typed in once, here; effective collective bandwidth is derived from the cluster graph
// (cluster.hpp), and what fraction of it a real library reaches (algorithm efficiency) and the
// per-step latency are constants fitted to published nccl-tests rows or to a calibration profile.
//
// Units: every rate in this struct is bytes per second in one direction, every latency seconds,
// every size bytes; the conversion from the JSON's *_gbps / *_gbytes_per_s / *_us happens in the
// scenario loader.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/workload/workload.hpp"

namespace ddpsim::model {

class Profile;  // model/profile/profile.hpp

/// One accelerator.
struct GpuSpec {
  std::string name;                    ///< e.g. "h100-sxm"
  std::map<DType, double> peak_flops;  ///< dense peak, FLOP/s, per compute dtype
  std::map<DType, double> efficiency;  ///< fraction of peak of the best-shaped GEMM, per dtype
  /// TF32 tensor-core math (Ampere and newer): fp32 operands rounded to 10 mantissa bits,
  /// accumulated in fp32. Not a storage dtype, so not in the maps above: peak_tflops.tf32 and
  /// efficiency.tf32 of the preset; 0 when the GPU has no TF32 (V100) or the preset omits it.
  double tf32_peak_flops = 0;
  double tf32_efficiency = 0;
  int sm_count = 0;  ///< streaming multiprocessors (wave quantization); 0: not modelled
  /// Fraction of the fp16/bf16 peak a fused attention kernel's executed FLOPs run at (forward,
  /// backward); 0 when no kernel benchmark is known for this GPU.
  double attention_fwd_efficiency = 0;
  double attention_bwd_efficiency = 0;
  /// A fused attention kernel's measured forward+backward rate by shape (FlashAttention-2's
  /// benchmark, benchmarks/benchmark_flash_attention.py: executed FLOPs, the causal half skipped,
  /// backward 2.5x forward), for one kernel, causality and head dimension over sequence lengths.
  struct AttentionBenchmark {
    std::string kernel;  ///< "flash2" (sdpa, flash) or "triton"
    bool causal = false;
    double head_dim = 0;
    std::vector<double> seq_len;      ///< ascending
    std::vector<double> flops_per_s;  ///< forward+backward executed FLOP/s at each seq_len
  };
  std::vector<AttentionBenchmark> attention_benchmarks;
  /// One GEMM shape a sustained matmul sweep timed (cuBLAS/cuBLASLt, random operands).
  struct GemmMeasurement {
    double m = 0, n = 0, k = 0;
    double flops_per_s = 0;  ///< as measured
  };
  /// Measured GEMM rates by shape, per compute dtype (the preset's gemm_table): the shape
  /// dependence of cuBLAS beyond tile and wave quantization (kernel_rates.hpp
  /// gemm_shape_factor). Empty: the tile model alone.
  std::map<DType, std::vector<GemmMeasurement>> gemm_table;
  std::string gemm_table_source;
  double memory_bytes = 0;         ///< HBM capacity
  double memory_bandwidth = 0;     ///< HBM bytes/s
  double memory_efficiency = 0.8;  ///< achievable fraction of memory_bandwidth for streaming ops
  /// Seconds a memory-bound kernel takes beyond its bytes at the streaming rate: the launch and
  /// ramp of one kernel among many queued back to back (gpu.kernel_floor_us); 0: not modelled.
  double kernel_floor_s = 0;
  /// CUDA compute capability (7.0 V100, 8.0 A100, 9.0 H100/H200): picks NCCL's per-generation
  /// tuning constants (simulator/collectives/nccl_tuning.hpp).
  double compute_capability = 8.0;
  std::string source;  ///< datasheet
};

/// A class of link with its physical rate and latency.
struct LinkSpec {
  std::string name;      ///< "nvlink4", "pcie4-x16", "ib-ndr-400", ...
  double bandwidth = 0;  ///< bytes/s, one direction, per GPU (intra-node) or per NIC (inter-node)
  double latency = 0;    ///< seconds per hop as the collective library sees it (alpha)
  /// NICs: the latency the network plugin reports to NCCL (aws-ofi-nccl 75 us on p4d/p5, 35 us
  /// on p5en/p6; NCCL's IB and socket transports 0). NCCL's tuner adds it to every inter-node
  /// step (twice with Simple) when it ranks algorithms; the time uses `latency`.
  double reported_latency = 0;
  /// "intra_node" (NVLink class), "pcie" or "nic": a PCIe intra-node fabric is a PCIe switch in
  /// the cluster graph, not an NVSwitch.
  std::string kind = "intra_node";
};

/// Fitted behaviour of the collective library on a class of links: t = steps*alpha + bytes/(eta*B).
struct CollectiveTuning {
  double ring_efficiency = 0.9;   ///< eta for ring algorithms on this link class
  double tree_efficiency = 0.85;  ///< eta for (double binary) trees
  double nvls_efficiency = 0.0;   ///< eta for NVLink SHARP (0: the switch cannot reduce)
  double latency = 0;             ///< alpha per algorithm step, seconds
  double nvls_latency = 25e-6;    ///< whole-operation latency of NVLS (NCCL models 25 us)
};

/// What NCCL's kernels pay beyond the tuner's latency and bandwidth (simulator/collectives/
/// nccl_pipeline.hpp), and how the job launches them. Seconds; 0: not modelled.
struct NcclKernelCosts {
  /// Serialized cost of one Simple-protocol slice (spin on the peer's flag, two block barriers,
  /// a system fence and the flag store: src/device/prims_simple.h genericOp/postPeer).
  double simple_slice = 0;
  /// ... of one LL128 block iteration (a warp's 1920 data bytes per 2 KiB line set, barrier,
  /// __threadfence_system, post: src/device/prims_ll128.h).
  double ll128_iteration = 0;
  /// ... of one NVLS chunk through the scatter / multimem reduce-broadcast / gather groups
  /// (src/device/all_reduce.h runNvls).
  double nvls_chunk = 0;
  /// Host time to enqueue one GPU's collective kernel (ncclGroupEnd's plan and launch).
  double host_launch = 0;
  /// GPUs one host thread launches for (nccl-tests -g N: N; torchrun/DDP: 1).
  int gpus_per_process = 1;
  /// Launched from a captured CUDA graph: no host enqueue per call.
  bool cuda_graphs = false;
  /// The NCCL release whose tuner constants and chunk sizes apply ("2.30.7").
  std::string nccl_version = "2.30.7";
  /// NCCL_BUFFSIZE: the Simple protocol's buffer per channel and peer, NCCL_STEPS slots of it
  /// (init.cc DEFAULT_BUFFSIZE 4 MiB); a ring chunk is 4 slots, a tree's or a broadcast's 1.
  double buffsize_bytes = 4194304;
  /// NCCL_NVLS_CHUNKSIZE: the largest NVLS chunk (transport/nvls.cc, 128 KiB).
  double nvls_chunk_bytes = 131072;
  /// NCCL_NVLSTREE_MAX_CHUNKSIZE; 0: NCCL's default (-2: 64 KiB from 4 nodes, else the NVLS
  /// chunk).
  double nvls_tree_max_chunk_bytes = 0;
};

/// How collectives are costed: NCCL's own tuning model (presets), or the alpha-beta line of the
/// `collectives` constants (a calibration profile's measured line, a hand-described machine).
enum class CollectiveModel { kNccl, kAlphaBeta };

/// A whole system: nodes of identical GPUs joined by an intra-node fabric and NICs.
struct HardwareSpec {
  std::string name;  ///< preset name ("dgx-h100") or "custom"
  GpuSpec gpu;
  /// GPUs in one NVLink domain, the graph's "node" (a DGX: its 8; GB200 NVL72: the rack's 72,
  /// whose 18 hosts share one NVLink switch fabric, NCCL's multi-node NVLink).
  int gpus_per_node = 8;
  /// GPUs per host (the unit that fails and writes checkpoints, reliability.node_mtbf_hours);
  /// 0: gpus_per_node (one host per NVLink domain).
  int gpus_per_host = 0;
  /// The host CPUs' vendor as NCCL's topology reads it (comm->cpuVendor): only AMD changes its
  /// tuner (the LL caps across nodes and the ring's network overhead); ARM counts as other.
  enum class CpuVendor { kIntel, kAmd, kArm } cpu_vendor = CpuVendor::kIntel;
  int hosts_per_node() const { return gpus_per_host > 0 ? gpus_per_node / gpus_per_host : 1; }
  LinkSpec intra_node;              ///< per-GPU fabric bandwidth (NVLink via NVSwitch, or PCIe)
  bool intra_node_switched = true;  ///< NVSwitch/PCIe switch (all-to-all) vs point-to-point mesh
  LinkSpec pcie;                    ///< GPU <-> NIC path inside a node
  LinkSpec inter_node;              ///< one NIC: bandwidth per NIC, latency per network hop
  int nics_per_node = 1;
  double oversubscription = 1.0;  ///< leaf-to-spine oversubscription of the fat tree (>= 1)
  int nodes_per_leaf = 32;        ///< nodes under one leaf switch
  CollectiveTuning intra_tuning;  ///< NCCL-like behaviour inside a node
  CollectiveTuning inter_tuning;  ///< ... and across nodes
  CollectiveModel collective_model = CollectiveModel::kNccl;  ///< "collectives": {"model": ...}
  NcclKernelCosts nccl_kernel;  ///< "collectives": slice, iteration and launch costs, version
  std::string source;           ///< where the numbers come from (datasheets, nccl-tests row ids)
  /// The calibration profile the spec was read from ("hardware.profile" or "preset":
  /// "this-machine"); null for presets and explicit keys. Its measured GEMM and collective
  /// tables refine what the fields above summarise (model/profile/profile.hpp).
  std::shared_ptr<const Profile> profile;
  /// What reading the hardware noticed: a profile measured on another machine (named
  /// explicitly, so used), or one whose kernel, memory or age differ (machine_match.hpp).
  std::vector<std::string> warnings;
};

}  // namespace ddpsim::model
