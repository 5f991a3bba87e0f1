#pragma once
// NCCL tuner / kernel constants per release, for `collectives.nccl_version`. Read from the
// NVIDIA/nccl release tags (git tags vX.Y.Z-1); every number cites file:line @tag. A value that a
// later set inherits unchanged is cited where it was introduced; /work/research/nccl-versions.md
// gives its line at every tag. Paths: tuning.cc, search.cc, connect.cc, topo.h are src/graph/,
// nvls.cc is src/transport/, the rest src/ or src/include/ (device.h was devcomm.h in 2.18).
// Index conventions are nccl_tuning.cpp's: algo [Tree, Ring, NVLS, NVLS_TREE], proto [LL, LL128,
// Simple], hw [NVLINK, PCI, NET], arch [Volta, Ampere(sm80-89), Hopper(sm90), Blackwell(sm100+)],
// nodes [1, 2, >2]. Before 2.25 NCCL has no Blackwell row: sm100 indexes the Hopper row
// (tuning.cc:139 @v2.18.5-1), so row 3 repeats row 2 in the 2.18-2.23 sets. Likewise sm100 uses
// the sm90 speed arrays (search.cc:864 @v2.18.5-1) and SM90_NVLINK_BW (topo.h:204) before 2.25.
#include <array>
#include <cstddef>

namespace ddpsim::sim::detail {

struct NcclSpeeds {  // search.cc speed array (GB/s per channel), in search order
  std::array<double, 20> v{};
  int n = 0;
};

struct NcclVersionConstants {
  const char* tag;
  // ---- tuning.cc tables ----
  double base_lat[4][3];   // baseLat (us)
  double hw_lat[3][4][3];  // hwLat (us)
  double ll_max_bw[4][3];  // llMaxBws: row = arch on 1 node, CPU vendor (0 Intel, 1 AMD) else
  double per_ch_ring_ll128[4][3];
  double per_ch_tree_ll128[4][3];
  double per_ch_tree[4][3];
  double per_ch_nvls_tree[4][3];  // perChMaxNVLSTreeBws, used only when nvls_tree_cap
  bool nvls_tree_cap;
  double tree_correction[3][24];    // treeCorrectionFactor[proto][log2(bytes/64)]
  int tree_correction_len;          // Tree uses logSize < 23 in every version
  bool nvls_tree_correction_sm100;  // factor also on NVLS_TREE AR if minCompCap>=100 && x86
  // ---- tuning.cc model refinements ----
  double ring_ll_mult;          // ring LL busBw *= this if AR, Reduce or nNodes>1 ...
  double ring_ll_mult_other;    // ... else (1-node AG/RS/Bcast); then min(llMaxBw)
  double ring_ll128_mult;       // ring LL128 busBw *= this (then min nCh*perChRingLL128)
  double ring_ll128_mult_ppn1;  // ... when ppn < 2
  double tree_mult;             // Tree busBw = min(busBw*this, nCh*perChTree)
  double tree_ll_div;           // Tree LL busBw = min(busBw/this, llMaxBw)
  double tree_ll128_mult_1node, tree_ll128_mult_multi;
  double tree_pattern_mult;  // if the tree pattern is TREE (not BALANCED_TREE)
  // NVLS bandwidth model: 0 = 2.18 (bw = nNodes<=2 ? bwIntra : bwInter, NVLS x nvls_ratio,
  // NVLS_TREE x nvls_tree_ratio_coef*n/(2(n-1))); 1 = 2.19-2.26 (NVLS min(bwIntra,bwInter),
  // NVLS_TREE min(bwIntra, n<=2 ? bwInter : bwInter/2), both x nvls_ratio); 2 = 2.27 (1, but NVLS
  // AG/RS min(bwIntra*(ppn-1)/ppn, bwInter*nvls_ag_rs_inter_mult)); 3 = 2.28+ (intra =
  // bwIntra*eff*(nCh-1)/nCh*(AR ? 2 : (ppn-1)/ppn), inter = bwInter*(NVLS_TREE&&n<=2 ? 2 : 1),
  // NVLS_TREE also min perChNVLSTree; ratio nRanks/nsteps). busBw = nCh*bw in all.
  int nvls_bw_model;
  double nvls_ratio;            // 0 = nRanks/nsteps
  double nvls_tree_ratio_coef;  // model 0 only
  double nvls_efficiency[4];
  double nvls_ag_rs_inter_mult;
  bool nvls_ag_rs;             // NVLS offered for AllGather/ReduceScatter
  bool nvls_ag_rs_bus_to_alg;  // AG/RS NVLS busBw gets nvls_ratio (else no conversion)
  bool nvls_needs_2_channels;
  // NVLS latency: 0 = 2.18 (NVLS base + (n>1 ? hwLat[NET][NVLS] : 0); NVLS_TREE base +
  // 2(n-1)*hwLat[NET][NVLS_TREE]); 1 = later (NVLS intraLat + (n>1 ? interLat : 0); NVLS_TREE
  // base + intraLat + 2*log2(n)*interLat)
  int nvls_lat_model;
  bool ring_inter_steps_2n;                      // ring AR nInterSteps 2*nNodes (else 2*(nNodes-1))
  bool inter_lat_tree_if_ppn1;                   // interLat = hwLat[NET][Tree] when ppn == 1
  double plateau_mult_pre_ampere, plateau_mult;  // ring Simple AR multi-node latency factor
  double net_overhead_intel_us, net_overhead_amd_us, net_overhead_other_us;
  double net_overhead_simple_mult;  // x net overhead for Simple
  // ---- enable rules, algorithms, env parsing ----
  int ll128_cc_rule;         // 0: cc in {70,80,90}; 1: {70,80,90,100,120}; 2: cc >= 70
  bool ll128_mixed_cc_sm90;  // LL128 allowed with minCC != maxCC when minCC >= 90
  bool has_pat;
  double pat_bw_mult;
  bool env_per_function;  // NCCL_ALGO/PROTO "func:list;func:^list", unknown token = error
  bool ring_kept_for_non_allreduce;  // NCCL_ALGO never disables Ring for non-AR colls
  bool ring_backup_if_none;          // Ring bw restored when a coll would have no algorithm
  // ---- topology: topo.h, search.cc, init.cc, connect.cc ----
  double nvlink_bw_sm90, nvlink_bw_sm100, pci_bw;
  NcclSpeeds speed_intra[3], speed_inter[3];  // [Volta/Ampere, sm90, sm100]
  int max_channels;                           // MAXCHANNELS
  int ring_search_max_channels;               // ringGraph.maxChannels = MAXCHANNELS/2
  bool dup_before_pass2;   // ncclTopoDupChannels before pass 2 (2.18: after pass 2)
  bool pass2_raises_ring;  // pass 2 raises ring bw / NVLS bwInter (2.18: tree bwIntra only)
  // NVLS search maxChannels: -1 = ngpus on 1 node, MAXCHANNELS across nodes; 0 = ngpus;
  // > 0 = min(this, ngpus)
  int nvls_search_max;
  bool hopper_double_cc_ge90;    // connect.cc x2 rule: minCompCap >= 90 (else == 90)
  int hopper_double_below;       // ... && nNodes>1 && ring bwIntra>45 && nChannels < this
  bool nvls_pads_comm_channels;  // comm->nChannels raised to nvlsChannels
  bool ring_channels_from_coll;  // ring/tree nc starts at collChannels (un-padded)
  // ---- NVLS (nvls.cc, enqueue.cc) ----
  int nvls_channels_sm90, nvls_channels_sm100_1node, nvls_channels_sm100_multi;
  int nvls_min_local_gpus;           // NVLS off when the node has fewer GPUs
  bool nvls_sm100_multinode_tuning;  // ncclNvlsTreeSm100Tuning
  int nvls_chunk;                    // NVLS max chunk (bytes)
  int nvls_chunk_multinode_lowbw;    // if nNodes>1 && NVLS AR bw < 150 (0: rule absent)
  int nvls_tree_chunk_start;
  int nvls_tree_chunk_4nodes;  // cap when nNodes >= 4 (0: rule absent)
  // ---- enqueue.cc ----
  bool tree_simple_depth_chunking;
  int channel_split;  // 0: loop-interleaved, 1: contiguous equal parts, 2: cells
  int min_traffic_per_channel;
  bool traffic_floor_per_channel;  // trafficPerChannel = max(Min, traffic/nCh) (else roundup16)
  bool ll_traffic_x4;
  bool tree_max_threads;  // Tree kernels always NCCL_MAX_NTHREADS
  // ---- kernels, buffers (device.h, comm.h, init.cc, collectives.h) ----
  int simple_max_threads, ll_max_threads, ll128_max_threads, max_threads, pcie_simple_threads;
  int ll_thread_threshold, ll128_thread_threshold, simple_thread_threshold;
  int ll_buff, ll128_buff, simple_buff, simple_buff_arm;
  int steps, allreduce_chunk_steps, allreduce_slice_steps, allgather_chunk_steps,
      allgather_slice_steps, reducescatter_chunk_steps, reducescatter_slice_steps;
};

namespace nccl_versions_impl {
constexpr void row(double (&r)[3], double a, double b, double c) {
  r[0] = a;
  r[1] = b;
  r[2] = c;
}
template <std::size_t N>
constexpr NcclSpeeds speeds(const double (&a)[N]) {
  static_assert(N <= 20, "speed array longer than NcclSpeeds");
  NcclSpeeds s;
  for (std::size_t i = 0; i < N; ++i) s.v[i] = a[i];
  s.n = static_cast<int>(N);
  return s;
}
}  // namespace nccl_versions_impl

// clang-format off
inline constexpr NcclVersionConstants kNccl2_18_5{
    .tag = "v2.18.5-1",
    .base_lat = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4},  // tuning.cc:57 @v2.18.5-1
                 {0, 0, 23.0}, {0, 0, 23.0}},       // tuning.cc:59 @v2.18.5-1
    // tuning.cc:67,69 (NVLINK) 71,73 (PCI) 75,77 (NET) @v2.18.5-1
    .hw_lat = {{{.6, 1.25, 4}, {.6, 1.9, 3.4}, {0, 0, 0}, {0, 0, 0}},
               {{1.0, 1.9, 6}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}},
               {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 19}}},
    .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0},    // tuning.cc:87-88 @v2.18.5-1
                  {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},   // tuning.cc:89 @v2.18.5-1
    .per_ch_ring_ll128 = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0},   // tuning.cc:93-94 @v2.18.5-1
                          {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}},  // tuning.cc:95 @v2.18.5-1
    .per_ch_tree_ll128 = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0},   // tuning.cc:98-99 @v2.18.5-1
                          {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}},  // tuning.cc:100 @v2.18.5-1
    .per_ch_tree = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8},   // tuning.cc:103-104 @v2.18.5-1
                    {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}},  // tuning.cc:105 @v2.18.5-1
    .per_ch_nvls_tree = {},                                   // absent before 2.28
    .nvls_tree_cap = false,
    .tree_correction = {  // tuning.cc:376-378 @v2.18.5-1 (23 entries)
        {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5,
         .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
        {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6,
         .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
        {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
         .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}},
    .tree_correction_len = 23,                 // tuning.cc:375,388 @v2.18.5-1
    .nvls_tree_correction_sm100 = false,
    .ring_ll_mult = 1.0 / 4.0,                 // tuning.cc:178 @v2.18.5-1
    .ring_ll_mult_other = 1.0 / 3.0,           // tuning.cc:178 @v2.18.5-1
    .ring_ll128_mult = 0.92,                   // tuning.cc:179 @v2.18.5-1
    .ring_ll128_mult_ppn1 = 0.7,               // tuning.cc:179 @v2.18.5-1
    .tree_mult = .92,                          // tuning.cc:180 @v2.18.5-1
    .tree_ll_div = 3.8,                        // tuning.cc:181 @v2.18.5-1
    .tree_ll128_mult_1node = 7.0 / 9.0,        // tuning.cc:182 @v2.18.5-1
    .tree_ll128_mult_multi = 120.0 / 128.0,    // tuning.cc:182 @v2.18.5-1
    .tree_pattern_mult = .85,                  // tuning.cc:183 @v2.18.5-1
    .nvls_bw_model = 0,                        // tuning.cc:174-175 @v2.18.5-1
    .nvls_ratio = 5.0 / 6.0,                   // tuning.cc:197 @v2.18.5-1
    .nvls_tree_ratio_coef = .70,               // tuning.cc:198 @v2.18.5-1
    .nvls_efficiency = {0, 0, 0, 0},
    .nvls_ag_rs_inter_mult = 1.0,
    .nvls_ag_rs = false,                       // tuning.cc:168-169 @v2.18.5-1 (Ring only)
    .nvls_ag_rs_bus_to_alg = true,             // tuning.cc:195-200 @v2.18.5-1
    .nvls_needs_2_channels = false,
    .nvls_lat_model = 0,                       // tuning.cc:235-238 @v2.18.5-1
    .ring_inter_steps_2n = true,               // tuning.cc:161 @v2.18.5-1
    .inter_lat_tree_if_ppn1 = false,           // tuning.cc:204 @v2.18.5-1
    .plateau_mult_pre_ampere = 1.9,            // tuning.cc:392 @v2.18.5-1
    .plateau_mult = 1.4,                       // tuning.cc:392 @v2.18.5-1
    .net_overhead_intel_us = 1.0,              // tuning.cc:115 @v2.18.5-1
    .net_overhead_amd_us = 2.0,                // tuning.cc:116 @v2.18.5-1
    .net_overhead_other_us = 1.0,              // tuning.cc:117 @v2.18.5-1
    .net_overhead_simple_mult = 3,             // tuning.cc:222 @v2.18.5-1
    .ll128_cc_rule = 0,                        // tuning.cc:288-292 @v2.18.5-1
    .ll128_mixed_cc_sm90 = false,              // tuning.cc:287 @v2.18.5-1
    .has_pat = false,                          // init.cc:38 @v2.18.5-1
    .pat_bw_mult = 0,
    .env_per_function = false,                 // tuning.cc:34-52 @v2.18.5-1
    .ring_kept_for_non_allreduce = true,       // tuning.cc:296-297 @v2.18.5-1
    .ring_backup_if_none = false,
    .nvlink_bw_sm90 = 20.0,                    // topo.h:17 @v2.18.5-1
    .nvlink_bw_sm100 = 20.0,                   // topo.h:204 @v2.18.5-1 (sm100 -> SM90_NVLINK_BW)
    .pci_bw = 12.0,                            // topo.h:19 @v2.18.5-1
    .speed_intra = {nccl_versions_impl::speeds({40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0,
                                                6.0, 5.0, 4.0, 3.0}),  // search.cc:807 @v2.18.5-1
                    nccl_versions_impl::speeds({60.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0,
                                                3.0}),  // search.cc:812 @v2.18.5-1
                    nccl_versions_impl::speeds({60.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0,
                                                3.0})},  // search.cc:812 @v2.18.5-1 (sm100 = sm90)
    .speed_inter = {nccl_versions_impl::speeds({48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0,
                                                10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24,
                                                0.12}),  // search.cc:808 @v2.18.5-1
                    nccl_versions_impl::speeds({48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 20.0, 17.5,
                                                15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24,
                                                0.12}),  // search.cc:813 @v2.18.5-1
                    nccl_versions_impl::speeds({48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 20.0, 17.5,
                                                15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24,
                                                0.12})},  // search.cc:813 @v2.18.5-1 (sm100 = sm90)
    .max_channels = 32,                        // devcomm.h:52 @v2.18.5-1
    .ring_search_max_channels = 16,            // init.cc:879 @v2.18.5-1
    .dup_before_pass2 = false,                 // search.cc:986-996 @v2.18.5-1
    .pass2_raises_ring = false,                // search.cc:966-970 @v2.18.5-1
    .nvls_search_max = -1,                     // search.cc:852-854, init.cc:906 @v2.18.5-1
    .hopper_double_cc_ge90 = false,            // connect.cc:405 @v2.18.5-1
    .hopper_double_below = 17,                 // connect.cc:405 @v2.18.5-1 (2*n <= MAXCHANNELS)
    .nvls_pads_comm_channels = false,
    .ring_channels_from_coll = false,          // enqueue.cc:1189 @v2.18.5-1 (comm->nChannels)
    .nvls_channels_sm90 = 16,                  // nvls.cc:231 @v2.18.5-1
    .nvls_channels_sm100_1node = 16,           // nvls.cc:231 @v2.18.5-1
    .nvls_channels_sm100_multi = 16,           // nvls.cc:231 @v2.18.5-1
    .nvls_min_local_gpus = 3,                  // nvls.cc:239 @v2.18.5-1 (gpuCount <= 2 -> off)
    .nvls_sm100_multinode_tuning = false,
    .nvls_chunk = 131072,                      // enqueue.cc:1339 @v2.18.5-1
    .nvls_chunk_multinode_lowbw = 0,
    .nvls_tree_chunk_start = 524288,           // enqueue.cc:1307-1310 @v2.18.5-1 (Simple step)
    .nvls_tree_chunk_4nodes = 0,
    .tree_simple_depth_chunking = true,        // enqueue.cc:1316-1318 @v2.18.5-1
    .channel_split = 0,                        // all_reduce.h:22,39,48 @v2.18.5-1
    .min_traffic_per_channel = 0,
    .traffic_floor_per_channel = false,
    .ll_traffic_x4 = false,
    .tree_max_threads = false,
    .simple_max_threads = 512,                 // devcomm.h:54 @v2.18.5-1
    .ll_max_threads = 512,                     // devcomm.h:55 @v2.18.5-1
    .ll128_max_threads = 640,                  // devcomm.h:72 @v2.18.5-1
    .max_threads = 640,                        // devcomm.h:53 @v2.18.5-1
    .pcie_simple_threads = 256,                // tuning.cc:121 @v2.18.5-1
    .ll_thread_threshold = 8,               // comm.h:32 @v2.18.5-1 (Ring: x nRanks, tuning.cc:344)
    .ll128_thread_threshold = 8,               // comm.h:33 @v2.18.5-1
    .simple_thread_threshold = 64,             // comm.h:34 @v2.18.5-1
    .ll_buff = 524288,                         // init.cc:500 @v2.18.5-1 (8 lines*512*8 steps*16 B)
    .ll128_buff = 4915200,                     // init.cc:501 @v2.18.5-1 (120*640*8 steps*8 B)
    .simple_buff = 4194304,                    // init.cc:502 @v2.18.5-1
    .simple_buff_arm = 1048576,                // init.cc:503,519 @v2.18.5-1 (ARM CPUs only)
    .steps = 8,                                // devcomm.h:34 @v2.18.5-1
    .allreduce_chunk_steps = 4,                // collectives.h:115 @v2.18.5-1
    .allreduce_slice_steps = 2,                // collectives.h:114 @v2.18.5-1
    .allgather_chunk_steps = 4,                // collectives.h:117 @v2.18.5-1
    .allgather_slice_steps = 2,                // collectives.h:116 @v2.18.5-1
    .reducescatter_chunk_steps = 4,            // collectives.h:119 @v2.18.5-1
    .reducescatter_slice_steps = 2,            // collectives.h:118 @v2.18.5-1
};

inline constexpr NcclVersionConstants kNccl2_19_4 = [] {
  NcclVersionConstants c = kNccl2_18_5;
  c.tag = "v2.19.4-1";
  c.base_lat[2][2] = c.base_lat[3][2] = 0;                  // tuning.cc:59 @v2.19.4-1
  c.hw_lat[0][0][2] = 28;                                   // tuning.cc:67 @v2.19.4-1
  c.hw_lat[0][2][2] = c.hw_lat[0][3][2] = 23;               // tuning.cc:69 @v2.19.4-1
  c.hw_lat[1][0][2] = 28;                                   // tuning.cc:71 @v2.19.4-1
  c.hw_lat[2][0][2] = 28;                                   // tuning.cc:75 @v2.19.4-1
  c.hw_lat[2][3][2] = 14;                                   // tuning.cc:77 @v2.19.4-1
  c.nvls_bw_model = 1;                                      // tuning.cc:175-176 @v2.19.4-1
  c.nvls_tree_ratio_coef = 0;                               // tuning.cc:199 @v2.19.4-1 (5/6 both)
  c.nvls_ag_rs = true;                                      // tuning.cc:168-169 @v2.19.4-1
  c.nvls_lat_model = 1;                                     // tuning.cc:239-243 @v2.19.4-1
  c.ring_kept_for_non_allreduce = false;
  c.ring_backup_if_none = true;                             // tuning.cc:304-318 @v2.19.4-1
  c.speed_intra[1] = c.speed_intra[2] = nccl_versions_impl::speeds(
      {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0});  // search.cc:843 @v2.19.4-1
  c.speed_inter[1] = c.speed_inter[2] = nccl_versions_impl::speeds(
      {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24,
       0.12});                                              // search.cc:844 @v2.19.4-1
  c.dup_before_pass2 = true;                                // search.cc:993 @v2.19.4-1
  c.pass2_raises_ring = true;                               // search.cc:1004-1016 @v2.19.4-1
  c.nvls_search_max = 0;                                    // search.cc:883 @v2.19.4-1
  c.nvls_chunk_multinode_lowbw = 32768;                     // enqueue.cc:1376 @v2.19.4-1
  c.nvls_tree_chunk_4nodes = 65536;                         // enqueue.cc:1387 @v2.19.4-1 (sets it)
  return c;
}();

inline constexpr NcclVersionConstants kNccl2_20_5 = [] {
  NcclVersionConstants c = kNccl2_19_4;
  c.tag = "v2.20.5-1";
  c.nvlink_bw_sm90 = c.nvlink_bw_sm100 = 20.6;              // topo.h:17 @v2.20.5-1
  c.hopper_double_below = 16;                               // connect.cc:456 @v2.20.5-1
  c.nvls_pads_comm_channels = true;                         // connect.cc:473-474 @v2.20.5-1
  c.ring_channels_from_coll = true;                         // enqueue.cc:1532 @v2.20.5-1
  c.tree_simple_depth_chunking = false;                     // enqueue.cc:1683-1736 @v2.20.5-1
  c.channel_split = 1;                                      // enqueue.cc:804,431-505 @v2.20.5-1
  c.nvls_tree_chunk_4nodes = 65536;                         // enqueue.cc:1715-1717 @v2.20.5-1 (cap)
  return c;
}();

inline constexpr NcclVersionConstants kNccl2_21_5 = [] {
  using nccl_versions_impl::row;
  NcclVersionConstants c = kNccl2_20_5;
  c.tag = "v2.21.5-1";
  c.ring_ll_mult = c.ring_ll_mult_other = .5;               // tuning.cc:180 @v2.21.5-1
  row(c.ll_max_bw[2], 141.0, 45.0, 35.0);                   // tuning.cc:89 @v2.21.5-1
  row(c.ll_max_bw[3], 141.0, 45.0, 35.0);                   // tuning.cc:89 @v2.21.5-1 (sm100)
  c.hw_lat[0][2][2] = c.hw_lat[0][3][2] = 25;               // tuning.cc:69 @v2.21.5-1
  c.speed_intra[1] = c.speed_intra[2] = nccl_versions_impl::speeds(
      {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0,
       3.0});                                               // search.cc:855 @v2.21.5-1
  c.nvls_tree_chunk_start = 131072;                         // enqueue.cc:1754 @v2.21.5-1
  return c;
}();

inline constexpr NcclVersionConstants kNccl2_23_4 = [] {
  NcclVersionConstants c = kNccl2_21_5;
  c.tag = "v2.23.4-1";
  c.base_lat[0][2] = 8.4;                                   // tuning.cc:57 @v2.23.4-1
  c.hw_lat[0][0][2] = 4.0;                                  // tuning.cc:67 @v2.23.4-1
  c.hw_lat[1][0][2] = 4.0;                                  // tuning.cc:71 @v2.23.4-1
  c.hw_lat[2][0][2] = 14;                                   // tuning.cc:75 @v2.23.4-1
  c.ring_ll128_mult_ppn1 = 0.92;                            // tuning.cc:188 @v2.23.4-1
  c.nvls_ag_rs_bus_to_alg = false;                          // tuning.cc:221 @v2.23.4-1
  c.ring_inter_steps_2n = false;                            // tuning.cc:258 @v2.23.4-1
  c.inter_lat_tree_if_ppn1 = true;                          // tuning.cc:236 @v2.23.4-1
  c.has_pat = true;                                         // init.cc:40 @v2.23.4-1
  c.pat_bw_mult = .85;                                      // tuning.cc:193 @v2.23.4-1
  c.ring_channels_from_coll = false;                        // enqueue.cc:1859 @v2.23.4-1
  c.channel_split = 2;                                      // enqueue.cc:713-935 @v2.23.4-1
  c.min_traffic_per_channel = 16384;                        // enqueue.cc:723 @v2.23.4-1
  c.traffic_floor_per_channel = true;                       // enqueue.cc:756 @v2.23.4-1
  c.tree_max_threads = true;                                // enqueue.cc:1897 @v2.23.4-1
  return c;
}();

inline constexpr NcclVersionConstants kNccl2_26_6 = [] {
  using nccl_versions_impl::row;
  NcclVersionConstants c = kNccl2_23_4;
  c.tag = "v2.26.6-1";
  row(c.ll_max_bw[3], 2 * 141.0, 2 * 45.0, 2 * 35.0);       // tuning.cc:155 @v2.26.6-1
  row(c.per_ch_ring_ll128[3], 2 * 36.7, 2 * 36.7, 2 * 36.7);  // tuning.cc:162 @v2.26.6-1
  row(c.per_ch_tree_ll128[3], 2 * 36.7, 2 * 36.7, 2 * 29.0);  // tuning.cc:168 @v2.26.6-1
  row(c.per_ch_tree[3], 2 * 38.7, 2 * 41.4, 2 * 36.0);      // tuning.cc:174 @v2.26.6-1
  c.pat_bw_mult = .75;                                      // tuning.cc:262 @v2.26.6-1
  c.ll128_cc_rule = 1;                                      // tuning.cc:432-438 @v2.26.6-1
  c.env_per_function = true;                                // tuning.cc:53-116 @v2.26.6-1
  c.ring_backup_if_none = false;
  c.nvlink_bw_sm100 = 40.0;                                 // topo.h:19,241 @v2.26.6-1
  c.speed_intra[2] = nccl_versions_impl::speeds(
      {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0});  // search.cc:923 @v2.26.6-1
  c.max_channels = 64;                                      // device.h:62 @v2.26.6-1
  c.ring_search_max_channels = 32;                          // init.cc:851 @v2.26.6-1
  c.nvls_search_max = 32;                                   // search.cc:975 @v2.26.6-1
  c.hopper_double_cc_ge90 = true;                           // connect.cc:466 @v2.26.6-1
  c.nvls_channels_sm100_1node = c.nvls_channels_sm100_multi = 32;  // nvls.cc:145,176 @v2.26.6-1
  c.ll_traffic_x4 = true;                                   // enqueue.cc:389,570 @v2.26.6-1
  return c;
}();

inline constexpr NcclVersionConstants kNccl2_27_7 = [] {
  NcclVersionConstants c = kNccl2_26_6;
  c.tag = "v2.27.7-1";
  c.nvls_bw_model = 2;                                      // tuning.cc:267-274 @v2.27.7-1
  c.nvls_ag_rs_inter_mult = 0.9;                            // tuning.cc:272 @v2.27.7-1
  c.ll128_cc_rule = 2;                                      // tuning.cc:470 @v2.27.7-1
  c.nvlink_bw_sm100 = 40.1;                                 // topo.h:21 @v2.27.7-1
  c.speed_intra[2] = nccl_versions_impl::speeds(
      {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0,
       18.0});                                              // search.cc:962 @v2.27.7-1
  c.speed_inter[2] = nccl_versions_impl::speeds(
      {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2,
       0.24, 0.12});                                        // search.cc:963 @v2.27.7-1
  c.nvls_channels_sm100_1node = 24;                         // nvls.cc:149,193 @v2.27.7-1
  return c;
}();

inline constexpr NcclVersionConstants kNccl2_28_9 = [] {
  using nccl_versions_impl::row;
  NcclVersionConstants c = kNccl2_27_7;
  c.tag = "v2.28.9-1";
  c.hw_lat[2][3][2] = 20.9;                                 // tuning.cc:165 @v2.28.9-1
  row(c.per_ch_ring_ll128[3], 2 * 36.7, 34.6, 2 * 36.7);    // tuning.cc:179 @v2.28.9-1
  row(c.per_ch_tree_ll128[3], 55.6, 31.67, 20.0);           // tuning.cc:185 @v2.28.9-1
  row(c.per_ch_tree[3], 70.0, 42.8, 24.0);                  // tuning.cc:191 @v2.28.9-1
  row(c.per_ch_nvls_tree[0], 26.5, 18.5, 10.0);             // tuning.cc:194 @v2.28.9-1
  row(c.per_ch_nvls_tree[1], 24.0, 23.6, 17.8);             // tuning.cc:195 @v2.28.9-1
  row(c.per_ch_nvls_tree[2], 0.0, 57.7, 45.5);              // tuning.cc:196 @v2.28.9-1
  row(c.per_ch_nvls_tree[3], 0.0, 96.0, 43.8);              // tuning.cc:197 @v2.28.9-1
  c.nvls_tree_cap = true;                                   // tuning.cc:299 @v2.28.9-1
  c.nvls_bw_model = 3;                                      // tuning.cc:285-300 @v2.28.9-1
  c.nvls_ratio = 0;                                         // tuning.cc:348 @v2.28.9-1
  c.nvls_efficiency[2] = 0.85;                              // tuning.cc:137 @v2.28.9-1
  c.nvls_efficiency[3] = 0.74;                              // tuning.cc:138 @v2.28.9-1
  c.nvls_ag_rs_inter_mult = 1.0;                            // tuning.cc:298 @v2.28.9-1
  c.nvls_needs_2_channels = true;                           // tuning.cc:288 @v2.28.9-1
  c.nvls_min_local_gpus = 2;                                // nvls.cc:161 @v2.28.9-1
  c.nvls_pads_comm_channels = false;                        // connect.cc:494-499 @v2.28.9-1
  return c;
}();

inline constexpr NcclVersionConstants kNccl2_30_7 = [] {
  using nccl_versions_impl::row;
  NcclVersionConstants c = kNccl2_28_9;
  c.tag = "v2.30.7-1";
  row(c.per_ch_ring_ll128[3], 40.0, 40.0, 40.0);            // tuning.cc:189 @v2.30.7-1
  c.per_ch_nvls_tree[3][2] = 80.0;                          // tuning.cc:210 @v2.30.7-1
  c.tree_correction[0][23] = 1.0;                           // tuning.cc:624 @v2.30.7-1
  c.tree_correction[1][23] = 1.0;                           // tuning.cc:625 @v2.30.7-1
  c.tree_correction[2][23] = .9;                            // tuning.cc:626 @v2.30.7-1
  c.tree_correction_len = 24;                               // tuning.cc:623 @v2.30.7-1
  c.nvls_tree_correction_sm100 = true;                      // tuning.cc:643-646 @v2.30.7-1
  c.ll128_mixed_cc_sm90 = true;                             // tuning.cc:533 @v2.30.7-1
  c.speed_intra[2] = nccl_versions_impl::speeds(
      {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0,
       18.0});                                              // search.cc:1063 @v2.30.7-1
  c.speed_inter[2] = nccl_versions_impl::speeds(
      {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0,
       2.4, 1.2, 0.24, 0.12});                              // search.cc:1064-1065 @v2.30.7-1
  c.nvls_sm100_multinode_tuning = true;                     // nvls.cc:164-199,215-217 @v2.30.7-1
  c.min_traffic_per_channel = 32768;                        // enqueue.cc:585 @v2.30.7-1
  c.traffic_floor_per_channel = false;                      // enqueue.cc:618 @v2.30.7-1
  return c;
}();

// clang-format on

// Any 2.18.0 .. 2.30.x -> the constants of one tagged release. A minor line that has a tag here
// uses that tag for every patch (patch releases keep the tuning tables: tuning.cc is identical at
// v2.18.3/v2.18.5 and v2.19.1/v2.19.4; v2.18.1 differs, see the notes); a minor without one uses
// the nearest tagged minor below: 2.22 -> 2.21.5, 2.24 and 2.25 -> 2.23.4, 2.29 -> 2.28.9.
// Outside 2.18 .. 2.30: nullptr.
inline const NcclVersionConstants* nccl_version_constants(int major, int minor, int patch) {
  static_cast<void>(patch);
  if (major != 2 || minor < 18 || minor > 30) return nullptr;
  switch (minor) {
    case 18:
      return &kNccl2_18_5;
    case 19:
      return &kNccl2_19_4;
    case 20:
      return &kNccl2_20_5;
    case 21:
    case 22:
      return &kNccl2_21_5;
    case 23:
    case 24:
    case 25:
      return &kNccl2_23_4;
    case 26:
      return &kNccl2_26_6;
    case 27:
      return &kNccl2_27_7;
    case 28:
    case 29:
      return &kNccl2_28_9;
    default:
      return &kNccl2_30_7;
  }
}

}  // namespace ddpsim::sim::detail
