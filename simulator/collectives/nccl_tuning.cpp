#include "simulator/collectives/nccl_tuning.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include "model/error.hpp"
#include "simulator/collectives/detail/nccl_versions.hpp"
#include "simulator/collectives/nccl_pipeline.hpp"

// The machine NCCL sees (nccl_system) is nccl_system.cpp's; this file ranks and times calls on it.
// Every constant below is NVIDIA/nccl v2.30.7 (commit 5067397c2676d5aed50042fc39e5c8ee96eb0027),
// cited as file:line at that commit; the tuner's per-release tables are detail/nccl_versions.hpp.
// The code is ddpsim's own, written from the formulas.

namespace ddpsim::sim {

using model::CollectiveAlgorithm;
using model::CollectiveOp;
using model::CollectiveProtocol;

namespace {

// NCCL's algorithms we model, in NCCL's order (nccl_tuner.h: Tree 0, Ring 1, NVLS 4, NVLS_TREE 5,
// PAT 6): ties in the tuner keep the earlier. CollNet needs SHARP (not modelled).
enum Algo { kTree = 0, kRing = 1, kNvls = 2, kNvlsTree = 3, kPat = 4, kAlgos = 5 };
enum Proto { kLL = 0, kLL128 = 1, kSimple = 2, kProtos = 3 };
constexpr std::size_t kTunedEntries = std::size_t{kAlgos} * std::size_t{kProtos};
enum Hw { kNvlink = 0, kPci = 1, kNet = 2 };

// The tuner's tables and refinements per release: detail/nccl_versions.hpp (NcclSystem::version).
constexpr double kPciBw = 12.0;  // topo.h:25 PCI_BW
// device.h:93-97,114 thread counts; comm.h:49-51 thread thresholds (bytes per thread).
// (NCCL_MAX_NTHREADS = 640 is LL128's maximum here, the only protocol that reaches it.)
constexpr int kSimpleMaxNthreads = 512, kLLMaxNthreads = 512, kLL128MaxNthreads = 640;
constexpr int kMaxNthreads = 640;  // device.h NCCL_MAX_NTHREADS
constexpr int kLLThreshold = 8, kLL128Threshold = 8, kSimpleThreshold = 64;

// floor(log2(n)) for n >= 1, from the exponent bits (every n >= 1 is a normal double), else -1:
// exact, and without a libm call (the tuner evaluates it twice per (algorithm, protocol)).
int log2i(double n) {
  if (!(n >= 1)) return -1;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &n, sizeof bits);
  return static_cast<int>((bits >> 52) & 0x7ff) - 1023;
}

struct Entry {
  double bw = 0;        // GB/s, algorithm bandwidth as NCCL stores it (0: not available)
  double lat = 0;       // us, as the tuner ranks it
  double lat_time = 0;  // us, the same with the network's physical per-hop latency
  double base = 0;      // us, the per-call part of lat (baseLat; NVLS: all of it)
  double step = 0;      // us, the per-step hop part of lat_time, averaged over the ring's steps
};

bool all_reduce(CollectiveOp op) { return op == CollectiveOp::kAllReduce; }
bool ag_rs(CollectiveOp op) {
  return op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
}

// tuning.cc:386-391: one network step's latency as the tuner ranks it (the plugin's reported
// latency joins it, twice with Simple: "flush") and as the call is timed (the NIC's physical
// latency instead). With one GPU per node (2.23 on) every algorithm takes the tree's figure;
// PAT, which runs only there, has no column of its own.
struct NetHop {
  double ranked = 0, timed = 0;
};
NetHop net_hop(const NcclSystem& s, int a, int p) {
  const detail::NcclVersionConstants& v = *s.version;
  const int inter_a = a == kPat || (s.ppn == 1 && v.inter_lat_tree_if_ppn1) ? kTree : a;
  const double hw = v.hw_lat[kNet][inter_a][p];
  const double reported = s.nodes > 1 ? s.net_reported_us * (p == kSimple ? 2 : 1) : 0.0;
  return {hw + reported, std::max(hw, s.net_physical_us)};
}

// PAT (Parallel Aggregated Trees), NCCL 2.23 on (tuning.cc @v2.30.7-1): all-gather and
// reduce-scatter with one GPU per node (ncclPatEnable, 216-223: nNodes == nRanks, SM60+, a host
// network), Simple only (302-303). It runs on the tree graph (init.cc:980-981); its bus rate is
// the graph's (intra-node on up to two nodes, else inter-node, 305) x channels x 0.85 (2.23) or
// 0.75 (2.26 on, 337), not converted to an algorithm rate (377); its latency 8 us + log2(nodes) x
// interLat / 3.5 + 2.8 us per rank (429-433), interLat the tree's network latency for one GPU per
// node (net_hop: hwLatencies[NET][Tree][Simple] 14 us + twice the plugin's reported latency).
// NCCL skips PAT for a reduce-scatter that scales (an average: runs_reduction below).
Entry tune_pat(const NcclSystem& s, CollectiveOp op, int p) {
  Entry e;
  const detail::NcclVersionConstants& v = *s.version;
  // Every GPU ddpsim models is SM70 or later.
  if (!v.has_pat || !ag_rs(op) || p != kSimple || s.ppn != 1) return e;
  const NcclGraph& g = s.tree;
  if (g.channels == 0) return e;
  const double bw = s.nodes <= 2 ? g.bw_intra : g.bw_inter;
  e.bw = g.channels * bw * v.pat_bw_mult;
  constexpr double kPatBaseUs = 8.0, kPatPerRankUs = 2.8, kPatLogDivisor = 3.5;
  const NetHop hop = net_hop(s, kPat, p);
  const int log_nodes = log2i(s.nodes);
  e.lat = kPatBaseUs + log_nodes * (hop.ranked / kPatLogDivisor) + s.ranks * kPatPerRankUs;
  e.lat_time = kPatBaseUs + log_nodes * (hop.timed / kPatLogDivisor) + s.ranks * kPatPerRankUs;
  e.base = kPatBaseUs;
  return e;
}

// tuning.cc:288-438: one (collective, algorithm, protocol) of NCCL's table, and the enable rules
// of tuning.cc:294-301, 498-541 and enqueue.cc:1998-2008.
Entry tune(const NcclSystem& s, CollectiveOp op, int a, int p) {
  Entry e;
  const bool bcast_reduce = op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce;
  if (bcast_reduce && a != kRing) return e;
  if (ag_rs(op) && a != kRing && a != kNvls && a != kPat) return e;
  if (a == kPat) return tune_pat(s, op, p);
  // tuning.cc:168-169: NVLS all-gather and reduce-scatter from 2.19 (2.18 runs them on Ring).
  if (ag_rs(op) && a == kNvls && !s.version->nvls_ag_rs) return e;
  if ((a == kNvls || a == kNvlsTree) && p != kSimple) return e;
  if (a == kNvlsTree && (s.nodes == 1 || !all_reduce(op))) return e;  // tuning.cc:502
  if (a == kNvls && s.nodes > 1) return e;  // tuning.cc:505, enqueue.cc:2008: needs CollNet
  // tuning.cc:518-536: LL128 on by default where every intra-node path is NVLink.
  if (p == kLL128 && (!s.nvlink || !s.ll128_arch)) return e;
  const NcclGraph& g = a == kTree ? s.tree : (a == kNvls || a == kNvlsTree) ? s.nvls : s.ring;
  if (g.channels == 0) return e;
  const detail::NcclVersionConstants& v = *s.version;
  const int nsteps = all_reduce(op) ? 2 * (s.ranks - 1) : ag_rs(op) ? s.ranks - 1 : s.ranks;
  const int i2 = s.nodes <= 2 ? s.nodes - 1 : 2;
  const double nch = g.channels;
  double bw = s.nodes <= 2 ? g.bw_intra : g.bw_inter;
  if (a == kNvls || a == kNvlsTree) {
    if (g.channels < 2) return e;  // tuning.cc:309
    if (v.nvls_bw_model >= 3) {
      double intra_bw = g.bw_intra * s.nvls_efficiency * (nch - 1) / nch;
      intra_bw *= all_reduce(op) ? 2.0 : (s.ppn - 1) / s.ppn;
      const double inter_bw = g.bw_inter * (s.nodes <= 2 && a == kNvlsTree ? 2 : 1);
      bw = std::min(intra_bw, inter_bw);
      if (a == kNvlsTree) bw = std::min(bw, v.per_ch_nvls_tree[s.arch][i2]);
    } else if (v.nvls_bw_model == 0) {
      // 2.18 (tuning.cc:197 @v2.18.5-1): the graph's rate; NVLS_TREE x coef x n / (2(n-1)).
      bw = s.nodes <= 2 ? g.bw_intra : g.bw_inter;
      bw *= a == kNvls ? v.nvls_ratio : v.nvls_tree_ratio_coef * s.ranks / (2.0 * (s.ranks - 1));
    } else {
      // 2.19-2.27: min(bwIntra, bwInter) (NVLS_TREE: bwInter / 2 beyond two nodes); 2.27's
      // all-gather and reduce-scatter min(bwIntra (ppn - 1) / ppn, 0.9 bwInter) (tuning.cc:267-274
      // @v2.27.7-1). The bus-to-algorithm 5/6 is in the rate here; NVLS all-gather and
      // reduce-scatter are not converted from 2.23 (tuning.cc:221 @v2.23.4-1), as Ring's are not.
      if (a == kNvls && ag_rs(op) && v.nvls_bw_model == 2) {
        bw = std::min(g.bw_intra * (s.ppn - 1) / s.ppn, g.bw_inter * v.nvls_ag_rs_inter_mult);
      } else {
        const double inter = a == kNvlsTree && s.nodes > 2 ? g.bw_inter / 2 : g.bw_inter;
        bw = std::min(g.bw_intra, inter);
      }
      if (!ag_rs(op) || v.nvls_ag_rs_bus_to_alg) bw *= v.nvls_ratio;
    }
  }
  double bus = nch * bw;
  // tuning.cc:327-337, the per-protocol refinements.
  // The release's refinements (detail/nccl_versions.hpp; 2.30.7: tuning.cc:327-337).
  // tuning.cc: "LL: for single node, we look at GPU type; for multi-node, we look at CPU type".
  const bool amd = s.cpu_vendor == model::HardwareSpec::CpuVendor::kAmd;
  const double ll_max = v.ll_max_bw[s.nodes == 1 ? s.arch : amd ? 1 : 0][i2];
  if (a == kRing && p == kLL) {
    const bool wide = all_reduce(op) || op == CollectiveOp::kReduce || s.nodes > 1;
    bus = std::min(ll_max, bus * (wide ? v.ring_ll_mult : v.ring_ll_mult_other));
  }
  if (a == kRing && p == kLL128) {
    const double f = s.ppn < 2 ? v.ring_ll128_mult_ppn1 : v.ring_ll128_mult;
    bus = std::min(bus * f, nch * v.per_ch_ring_ll128[s.arch][i2]);
  }
  if (a == kTree && all_reduce(op)) {
    bus = std::min(bus * v.tree_mult, nch * v.per_ch_tree[s.arch][i2]);
  }
  if (a == kTree && p == kLL) bus = std::min(bus / v.tree_ll_div, ll_max);
  if (a == kTree && p == kLL128) {
    bus = std::min(bus * (s.nodes == 1 ? v.tree_ll128_mult_1node : v.tree_ll128_mult_multi),
                   nch * v.per_ch_tree_ll128[s.arch][i2]);
  }
  // tuning.cc:377-382: bus to algorithm bandwidth (not for NVLS all-gather/reduce-scatter).
  if (!(a != kRing && ag_rs(op))) {
    double ratio = (a == kTree) ? 0.5 : static_cast<double>(s.ranks) / nsteps;
    if ((a == kNvls || a == kNvlsTree) && v.nvls_bw_model < 3) ratio = 1;  // applied above
    bus *= ratio;
  }
  e.bw = bus;
  // tuning.cc:384-435, latencies.
  const int intra_hw = s.nvlink ? kNvlink : kPci;
  double lat = v.base_lat[a][p];
  double intra_lat = v.hw_lat[intra_hw][a][p];
  const NetHop hop = net_hop(s, a, p);
  const double inter_lat = hop.ranked;
  const double inter_time = hop.timed;
  double net_steps = 0;
  const int log_nodes = log2i(s.nodes);
  if (a == kRing) {
    if (bcast_reduce) {
      lat += v.hw_lat[s.nodes == 1 ? intra_hw : kNet][a][p];  // sameChannels rings
    } else {
      // tuning.cc getNetOverhead: 1 us on Intel hosts, 2 on AMD, 1 on others (ARM).
      const double per_vendor = amd ? v.net_overhead_amd_us
                                : s.cpu_vendor == model::HardwareSpec::CpuVendor::kArm
                                    ? v.net_overhead_other_us
                                    : v.net_overhead_intel_us;
      const double overhead =
          s.nodes > 1 ? per_vendor * (p == kSimple ? v.net_overhead_simple_mult : 1) : 0.0;
      intra_lat = std::max(intra_lat, overhead);
      const int ar_inter = v.ring_inter_steps_2n ? 2 * s.nodes : 2 * (s.nodes - 1);
      const int n_inter = s.nodes == 1 ? 0 : all_reduce(op) ? ar_inter : s.nodes - 1;
      lat += (nsteps - n_inter) * intra_lat + n_inter * inter_lat;
      net_steps = n_inter;
    }
  } else if (a == kTree) {
    lat += 2 * ((s.ppn - 1) * intra_lat + log_nodes * inter_lat);
    net_steps = 2 * log_nodes;
  } else if (v.nvls_lat_model == 0) {
    // 2.18 (tuning.cc @v2.18.5-1): NVLS base + one network hop; NVLS_TREE 2(n-1) of them.
    net_steps = a == kNvls ? (s.nodes > 1 ? 1 : 0) : 2 * (s.nodes - 1);
    lat += net_steps * inter_lat;
  } else if (a == kNvls) {
    lat = intra_lat + (s.nodes > 1 ? inter_lat : 0.0);
    net_steps = s.nodes > 1 ? 1 : 0;
  } else {
    lat += intra_lat + 2 * log_nodes * inter_lat;
    net_steps = 2 * log_nodes;
  }
  e.lat = lat;
  e.lat_time = lat - net_steps * (inter_lat - inter_time);
  e.base = a == kNvls ? e.lat_time : v.base_lat[a][p];
  if (a == kRing && !bcast_reduce && nsteps > 0) e.step = (e.lat_time - e.base) / nsteps;
  if (a == kRing && bcast_reduce) e.step = e.lat_time - e.base;
  return e;
}

// tuning.cc:630-655 ncclTopoGetAlgoTime with one operation per call (numPipeOps 1), and
// bandwidth scaled by the fraction of the channels that run (`run_fraction`); `bandwidth_us`
// receives the bytes / bandwidth part.
double algo_time_us(const NcclSystem& s, CollectiveOp op, int a, int p, const Entry& e,
                    double bytes, double run_fraction, double* bandwidth_us = nullptr) {
  double bw = e.bw;
  double lat = e.lat;
  const int log_size = log2i(std::floor(bytes / 64));
  const detail::NcclVersionConstants& v = *s.version;
  if (a == kTree && all_reduce(op) && log_size >= 0 && log_size < 23) {
    bw *= v.tree_correction[p][log_size];
  }
  // On Blackwell with x86 hosts only (tuning.cc:643-646 @v2.30.7-1: cpuArch == X86).
  if (a == kNvlsTree && all_reduce(op) && log_size >= 0 && log_size < 24 && s.arch >= 3 &&
      v.nvls_tree_correction_sm100 && s.cpu_vendor != model::HardwareSpec::CpuVendor::kArm) {
    bw *= v.tree_correction[p][log_size];
  }
  if (a == kRing && p == kSimple && s.nodes > 1 && all_reduce(op) &&
      bytes / (s.comm_channels * s.ranks) >= 64) {
    lat *= s.arch < 1 ? v.plateau_mult_pre_ampere : v.plateau_mult;  // "plateau effect of ring"
  }
  const double transfer = bytes / (1000.0 * bw * run_fraction);
  if (bandwidth_us) *bandwidth_us = transfer;
  return lat + transfer;
}

// enqueue.cc:2070-2105 (with tuning.cc:244-257 maxThreads and 588-595 thresholds): the channels
// a call runs on. Rings and trees drop channels while the message is smaller than
// channels x threads x bytes-per-thread; NVLS runs its own channel count.
int run_channels(const NcclSystem& s, int a, int p, double bytes) {
  if (a == kNvls || a == kNvlsTree) return s.nvls_run_channels;
  int nt = p == kLL ? kLLMaxNthreads : p == kLL128 ? kLL128MaxNthreads : kSimpleMaxNthreads;
  if (a == kPat) nt = kMaxNthreads;  // enqueue.cc:2113
  if (a == kRing && p == kSimple && s.ring.bw_intra * s.ring.channels <= kPciBw) nt = 256;
  double threshold = p == kLL ? kLLThreshold : p == kLL128 ? kLL128Threshold : kSimpleThreshold;
  if (a == kRing && p == kLL) threshold *= s.ranks;
  int nc = s.comm_channels;
  while (nc >= 2 && bytes < nc * nt * threshold) --nc;
  return nc;
}

int algo_index(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::kTree:
      return kTree;
    case CollectiveAlgorithm::kRing:
      return kRing;
    case CollectiveAlgorithm::kNvls:
      return kNvls;
    case CollectiveAlgorithm::kNvlsTree:
      return kNvlsTree;
    case CollectiveAlgorithm::kPat:
      return kPat;
    default:
      return -1;
  }
}

constexpr CollectiveAlgorithm kAlgoOf[kAlgos] = {
    CollectiveAlgorithm::kTree, CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNvls,
    CollectiveAlgorithm::kNvlsTree, CollectiveAlgorithm::kPat};
constexpr CollectiveProtocol kProtoOf[kProtos] = {
    CollectiveProtocol::kLL, CollectiveProtocol::kLL128, CollectiveProtocol::kSimple};

// What nccl_system reads, to reuse its result: a sweep or a bucket plan costs many messages on
// the same system, and the channel search is most of a call's time.
struct SystemKey {
  int gpus = 0, gpus_per_node = 0, nodes = 0, nics = 0;
  double intra_bus = 0, nvls_bus = 0, ring_bus = 0, inter_bw = 0;
  double cc = 0, intra_eff = 0, inter_eff = 0, nvls_eff = 0;
  bool pcie = false, switched = false;
  std::string version;
  double net_latency = 0, net_reported = 0;
  model::HardwareSpec::CpuVendor cpu_vendor = model::HardwareSpec::CpuVendor::kIntel;
  bool operator==(const SystemKey&) const = default;
};

// The last system costed on this thread, with its tuner table per op (filled on first use).
constexpr std::size_t kOps = 5;  // model::CollectiveOp
static_assert(static_cast<std::size_t>(CollectiveOp::kReduce) + 1 == kOps, "one table per op");
struct CachedSystem {
  SystemKey key;
  NcclSystem system;
  std::array<std::array<Entry, kTunedEntries>, kOps> entries;
  std::array<bool, kOps> filled;
};

CachedSystem& cached_system(const model::CollectiveBandwidths& bw, const model::HardwareSpec& hw) {
  const SystemKey key{bw.gpus,
                      bw.gpus_per_node,
                      bw.nodes,
                      hw.nics_per_node,
                      bw.intra_node_bus,
                      bw.nvls_bus,
                      bw.ring_bus,
                      hw.inter_node.bandwidth,
                      hw.gpu.compute_capability,
                      hw.intra_tuning.ring_efficiency,
                      hw.inter_tuning.ring_efficiency,
                      hw.intra_tuning.nvls_efficiency,
                      hw.intra_node.kind == "pcie",
                      hw.intra_node_switched,
                      hw.nccl_kernel.nccl_version,
                      hw.inter_node.latency,
                      hw.inter_node.reported_latency,
                      hw.cpu_vendor};
  thread_local std::optional<CachedSystem> last;
  if (!last || !(last->key == key)) last.emplace(CachedSystem{key, nccl_system(bw, hw), {}, {}});
  return *last;
}

// Whether NCCL runs algorithm `a` for this reduction: NVLS and NVLS_TREE only where
// ncclNvlsSupported holds (Sum; MinMax on 16-bit and integer types, not on fp32) or for an
// all-gather (enqueue.cc:425-426 @v2.30.7-1, src/include/device.h:587-601); PAT not for a
// reduce-scatter that scales, which an average on floating point is (PreMulSum,
// enqueue.cc:2009-2012). The rules read the same in every release ddpsim holds that has
// these algorithms.
bool runs_reduction(CollectiveOp op, int a, model::Reduction reduction) {
  if (reduction == model::Reduction::kSum) return true;
  if ((a == kNvls || a == kNvlsTree) && op != CollectiveOp::kAllGather) return false;
  if (a == kPat && op == CollectiveOp::kReduceScatter && reduction == model::Reduction::kAverage)
    return false;
  return true;
}

// tune()'s entries of one op on the cached system: they do not depend on the message size.
const std::array<Entry, kTunedEntries>& tuned(CachedSystem& c, CollectiveOp op) {
  const auto o = static_cast<std::size_t>(op);
  if (!c.filled[o]) {
    for (int a = 0; a < kAlgos; ++a) {
      for (int p = 0; p < kProtos; ++p)
        c.entries[o][static_cast<std::size_t>(a * kProtos + p)] = tune(c.system, op, a, p);
    }
    c.filled[o] = true;
  }
  return c.entries[o];
}

}  // namespace

std::optional<NcclPlan> nccl_plan(CollectiveOp op, const model::CollectiveBandwidths& bw,
                                  const model::HardwareSpec& hw, double bytes,
                                  CollectiveAlgorithm algorithm, CollectiveProtocol protocol,
                                  model::Reduction reduction) {
  DDPSIM_ASSERT(bw.gpus >= 2 && bytes > 0, "nccl_plan needs >= 2 ranks and a message");
  DDPSIM_ASSERT(algorithm != CollectiveAlgorithm::kHierarchical, "not an NCCL algorithm");
  CachedSystem& cached = cached_system(bw, hw);
  const NcclSystem& s = cached.system;
  const auto& table = tuned(cached, op);
  const int only_a = algorithm == CollectiveAlgorithm::kAuto ? -1 : algo_index(algorithm);
  // enqueue.cc:2035-2044: the lowest modelled time wins; ties keep the earlier (algorithm,
  // protocol) in NCCL's order.
  int best_a = -1, best_p = -1;
  double best_us = 0;
  for (int a = 0; a < kAlgos; ++a) {
    if (only_a >= 0 && a != only_a) continue;
    if (!runs_reduction(op, a, reduction)) continue;
    for (int p = 0; p < kProtos; ++p) {
      if (protocol != CollectiveProtocol::kAuto && kProtoOf[p] != protocol) continue;
      const Entry& e = table[static_cast<std::size_t>(a * kProtos + p)];
      if (e.bw <= 0) continue;
      const double model_us = algo_time_us(s, op, a, p, e, bytes, 1.0);
      if (best_a >= 0 && model_us >= best_us) continue;
      best_a = a;
      best_p = p;
      best_us = model_us;
    }
  }
  if (best_a < 0) return std::nullopt;
  // The choice as the kernel runs it (nccl_pipeline.hpp).
  const int a = best_a, p = best_p;
  const Entry& e = table[static_cast<std::size_t>(a * kProtos + p)];
  NcclPlan plan;
  plan.algorithm = kAlgoOf[a];
  plan.protocol = kProtoOf[p];
  plan.model_time_s = best_us * 1e-6;
  plan.channels = run_channels(s, a, p, bytes);
  const double full = (a == kNvls || a == kNvlsTree) ? plan.channels : s.comm_channels;
  NcclCall call;
  call.op = op;
  call.algorithm = plan.algorithm;
  call.protocol = plan.protocol;
  call.ranks = s.ranks;
  call.nodes = s.nodes;
  call.channels = plan.channels;
  call.nvls_heads = std::max(1, static_cast<int>(s.ppn));
  call.bytes = bytes;
  call.base_us = e.base;
  call.step_us = e.step;
  call.intra_channel_gbytes_per_s = s.tree.bw_intra;
  Entry timed = e;
  timed.lat = e.lat_time;
  call.tuner_us = algo_time_us(s, op, a, p, timed, bytes, plan.channels / full, &call.bandwidth_us);
  plan.tuner_time_s = call.tuner_us * 1e-6;
  plan.kernel = nccl_kernel_time(call, hw.nccl_kernel);
  plan.time_s = plan.kernel.time_s;
  return plan;
}

}  // namespace ddpsim::sim
