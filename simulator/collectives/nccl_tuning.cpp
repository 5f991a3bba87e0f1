#include "simulator/collectives/nccl_tuning.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "model/error.hpp"

// Every constant below is NVIDIA/nccl v2.30.7 (commit 5067397c2676d5aed50042fc39e5c8ee96eb0027),
// cited as file:line at that commit. The code is ddpsim's own, written from the formulas.

namespace ddpsim::sim {

using model::CollectiveAlgorithm;
using model::CollectiveOp;
using model::CollectiveProtocol;

namespace {

// NCCL's algorithm indices we model (nccl_tuner.h): Tree, Ring, NVLS, NVLS_TREE. CollNet needs
// SHARP (not modelled); PAT runs only with one GPU per node (tuning.cc:216-223), not modelled.
enum Algo { kTree = 0, kRing = 1, kNvls = 2, kNvlsTree = 3, kAlgos = 4 };
enum Proto { kLL = 0, kLL128 = 1, kSimple = 2, kProtos = 3 };
constexpr std::size_t kTunedEntries = std::size_t{kAlgos} * std::size_t{kProtos};
enum Hw { kNvlink = 0, kPci = 1, kNet = 2 };

// tuning.cc:150-155 baseLatencies (us), per algorithm x {LL, LL128, Simple}.
constexpr double kBaseLat[kAlgos][kProtos] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}};
// tuning.cc:157-176 hwLatencies (us) [NVLINK, PCI, NET][algorithm][protocol].
constexpr double kHwLat[3][kAlgos][kProtos] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 25}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 20.9}}};
// tuning.cc:178-183 llMaxBws (GB/s) [GPU arch on one node / CPU vendor across nodes][1, 2, >2
// nodes]; row 0 is also Intel CPUs, which ddpsim assumes across nodes (tuning.cc:269-271).
constexpr double kLlMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
// tuning.cc:184-211 per-channel caps (GB/s) [arch][1, 2, >2 nodes].
constexpr double kPerChRingLL128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
constexpr double kPerChTreeLL128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChTree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double kPerChNvlsTree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
// tuning.cc:623-627 treeCorrectionFactor[protocol][log2(bytes/64)], 64 B .. 256 MiB.
constexpr double kTreeCorrection[kProtos][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
// tuning.cc:228-233: network post overhead, x86 Intel (ddpsim's assumption) 1 us; x3 for Simple
// (tuning.cc:408).
constexpr double kNetOverheadUs = 1.0;
// search.cc:1051-1067 speed arrays (GB/s per channel) the topology search steps through: one
// node (intra) and several (inter), per generation (Volta/Ampere share the first).
const std::vector<double> kSpeedIntra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                         9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
const std::vector<double> kSpeedInter = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                         7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
const std::vector<double> kSpeedIntraSm90 = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                             15.0, 12.0, 11.0, 6.0,  3.0};
const std::vector<double> kSpeedInterSm90 = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                             15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
const std::vector<double> kSpeedIntraSm100 = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                              40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
const std::vector<double> kSpeedInterSm100 = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                              30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                              6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr int kMaxSearchChannels = 32;  // init.cc:1177 ringGraph->maxChannels = MAXCHANNELS / 2
constexpr int kMaxChannels = 64;        // device.h:91 MAXCHANNELS
constexpr int kNvlsChannelsSm90 = 16;   // nvls.cc:155 NVLS_NCHANNELS_SM90
constexpr int kNvlsChannelsSm100 = 32;  // nvls.cc:156 NVLS_NCHANNELS_SM100 (several nodes)
constexpr double kPciBw = 12.0;         // topo.h:25 PCI_BW
// device.h:93-97,114 thread counts; comm.h:49-51 thread thresholds (bytes per thread).
// (NCCL_MAX_NTHREADS = 640 is LL128's maximum here, the only protocol that reaches it.)
constexpr int kSimpleMaxNthreads = 512, kLLMaxNthreads = 512, kLL128MaxNthreads = 640;
constexpr int kLLThreshold = 8, kLL128Threshold = 8, kSimpleThreshold = 64;

// floor(log2(n)) for n >= 1, from the exponent bits (every n >= 1 is a normal double), else -1:
// exact, and without a libm call (the tuner evaluates it twice per (algorithm, protocol)).
int log2i(double n) {
  if (!(n >= 1)) return -1;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &n, sizeof bits);
  return static_cast<int>((bits >> 52) & 0x7ff) - 1023;
}

const std::vector<double>& speeds(int arch, bool inter) {
  if (arch >= 3) return inter ? kSpeedInterSm100 : kSpeedIntraSm100;
  if (arch >= 2) return inter ? kSpeedInterSm90 : kSpeedIntraSm90;
  return inter ? kSpeedInter : kSpeedIntra;
}

// The ring search (search.cc:1074-1287), reduced to bandwidth: the fastest speed of the array a
// path allows, then slower speeds while they keep above 0.49 of the best (search.cc:1245) and
// give more channels x speed; `channels_at(s)` is how many channels of speed s the links carry.
template <class F>
NcclGraph search_ring(const std::vector<double>& arr, double max_bw, int arch, F channels_at) {
  NcclGraph best;
  for (double s : arr) {
    if (s > max_bw) continue;
    if (best.channels > 0 && s / best.bw_inter <= 0.49) break;
    const int n = std::min(kMaxSearchChannels, channels_at(s));
    if (n >= 1 && n * s > best.channels * best.bw_inter) best = {n, s, s};
  }
  if (best.channels == 0) best = {1, arr.back(), arr.back()};
  // search.cc:1036-1049 ncclTopoDupChannels: fast channels are split in two.
  if (best.bw_intra >= 25.0 && !(arch >= 2 && best.bw_intra < 50.0 && best.channels > 4)) {
    const int dup = std::min(best.channels * 2, kMaxSearchChannels);
    const double div = std::ceil(static_cast<double>(dup) / best.channels);
    best = {dup, best.bw_intra / div, best.bw_inter / div};
  }
  return best;
}

int fit(double total, double s) { return static_cast<int>(std::floor(total / s + 1e-9)); }

// Pass 2 for trees and NVLS (search.cc:1267-1283): bwIntra (trees) or bwInter (NVLS) is raised
// along the array while it stays below twice the other and the links carry it.
double raise_to(const std::vector<double>& arr, double from, double limit, double cap) {
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
  const double cc = hw.gpu.compute_capability;
  // tuning.cc:263-266 compCapIndex.
  s.arch = cc >= 10.0 ? 3 : cc >= 9.0 ? 2 : cc >= 8.0 ? 1 : 0;
  s.ranks = bw.gpus;
  s.nodes = bw.nodes;
  s.ppn = static_cast<double>(bw.gpus) / bw.nodes;
  s.nvlink = hw.intra_node.kind != "pcie";
  const bool multi = bw.nodes > 1;
  // Per-GPU intra-node rate as NCCL's topology holds it (GB/s): the cluster graph's per-GPU
  // fabric rate times the preset's achievable fraction (NCCL's own per-link NVLink figure,
  // topo.h:19-24, over the datasheet's per-link rate).
  const double intra = bw.intra_node_bus * hw.intra_tuning.ring_efficiency / 1e9;
  const auto& arr = speeds(s.arch, multi);
  if (!multi) {
    s.ring = search_ring(arr, intra, s.arch, [&](double v) { return fit(intra, v); });
  } else {
    // Each ring channel leaves and enters a node through one NIC (multi-rail); the cluster
    // graph's cut bound (oversubscribed spines, PCIe) caps the channels x speed it carries.
    const double nic = hw.inter_node.bandwidth * hw.inter_tuning.ring_efficiency / 1e9;
    const int nics = std::max(1, std::min(hw.nics_per_node, bw.gpus_per_node));
    const double cut = bw.ring_bus * hw.inter_tuning.ring_efficiency / 1e9;
    // Inside a node a channel's traffic crosses the NVLinks of all GPUs but the one that sends
    // it to the NIC: (g-1)/g of the channels load each GPU's fabric port.
    const double g = bw.gpus_per_node;
    const double intra_room = g > 1 ? intra * g / (g - 1) : intra;
    s.ring = search_ring(arr, std::min(intra, nic), s.arch, [&](double v) {
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
      bw.nvls_bus > 0 && bw.gpus_per_node >= 2) {
    const int ch = std::min(kMaxSearchChannels, bw.gpus_per_node);
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
      const double nic = hw.inter_node.bandwidth * hw.inter_tuning.ring_efficiency / 1e9;
      be = arr.back();
      for (double v : arr) {
        if (v <= nic) {
          be = v;
          break;
        }
      }
    }
    s.nvls = {ch, bi, be};
    s.nvls_run_channels = s.arch >= 3 && multi ? kNvlsChannelsSm100 : kNvlsChannelsSm90;
  }
  // connect.cc:460 doubles the search's channels at run time; connect.cc:480-482 doubles them
  // again across Hopper nodes with fast channels and fewer than 16.
  s.comm_channels = std::min(kMaxChannels, 2 * s.ring.channels);
  if (s.arch >= 2 && multi && s.ring.bw_intra > 45.0 && s.comm_channels < 16) {
    s.comm_channels = std::min(kMaxChannels, 2 * s.comm_channels);
  }
  return s;
}

namespace {

struct Entry {
  double bw = 0;   // GB/s, algorithm bandwidth as NCCL stores it (0: not available)
  double lat = 0;  // us
};

bool all_reduce(CollectiveOp op) { return op == CollectiveOp::kAllReduce; }
bool ag_rs(CollectiveOp op) {
  return op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
}

// tuning.cc:288-438: one (collective, algorithm, protocol) of NCCL's table, and the enable rules
// of tuning.cc:294-301, 498-541 and enqueue.cc:1998-2008.
Entry tune(const NcclSystem& s, CollectiveOp op, int a, int p) {
  Entry e;
  const bool bcast_reduce = op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce;
  if (bcast_reduce && a != kRing) return e;
  if (ag_rs(op) && a != kRing && a != kNvls) return e;
  if ((a == kNvls || a == kNvlsTree) && p != kSimple) return e;
  if (a == kNvlsTree && (s.nodes == 1 || !all_reduce(op))) return e;  // tuning.cc:502
  if (a == kNvls && s.nodes > 1) return e;  // tuning.cc:505, enqueue.cc:2008: needs CollNet
  // tuning.cc:518-536: LL128 on by default where every intra-node path is NVLink.
  if (p == kLL128 && !s.nvlink) return e;
  const NcclGraph& g = a == kTree ? s.tree : (a == kNvls || a == kNvlsTree) ? s.nvls : s.ring;
  if (g.channels == 0) return e;
  const int nsteps = all_reduce(op) ? 2 * (s.ranks - 1) : ag_rs(op) ? s.ranks - 1 : s.ranks;
  const int i2 = s.nodes <= 2 ? s.nodes - 1 : 2;
  const double nch = g.channels;
  double bw = s.nodes <= 2 ? g.bw_intra : g.bw_inter;
  if (a == kNvls || a == kNvlsTree) {
    if (g.channels < 2) return e;  // tuning.cc:309
    double intra_bw = g.bw_intra * s.nvls_efficiency * (nch - 1) / nch;
    intra_bw *= all_reduce(op) ? 2.0 : (s.ppn - 1) / s.ppn;
    const double inter_bw = g.bw_inter * (s.nodes <= 2 && a == kNvlsTree ? 2 : 1);
    bw = std::min(intra_bw, inter_bw);
    if (a == kNvlsTree) bw = std::min(bw, kPerChNvlsTree[s.arch][i2]);
  }
  double bus = nch * bw;
  // tuning.cc:327-337, the per-protocol refinements.
  const double ll_max = kLlMaxBw[s.nodes == 1 ? s.arch : 0][i2];
  if (a == kRing && p == kLL) bus = std::min(ll_max, bus * 0.5);
  if (a == kRing && p == kLL128) bus = std::min(bus * 0.92, nch * kPerChRingLL128[s.arch][i2]);
  if (a == kTree && all_reduce(op)) bus = std::min(bus * 0.92, nch * kPerChTree[s.arch][i2]);
  if (a == kTree && p == kLL) bus = std::min(bus / 3.8, ll_max);
  if (a == kTree && p == kLL128) {
    bus = std::min(bus * (s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   nch * kPerChTreeLL128[s.arch][i2]);
  }
  // tuning.cc:377-382: bus to algorithm bandwidth (not for NVLS all-gather/reduce-scatter).
  if (!(a != kRing && ag_rs(op))) {
    bus *= (a == kTree) ? 0.5 : static_cast<double>(s.ranks) / nsteps;
  }
  e.bw = bus;
  // tuning.cc:384-435, latencies.
  const int intra_hw = s.nvlink ? kNvlink : kPci;
  double lat = kBaseLat[a][p];
  double intra_lat = kHwLat[intra_hw][a][p];
  const double inter_lat = kHwLat[kNet][s.ppn == 1 ? kTree : a][p];  // graph latencyInter 0
  const int log_nodes = log2i(s.nodes);
  if (a == kRing) {
    if (bcast_reduce) {
      lat += kHwLat[s.nodes == 1 ? intra_hw : kNet][a][p];  // sameChannels rings
    } else {
      const double overhead = s.nodes > 1 ? kNetOverheadUs * (p == kSimple ? 3 : 1) : 0.0;
      intra_lat = std::max(intra_lat, overhead);
      const int n_inter = s.nodes == 1 ? 0 : all_reduce(op) ? 2 * (s.nodes - 1) : s.nodes - 1;
      lat += (nsteps - n_inter) * intra_lat + n_inter * inter_lat;
    }
  } else if (a == kTree) {
    lat += 2 * ((s.ppn - 1) * intra_lat + log_nodes * inter_lat);
  } else if (a == kNvls) {
    lat = intra_lat + (s.nodes > 1 ? inter_lat : 0.0);
  } else {
    lat += intra_lat + 2 * log_nodes * inter_lat;
  }
  e.lat = lat;
  return e;
}

// tuning.cc:630-655 ncclTopoGetAlgoTime with one operation per call (numPipeOps 1), and
// bandwidth scaled by the fraction of the channels that run (`run_fraction`).
double algo_time_us(const NcclSystem& s, CollectiveOp op, int a, int p, const Entry& e,
                    double bytes, double run_fraction) {
  double bw = e.bw;
  double lat = e.lat;
  const int log_size = log2i(std::floor(bytes / 64));
  if (a == kTree && all_reduce(op) && log_size >= 0 && log_size < 23) {
    bw *= kTreeCorrection[p][log_size];
  }
  if (a == kNvlsTree && all_reduce(op) && log_size >= 0 && log_size < 24 && s.arch >= 3) {
    bw *= kTreeCorrection[p][log_size];
  }
  if (a == kRing && p == kSimple && s.nodes > 1 && all_reduce(op) &&
      bytes / (s.comm_channels * s.ranks) >= 64) {
    lat *= s.arch < 1 ? 1.9 : 1.4;  // "plateau effect of ring"
  }
  return lat + bytes / (1000.0 * bw * run_fraction);
}

// enqueue.cc:2070-2105 (with tuning.cc:244-257 maxThreads and 588-595 thresholds): the channels
// a call runs on. Rings and trees drop channels while the message is smaller than
// channels x threads x bytes-per-thread; NVLS runs its own channel count.
int run_channels(const NcclSystem& s, int a, int p, double bytes) {
  if (a == kNvls || a == kNvlsTree) return s.nvls_run_channels;
  int nt = p == kLL ? kLLMaxNthreads : p == kLL128 ? kLL128MaxNthreads : kSimpleMaxNthreads;
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
    default:
      return -1;
  }
}

constexpr CollectiveAlgorithm kAlgoOf[kAlgos] = {
    CollectiveAlgorithm::kTree, CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNvls,
    CollectiveAlgorithm::kNvlsTree};
constexpr CollectiveProtocol kProtoOf[kProtos] = {
    CollectiveProtocol::kLL, CollectiveProtocol::kLL128, CollectiveProtocol::kSimple};

// What nccl_system reads, to reuse its result: a sweep or a bucket plan costs many messages on
// the same system, and the channel search is most of a call's time.
struct SystemKey {
  int gpus = 0, gpus_per_node = 0, nodes = 0, nics = 0;
  double intra_bus = 0, nvls_bus = 0, ring_bus = 0, inter_bw = 0;
  double cc = 0, intra_eff = 0, inter_eff = 0, nvls_eff = 0;
  bool pcie = false, switched = false;
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
                      hw.intra_node_switched};
  thread_local std::optional<CachedSystem> last;
  if (!last || !(last->key == key)) last.emplace(CachedSystem{key, nccl_system(bw, hw), {}, {}});
  return *last;
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
                                  CollectiveAlgorithm algorithm, CollectiveProtocol protocol) {
  DDPSIM_ASSERT(bw.gpus >= 2 && bytes > 0, "nccl_plan needs >= 2 ranks and a message");
  DDPSIM_ASSERT(algorithm != CollectiveAlgorithm::kHierarchical, "not an NCCL algorithm");
  CachedSystem& cached = cached_system(bw, hw);
  const NcclSystem& s = cached.system;
  const auto& table = tuned(cached, op);
  const int only_a = algorithm == CollectiveAlgorithm::kAuto ? -1 : algo_index(algorithm);
  std::optional<NcclPlan> best;
  // enqueue.cc:2035-2044: the lowest modelled time wins; ties keep the earlier (algorithm,
  // protocol) in NCCL's order.
  for (int a = 0; a < kAlgos; ++a) {
    if (only_a >= 0 && a != only_a) continue;
    for (int p = 0; p < kProtos; ++p) {
      if (protocol != CollectiveProtocol::kAuto && kProtoOf[p] != protocol) continue;
      const Entry& e = table[static_cast<std::size_t>(a * kProtos + p)];
      if (e.bw <= 0) continue;
      const double model_us = algo_time_us(s, op, a, p, e, bytes, 1.0);
      if (best && model_us >= best->model_time_s * 1e6) continue;
      NcclPlan plan;
      plan.algorithm = kAlgoOf[a];
      plan.protocol = kProtoOf[p];
      plan.model_time_s = model_us * 1e-6;
      plan.channels = run_channels(s, a, p, bytes);
      const double full = (a == kNvls || a == kNvlsTree) ? plan.channels : s.comm_channels;
      plan.time_s = algo_time_us(s, op, a, p, e, bytes, plan.channels / full) * 1e-6;
      best = plan;
    }
  }
  return best;
}

}  // namespace ddpsim::sim
