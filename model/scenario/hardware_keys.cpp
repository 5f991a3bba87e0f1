// The rows of a hardware section (scenario "/hardware" and the preset files).
#include "model/scenario/detail/hardware_keys.hpp"

#include <string>
#include <vector>

#include "model/scenario/detail/key_rows.hpp"

namespace ddpsim::model::detail {

using nlohmann::json;

namespace {

const std::vector<std::string> kSystemPresets = {"dgx-1",    "dgx-a100", "dgx-h100",
                                                 "hgx-h200", "dgx-b200", "gb200-nvl72",
                                                 "aws-p4de", "aws-p5",   "this-machine"};
const std::vector<std::string> kGpuPresets = {"v100-sxm2", "a100-sxm-80gb", "h100-sxm",
                                              "h200-sxm",  "b200-sxm",      "gb200"};

// Keys shared by every link description (intra-node fabric, PCIe, NIC).
void add_link_keys(std::vector<KeySpec>& t, const std::string& p, bool nic) {
  t.push_back(pattern_str(p + "/preset", nullptr, "[a-z0-9][a-z0-9.-]*",
                          "link preset in scenarios/hardware/links/ (e.g. nvlink4, pcie5-x16, "
                          "ib-ndr-400); keys beside it override it"));
  t.push_back(str(p + "/name", nullptr, {}, "name of the link class"));
  t.push_back(str(p + "/kind", nullptr, {"intra_node", "pcie", "nic"}, "what the link is"));
  t.push_back(str(p + "/description", nullptr, {}, "free text"));
  t.push_back(str(p + "/source", nullptr, {}, "datasheet or measurement the rate comes from"));
  if (nic) {
    t.push_back(number(p + "/bandwidth_gbps", "Gbit/s", nullptr, 1e-6, false,
                       "rate of one NIC in one direction (10^9 bit/s)", 1e9));
    t.push_back(integer(p + "/nics_per_node", "NICs", nullptr, 1,
                        "NICs per node used by the collectives (multi-rail); more than one per "
                        "GPU are merged into one NCCL device per GPU (aws-ofi-nccl rails, "
                        "NCCL_IB_MERGE_NICS)",
                        1024));
    t.push_back(number(p + "/reported_latency_us", "us", 0.0, 0, false,
                       "latency the network plugin reports to NCCL (aws-ofi-nccl: 75 on p4d/p5, "
                       "35 on p5en/p6; IB, RoCE: 0): NCCL's tuner adds it per inter-node step "
                       "(twice with Simple) when it chooses an algorithm; times use latency_us",
                       1e6));
  } else {
    t.push_back(number(p + "/bandwidth_gbytes_per_s", "GB/s", nullptr, 1e-6, false,
                       "rate per GPU in one direction (10^9 byte/s); vendor bidirectional "
                       "figures are halved",
                       1e9));
  }
  t.push_back(number(p + "/latency_us", "us", nullptr, 0, false,
                     "latency per hop as the collective library sees it", 1e9));
}

void add_tuning_keys(std::vector<KeySpec>& t, const std::string& p, double latency_default) {
  t.push_back(obj(p,
                  "collective-library behaviour on this link class: t = steps*alpha + "
                  "bytes/(efficiency*bandwidth)"));
  t.push_back(number(p + "/ring_efficiency", "", 0.9, 1e-6, false,
                     "fraction of the ring bus bandwidth a real library reaches", 1.0));
  t.push_back(number(p + "/tree_efficiency", "", 0.85, 1e-6, false,
                     "fraction of the bandwidth double binary trees reach", 1.0));
  t.push_back(number(p + "/nvls_efficiency", "", 0.0, 0, false,
                     "fraction of the per-GPU fabric rate NVLink SHARP reaches (0: none)", 1.0));
  t.push_back(number(p + "/latency_us", "us", latency_default, 0, false,
                     "alpha: latency per algorithm step (defaults: NCCL 2.30 tuning.cc Simple "
                     "protocol, NVLink 3.4 us, network 14 us)",
                     1e9));
  t.push_back(number(p + "/nvls_latency_us", "us", 25.0, 0, false,
                     "latency of a whole NVLS all-reduce (NCCL 2.30 tuning.cc: 25 us)", 1e9));
}

}  // namespace

void add_hardware_keys(std::vector<KeySpec>& t, const std::string& h) {
  t.push_back(str(h + "/preset", nullptr, kSystemPresets,
                  "system preset (scenarios/hardware/<name>.json); keys beside it override it"));
  t.push_back(
      str(h + "/file", nullptr, {}, "a hardware file in the preset format, relative to this file"));
  t.push_back(
      str(h + "/profile", nullptr, {}, "a calibration profile JSON written by `ddpsim calibrate`"));
  t.push_back(str(h + "/name", nullptr, {}, "name of the system"));
  t.push_back(str(h + "/description", nullptr, {}, "free text"));
  t.push_back(str(h + "/source", nullptr, {}, "where the numbers come from"));
  t.push_back(obj(h + "/gpu", "the accelerator"));
  t.push_back(str(h + "/gpu/preset", nullptr, kGpuPresets,
                  "GPU preset (scenarios/hardware/gpus/<name>.json); keys beside it override it"));
  t.push_back(str(h + "/gpu/name", nullptr, {}, "GPU name"));
  t.push_back(str(h + "/gpu/description", nullptr, {}, "free text"));
  t.push_back(str(h + "/gpu/source", nullptr, {}, "datasheet"));
  t.push_back(number(h + "/gpu/memory_gib", "GiB", nullptr, 0, true, "HBM capacity"));
  t.push_back(number(h + "/gpu/memory_bandwidth_gbytes_per_s", "GB/s", nullptr, 1e-6, false,
                     "HBM bandwidth (10^9 byte/s)", 1e9));
  t.push_back(number(h + "/gpu/memory_efficiency", "", 0.8, 1e-6, false,
                     "achievable fraction of HBM bandwidth for streaming kernels", 1.0));
  t.push_back(number(h + "/gpu/kernel_floor_us", "us", 0.0, 0, false,
                     "time a memory-bound kernel takes beyond its bytes (launch and ramp, one of "
                     "many queued back to back); charged once per kernel",
                     1e6));
  t.push_back(number(h + "/gpu/compute_capability", "", 8.0, 3.0, false,
                     "CUDA compute capability (7.0 V100, 8.0 A100, 9.0 H100): selects NCCL's "
                     "per-generation tuning constants",
                     20.0));
  t.push_back(obj(h + "/gpu/peak_tflops", "dense peak per compute dtype (no sparsity)"));
  t.push_back(obj(h + "/gpu/efficiency",
                  "achievable fraction of peak of the best-shaped large GEMM (a matmul sweep's "
                  "maximum), per dtype; smaller shapes lose to tile and wave quantization"));
  t.push_back(integer(h + "/gpu/sm_count", "SMs", 0, 0,
                      "streaming multiprocessors, for wave quantization of GEMMs (0: not "
                      "modelled)",
                      1 << 16));
  t.push_back(obj(h + "/gpu/attention_efficiency",
                  "fraction of the fp16/bf16 peak fused attention kernels (FlashAttention-2, "
                  "what scaled_dot_product_attention runs) reach, from kernel benchmarks"));
  t.push_back(number(h + "/gpu/attention_efficiency/fwd", "", nullptr, 1e-6, false,
                     "forward kernel, executed FLOPs over the peak", 1.0));
  t.push_back(number(h + "/gpu/attention_efficiency/bwd", "", nullptr, 1e-6, false,
                     "backward kernel, executed FLOPs (with the recomputation) over the peak",
                     1.0));
  t.push_back(str(h + "/gpu/attention_efficiency/source", nullptr, {},
                  "the kernel benchmark the two fractions come from"));
  t.push_back(obj(h + "/gpu/attention_kernels",
                  "fused attention kernels' measured forward+backward rates by shape "
                  "(FlashAttention-2's benchmark_flash_attention.py); scale attention_efficiency "
                  "to the scenario's sequence length, head dimension and causality"));
  t.push_back(str(h + "/gpu/attention_kernels/source", nullptr, {}, "the benchmark"));
  for (const char* k : {"flash2", "triton", "flash1"}) {
    const std::string base = h + "/gpu/attention_kernels/" + k;
    const std::string what = k == std::string("flash2") ? "FlashAttention-2 (sdpa and flash run it)"
                             : k == std::string("triton")
                                 ? "FlashAttention's Triton port (attention triton)"
                                 : "FlashAttention-1 (attention triton where no triton series "
                                   "is measured)";
    t.push_back(array(base, 1, what + ": one entry per causality and head dimension"));
    t.push_back(obj(base + "/*", "one series of the benchmark"));
    KeySpec causal = boolean(base + "/*/causal", false, "causal mask");
    causal.default_value = nullptr;  // every series says which it is
    t.push_back(required(causal));
    t.push_back(required(
        integer(base + "/*/head_dim", "elements", nullptr, 1, "per-head dimension", 4096)));
    t.push_back(required(array(base + "/*/seq_len", 1, "sequence lengths, ascending")));
    t.push_back(integer(base + "/*/seq_len/*", "tokens", nullptr, 1, "a sequence length", 1 << 24));
    t.push_back(required(
        array(base + "/*/fwd_bwd_tflops", 1, "forward+backward executed TFLOP/s at each seq_len")));
    t.push_back(
        number(base + "/*/fwd_bwd_tflops/*", "TFLOP/s", nullptr, 0, true, "measured rate", 1e6));
  }
  t.push_back(obj(h + "/gpu/gemm_table",
                  "measured GEMM rates by shape (a sustained cuBLAS/cuBLASLt sweep), per compute "
                  "dtype: the shape dependence beyond tile and wave quantization, relative to the "
                  "sweep's best shape, which runs at efficiency x peak"));
  t.push_back(str(h + "/gpu/gemm_table/source", nullptr, {}, "the sweep and how it was run"));
  for (const char* d : {"fp32", "fp16", "bf16"}) {
    const std::string base = h + "/gpu/gemm_table/" + d;
    t.push_back(array(base, 1, std::string(d) + " GEMMs: one entry per measured shape"));
    t.push_back(obj(base + "/*", "one measured shape"));
    for (const char* e : {"m", "n", "k"}) {
      t.push_back(required(integer(base + "/*/" + e, "elements", nullptr, 1,
                                   std::string("the GEMM's ") + e + " extent", 1LL << 40)));
    }
    t.push_back(required(
        number(base + "/*/tflops", "TFLOP/s", nullptr, 0, true, "the measured rate", 1e6)));
  }
  for (const char* d : {"fp32", "tf32", "fp16", "bf16", "fp8"}) {
    t.push_back(number(
        h + "/gpu/peak_tflops/" + d, "TFLOP/s", nullptr, 1e-6, false,
        std::string("dense ") + d +
            (std::string(d) == "tf32" ? " tensor-core peak (fp32 matmuls and convolutions PyTorch "
                                        "allows TF32: training.allow_tf32_*)"
                                      : " peak"),
        1e9));
    t.push_back(number(h + "/gpu/efficiency/" + d, "", nullptr, 1e-6, false,
                       std::string("achievable fraction of the ") + d + " peak", 1.0));
  }
  t.push_back(integer(h + "/gpus_per_node", "GPUs", nullptr, 1,
                      "GPUs in one node: one NVLink domain (a DGX's 8, a GB200 NVL72 rack's 72)",
                      1024));
  t.push_back(integer(h + "/gpus_per_host", "GPUs", nullptr, 1,
                      "GPUs per host when an NVLink domain spans several (GB200 NVL72: 4); the "
                      "unit of reliability.node_mtbf_hours and of per-node checkpoint bandwidth "
                      "(default: gpus_per_node)",
                      1024));
  t.push_back(str(h + "/cpu_vendor", "intel", {"intel", "amd", "arm"},
                  "the host CPUs' vendor, which NCCL's tuner reads across nodes (its cpuVendor: "
                  "AMD hosts get the AMD row of the LL bandwidth caps and twice the ring's "
                  "per-step network overhead; tuning.cc getNetOverhead, llMaxBws)"));
  t.push_back(obj(h + "/intra_node", "per-GPU fabric inside a node (NVLink via NVSwitch, PCIe)"));
  add_link_keys(t, h + "/intra_node", false);
  t.push_back(boolean(h + "/intra_node_switched", true,
                      "the fabric is switched (NVSwitch) rather than a point-to-point mesh"));
  t.push_back(obj(h + "/pcie", "GPU-to-NIC path inside a node"));
  add_link_keys(t, h + "/pcie", false);
  t.push_back(obj(h + "/inter_node", "one NIC and how many each node has"));
  add_link_keys(t, h + "/inter_node", true);
  t.push_back(obj(h + "/network", "the fabric between nodes (a two-level fat tree)"));
  t.push_back(number(h + "/network/oversubscription", "", 1.0, 1, false,
                     "leaf-to-spine oversubscription (1: non-blocking)", 1024));
  t.push_back(
      integer(h + "/network/nodes_per_leaf", "nodes", 32, 1, "nodes under one leaf switch", 1e6));
  t.push_back(obj(h + "/collectives", "collective-library constants"));
  t.push_back(str(h + "/collectives/model", "nccl", {"nccl", "alpha_beta"},
                  "nccl: NCCL's own tuning model (algorithms x protocols, channels; the constants "
                  "below give the achievable link fractions and NVLS efficiency); alpha_beta: one "
                  "line per algorithm from these constants (a measured or hand-described "
                  "machine; calibration profiles)"));
  t.push_back(number(h + "/collectives/simple_slice_us", "us", 0.0, 0, false,
                     "serialized cost of one Simple-protocol slice in NCCL's kernel (peer flag "
                     "spin, two barriers, system fence, flag store; 0: not modelled)",
                     1e6));
  t.push_back(number(h + "/collectives/ll128_iteration_us", "us", 0.0, 0, false,
                     "serialized cost of one LL128 block iteration (0: not modelled)", 1e6));
  t.push_back(number(h + "/collectives/nvls_chunk_us", "us", 0.0, 0, false,
                     "serialized cost of one NVLS chunk per channel (0: not modelled)", 1e6));
  t.push_back(number(h + "/collectives/host_launch_us", "us", 0.0, 0, false,
                     "host time to enqueue one GPU's collective kernel; a call takes at least "
                     "gpus_per_process of them unless cuda_graphs (0: not modelled)",
                     1e6));
  t.push_back(integer(h + "/collectives/gpus_per_process", "GPUs", 1, 1,
                      "GPUs one host thread launches collectives for (nccl-tests -g N; "
                      "torchrun and DDP: 1)",
                      1024));
  t.push_back(boolean(h + "/collectives/cuda_graphs", false,
                      "collectives launched from a captured CUDA graph (nccl-tests -G; no host "
                      "enqueue per call)"));
  t.push_back(integer(h + "/collectives/buffsize_bytes", "bytes", 4194304, 65536,
                      "NCCL_BUFFSIZE: the Simple protocol's buffer per channel and peer (NCCL's "
                      "default 4 MiB; aws-ofi-nccl sets 8 MiB on p4d, p4de and p5): ring chunks "
                      "are half of it, tree chunks an eighth",
                      1 << 30));
  t.push_back(integer(h + "/collectives/nvls_chunk_bytes", "bytes", 131072, 4096,
                      "NCCL_NVLS_CHUNKSIZE: the largest NVLS chunk (NCCL's default 128 KiB; "
                      "aws-ofi-nccl sets 512 KiB on p5)",
                      1 << 30));
  t.push_back(integer(h + "/collectives/nvls_tree_max_chunk_bytes", "bytes", 0, 0,
                      "NCCL_NVLSTREE_MAX_CHUNKSIZE: the largest NVLS_TREE chunk; 0: NCCL's "
                      "default (64 KiB from 4 nodes, else the NVLS chunk; aws-ofi-nccl sets "
                      "512 KiB on p5)",
                      1 << 30));
  t.push_back(
      pattern_str(h + "/collectives/nccl_version", "2.30.7", "^2\\.[0-9]+\\.[0-9]+$",
                  "NCCL release whose tuner constants and chunk sizes apply (2.18.0 .. 2.30.x)"));
  add_tuning_keys(t, h + "/collectives/intra_node", 3.4);
  add_tuning_keys(t, h + "/collectives/inter_node", 14.0);
  t.push_back(array(h + "/collectives/fitted_from", 0,
                    "ids of the published rows (scenarios/data/published-measurements.json) "
                    "the constants were fitted to"));
  t.push_back(str(h + "/collectives/fitted_from/*", nullptr, {}, "row id"));
}

}  // namespace ddpsim::model::detail
