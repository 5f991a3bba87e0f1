// nccl_system.cpp: NCCL's view of one communicator on this machine (nccl_tuning.hpp's
// nccl_system): the graphs its topology search would find (src/graph/search.cc: speed arrays,
// channel counts, the tree and NVLS passes), the channels a communicator runs with (connect.cc)
// and the release's constants. nccl_tuning.cpp ranks and times calls on it.
//
// Every constant below is NVIDIA/nccl v2.30.7 (commit 5067397c2676d5aed50042fc39e5c8ee96eb0027),
// cited as file:line at that commit; the per-release tables are detail/nccl_versions.hpp. The
// code is ddpsim's own, written from the formulas.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "model/hardware/nccl_version.hpp"
#include "simulator/collectives/detail/nccl_versions.hpp"
#include "simulator/collectives/nccl_tuning.hpp"

namespace ddpsim::sim {

namespace {

// The release's search.cc speed array (GB/s per channel, in search order) for the GPU generation:
// [Volta/Ampere, Hopper, Blackwell], intra- or inter-node (detail/nccl_versions.hpp cites each).
std::span<const double> speeds(const detail::NcclVersionConstants& v, int arch, bool inter) {
  const detail::NcclSpeeds& a = (inter ? v.speed_inter : v.speed_intra)[arch >= 3   ? 2
                                                                        : arch >= 2 ? 1
                                                                                    : 0];
  return {a.v.data(), static_cast<std::size_t>(a.n)};
}

// The ring search (search.cc:1074-1287), reduced to bandwidth: the fastest speed of the array a
// path allows, then slower speeds while they keep above 0.49 of the best (search.cc:1245) and
// give more channels x speed; `channels_at(s)` is how many channels of speed s the links carry.
template <class F>
NcclGraph search_ring(std::span<const double> arr, double max_bw, int arch, int max_channels,
                      F channels_at) {
  NcclGraph best;
  for (double s : arr) {
    if (s > max_bw) continue;
    if (best.channels > 0 && s / best.bw_inter <= 0.49) break;
    const int n = std::min(max_channels, channels_at(s));
    if (n >= 1 && n * s > best.channels * best.bw_inter) best = {n, s, s};
  }
  if (best.channels == 0) best = {1, arr.back(), arr.back()};
  // search.cc:1036-1049 ncclTopoDupChannels: fast channels are split in two.
  if (best.bw_intra >= 25.0 && !(arch >= 2 && best.bw_intra < 50.0 && best.channels > 4)) {
    const int dup = std::min(best.channels * 2, max_channels);
    const double div = std::ceil(static_cast<double>(dup) / best.channels);
    best = {dup, best.bw_intra / div, best.bw_inter / div};
  }
  return best;
}

int fit(double total, double s) { return static_cast<int>(std::floor(total / s + 1e-9)); }

// Pass 2 for trees and NVLS (search.cc:1267-1283): bwIntra (trees) or bwInter (NVLS) is raised
// along the array while it stays below twice the other and the links carry it.
double raise_to(std::span<const double> arr, double from, double limit, double cap) {
  double v = from;
  for (auto it = arr.rbegin(); it != arr.rend(); ++it) {
    if (*it <= v) continue;
    if (v >= limit || *it > cap) break;
    v = *it;
  }
  return v;
}

}  // namespace

NcclSystem nccl_system(const model::CollectiveBandwidths& bw, const model::HardwareSpec& hw) {
  NcclSystem s;
  const auto version = model::parse_nccl_version(hw.nccl_kernel.nccl_version);
  s.version = version
                  ? detail::nccl_version_constants(version->major, version->minor, version->patch)
                  : nullptr;
  if (!s.version) s.version = &detail::kNccl2_30_7;
  const double cc = hw.gpu.compute_capability;
  // tuning.cc:263-266 compCapIndex.
  s.arch = cc >= 10.0 ? 3 : cc >= 9.0 ? 2 : cc >= 8.0 ? 1 : 0;
  s.ranks = bw.gpus;
  s.nodes = bw.nodes;
  s.ppn = static_cast<double>(bw.gpus) / bw.nodes;
  s.nvlink = hw.intra_node.kind != "pcie";
  s.cpu_vendor = hw.cpu_vendor;
  const int cc10 = static_cast<int>(std::lround(cc * 10));  // NCCL's compCap, e.g. 90
  switch (s.version->ll128_cc_rule) {
    case 0:
      s.ll128_arch = cc10 == 70 || cc10 == 80 || cc10 == 90;
      break;
    case 1:
      s.ll128_arch = cc10 == 70 || cc10 == 80 || cc10 == 90 || cc10 == 100 || cc10 == 120;
      break;
    default:
      s.ll128_arch = cc10 >= 70;
  }
  s.net_reported_us = hw.inter_node.reported_latency * 1e6;
  s.net_physical_us = hw.inter_node.latency * 1e6;
  const bool multi = bw.nodes > 1;
  // Per-GPU intra-node rate as NCCL's topology holds it (GB/s): the cluster graph's per-GPU
  // fabric rate times the preset's achievable fraction (NCCL's own per-link NVLink figure,
  // topo.h:19-24, over the datasheet's per-link rate).
  const double intra = bw.intra_node_bus * hw.intra_tuning.ring_efficiency / 1e9;
  const std::span<const double> arr = speeds(*s.version, s.arch, multi);
  // The release's ring search bound, ringGraph->maxChannels = MAXCHANNELS / 2 (init.cc; 16
  // until 2.25, 32 from 2.26 when MAXCHANNELS went from 32 to 64).
  const int search_max = s.version->ring_search_max_channels;
  if (!multi) {
    s.ring = search_ring(arr, intra, s.arch, search_max, [&](double v) { return fit(intra, v); });
  } else {
    // Each ring channel leaves and enters a node through one NIC (multi-rail); the cluster
    // graph's cut bound (oversubscribed spines, PCIe) caps the channels x speed it carries.
    // Several NICs per GPU reach NCCL as one device of their summed speed (aws-ofi-nccl
    // nccl_ofi_rdma.cpp:410-413 rails; NCCL's IB plugin merges ports, net_ib/init.cc:197-239).
    const double per_gpu =
        std::max(1.0, std::floor(static_cast<double>(hw.nics_per_node) / bw.gpus_per_node));
    const double nic = per_gpu * hw.inter_node.bandwidth * hw.inter_tuning.ring_efficiency / 1e9;
    const int nics = std::max(1, std::min(hw.nics_per_node, bw.gpus_per_node));
    const double cut = bw.ring_bus * hw.inter_tuning.ring_efficiency / 1e9;
    // Inside a node a channel's traffic crosses the NVLinks of all GPUs but the one that sends
    // it to the NIC: (g-1)/g of the channels load each GPU's fabric port.
    const double g = bw.gpus_per_node;
    const double intra_room = g > 1 ? intra * g / (g - 1) : intra;
    s.ring = search_ring(arr, std::min(intra, nic), s.arch, search_max, [&](double v) {
      return std::min({nics * fit(nic, v), fit(intra_room, v), fit(cut * 1.0001, v)});
    });
  }
  // init.cc:1184-1185: the tree graph has the ring's channels; across nodes its intra-node
  // bandwidth may rise to twice the network's (search.cc:1279-1282).
  s.tree = s.ring;
  if (multi) {
    s.tree.bw_intra =
        raise_to(arr, s.ring.bw_intra, 2 * s.ring.bw_inter, intra / std::max(1, s.ring.channels));
  }
  // NVLS (search.cc:1124-1138, tuning.cc:307-323): an NVSwitch that reduces, Hopper or later,
  // one head per GPU of the node; in one node all heads are forced (min = max channels).
  s.nvls_efficiency = hw.intra_tuning.nvls_efficiency;
  if (s.arch >= 2 && hw.intra_node_switched && s.nvlink && s.nvls_efficiency > 0 &&
      bw.nvls_bus > 0 && bw.gpus_per_node >= std::max(2, s.version->nvls_min_local_gpus)) {
    const int ch = std::min(search_max, bw.gpus_per_node);
    double bi = arr.back();
    for (double v : arr) {
      if (ch * v <= intra * 1.0001) {
        bi = v;
        break;
      }
    }
    double be = bi;
    if (!multi) {
      be = raise_to(arr, bi, 2 * bi, std::numeric_limits<double>::infinity());
    } else {
      const double per_gpu =
          std::max(1.0, std::floor(static_cast<double>(hw.nics_per_node) / bw.gpus_per_node));
      const double nic = per_gpu * hw.inter_node.bandwidth * hw.inter_tuning.ring_efficiency / 1e9;
      be = arr.back();
      for (double v : arr) {
        if (v <= nic) {
          be = v;
          break;
        }
      }
    }
    s.nvls = {ch, bi, be};
    // comm->nvlsChannels (nvls.cc ncclNvlsInit): NVLS_NCHANNELS_SM90 before Blackwell, on
    // Blackwell the release's SM100 count, one node's (NVLS_NCHANNELS_SM100_NVL, 24 from
    // 2.27) or several nodes' (NVLS_NCHANNELS_SM100, 32); the release's figures with their
    // file:line are in detail/nccl_versions.hpp.
    s.nvls_run_channels = s.arch < 3 ? s.version->nvls_channels_sm90
                          : multi    ? s.version->nvls_channels_sm100_multi
                                     : s.version->nvls_channels_sm100_1node;
  }
  // connect.cc:460 doubles the search's channels at run time; connect.cc:480-482 doubles them
  // again across nodes with fast channels and few of them: the release's rule (compute
  // capability exactly 9.0 until 2.25, 9.0 or more from 2.26; at most 16 channels in 2.18-2.19,
  // fewer than 16 after; connect.cc:405 @v2.18.5-1, :466 @v2.26.6-1, :481 @v2.30.7-1).
  s.comm_channels = std::min(s.version->max_channels, 2 * s.ring.channels);
  const bool doubling_cc =
      s.version->hopper_double_cc_ge90 ? cc >= 9.0 : std::lround(cc * 10) == 90;
  if (doubling_cc && multi && s.ring.bw_intra > 45.0 &&
      s.comm_channels < s.version->hopper_double_below) {
    s.comm_channels = std::min(s.version->max_channels, 2 * s.comm_channels);
  }
  return s;
}

}  // namespace ddpsim::sim
