// Tests of the hardware presets (scenarios/hardware/**.json) against the published measurements
// they were fitted to (scenarios/data/published-measurements.json).
//
// The collective cost model the presets feed (one node of n GPUs, S = nccl-tests "size"):
//   ring AllReduce  t = 2(n-1)*alpha + (2(n-1)/n) * S / (eta_ring * B)     B = intra_node_bus
//   NVLS AllReduce  t = 2*alpha + S / (eta_nvls * B)                        (H100/H200 only)
//   predicted t = min(ring, NVLS);  busbw = (S/t) * 2(n-1)/n.
// Across nodes the ring uses B = ring_bus with the inter-node eta and latency.
//
// (a) refits every fitted constant from the published rows exactly as the presets were made and
//     checks the preset equals the fit to the precision it is printed with, so the presets cannot
//     drift from the data; (b) checks the fitted model against the rows and reports its error;
//     (c) checks the shape of every preset file; (d) checks the unit conversions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/hardware/cluster.hpp"
#include "model/hardware/hardware.hpp"
#include "model/profile/alpha_beta_fit.hpp"
#include "model/scenario/hardware_io.hpp"
#include "model/units.hpp"

namespace ddpsim::model {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kHardwareDir = fs::path(DDPSIM_SCENARIO_DIR) / "hardware";

double s_to_us(double seconds) { return seconds * 1e6; }

json read_preset_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return json::parse(in);
}

const json& published() {
  static const json rows = read_preset_file(DDPSIM_PUBLISHED_JSON);
  return rows;
}

// --- A minimal reader of the preset files (the scenario loader proper lives elsewhere). ---

LinkSpec load_link(const std::string& name) {
  const json j = read_preset_file(kHardwareDir / "links" / (name + ".json"));
  LinkSpec l;
  l.name = j.at("name").get<std::string>();
  l.bandwidth = j.at("kind") == "nic"
                    ? gbps_to_bytes_per_s(j.at("bandwidth_gbps").get<double>())
                    : gbytes_per_s_to_bytes_per_s(j.at("bandwidth_gbytes_per_s").get<double>());
  l.latency = us_to_s(j.at("latency_us").get<double>());
  l.kind = j.at("kind").get<std::string>();
  return l;
}

CollectiveTuning load_tuning(const json& j) {
  CollectiveTuning t;
  t.ring_efficiency = j.at("ring_efficiency").get<double>();
  t.tree_efficiency = j.value("tree_efficiency", 0.85);
  t.nvls_efficiency = j.at("nvls_efficiency").get<double>();
  t.latency = us_to_s(j.at("latency_us").get<double>());
  t.nvls_latency = us_to_s(j.value("nvls_latency_us", 25.0));
  return t;
}

HardwareSpec load_system(const std::string& name) {
  const json j = read_preset_file(kHardwareDir / (name + ".json"));
  HardwareSpec hw;
  hw.name = j.at("name").get<std::string>();
  hw.gpus_per_node = j.at("gpus_per_node").get<int>();
  hw.intra_node = load_link(j.at("intra_node").at("preset").get<std::string>());
  hw.intra_node_switched = j.at("intra_node_switched").get<bool>();
  hw.pcie = load_link(j.at("pcie").at("preset").get<std::string>());
  hw.inter_node = load_link(j.at("inter_node").at("preset").get<std::string>());
  hw.nics_per_node = j.at("inter_node").at("nics_per_node").get<int>();
  hw.oversubscription = j.at("network").at("oversubscription").get<double>();
  hw.nodes_per_leaf = j.at("network").at("nodes_per_leaf").get<int>();
  hw.intra_tuning = load_tuning(j.at("collectives").at("intra_node"));
  hw.inter_tuning = load_tuning(j.at("collectives").at("inter_node"));
  return hw;
}

// --- The published single-node sweeps (Azure AI-benchmarking-guide, nccl-tests, 8 GPUs). ---

struct Sweep {
  int n = 8;
  std::vector<std::string> ids;
  std::vector<double> bytes;
  std::vector<double> busbw;    // bytes/s
  std::vector<double> seconds;  // t = S * 2(n-1)/n / busbw
};

// The rows are labelled "1K".."8G" and their notes say the sizes are powers of two (e.g. '65K' =
// 65536): the labels are the decimal prefixes of 2^10..2^33, rounded inconsistently ("132K" for
// 131072). Each label maps to the power of two nearest its decimal value; the test checks that
// this is within 8 % ("1G" is 1e9, 2^30 is 1.074e9) and that the sweep is 2^10..2^33 in order.
double label_bytes(const std::string& label) {
  const double mult = label.back() == 'K' ? 1e3 : label.back() == 'M' ? 1e6 : 1e9;
  const double decimal = std::stod(label.substr(0, label.size() - 1)) * mult;
  const double pow2 = std::exp2(std::round(std::log2(decimal)));
  EXPECT_NEAR(decimal / pow2, 1.0, 0.08) << label;
  return pow2;
}

Sweep azure_sweep(const std::string& gpu) {  // gpu: "a100", "h100", "h200"
  Sweep s;
  const std::string prefix = "nccl-azure-" + gpu + "-";
  for (const auto& r : published()) {
    const std::string id = r.at("id").get<std::string>();
    if (id.rfind(prefix, 0) != 0) continue;
    EXPECT_EQ(r.at("unit"), "GB/s (busbw)") << id;
    EXPECT_NE(r.at("notes").get<std::string>().find("powers of two"), std::string::npos) << id;
    s.n = r.at("num_gpus").get<int>();
    const double bytes = label_bytes(id.substr(prefix.size()));
    const double busbw = gbytes_per_s_to_bytes_per_s(r.at("value").get<double>());
    s.ids.push_back(id);
    s.bytes.push_back(bytes);
    s.busbw.push_back(busbw);
    s.seconds.push_back(bytes * 2.0 * (s.n - 1) / s.n / busbw);
  }
  EXPECT_EQ(s.bytes.size(), 24u) << gpu;
  for (std::size_t i = 0; i < s.bytes.size(); ++i)
    EXPECT_EQ(s.bytes[i], std::exp2(10.0 + static_cast<double>(i))) << s.ids[i];
  return s;
}

json system_json(const std::string& name) {
  return read_preset_file(kHardwareDir / (name + ".json"));
}

// fit_alpha_beta ------------------------------------------------------------------------------

TEST(AlphaBetaFit, RecoversAnExactLine) {
  // t = 20 us + S / 200 GB/s at 1 KiB..8 GiB: every weighting returns the line itself, R^2 = 1.
  std::vector<double> bytes, seconds;
  for (int p = 10; p <= 33; ++p) {
    bytes.push_back(std::exp2(p));
    seconds.push_back(20e-6 + std::exp2(p) / 200e9);
  }
  for (FitWeighting w : {FitWeighting::kRelative, FitWeighting::kUniform}) {
    const AlphaBetaFit f = fit_alpha_beta(bytes, seconds, {w, true});
    EXPECT_NEAR(f.a, 20e-6, 1e-15);
    EXPECT_NEAR(f.bandwidth() / 200e9, 1.0, 1e-9);
    EXPECT_NEAR(f.r_squared, 1.0, 1e-9);
    EXPECT_FALSE(f.constrained);
    EXPECT_LT(f.rms_relative_error(), 1e-9);
    ASSERT_EQ(f.residuals.size(), bytes.size());
  }
}

TEST(AlphaBetaFit, HandComputedWeightedAndUnweighted) {
  // Points (0,1), (1,2), (2,2).
  // Uniform: mean S 1, mean t 5/3, Sxx 2, Sxy 1 -> b = 1/2, a = 5/3 - 1/2 = 7/6; predictions
  // 7/6, 5/3, 13/6, residuals 1/6, -1/3, 1/6: SSres 1/6, SStot 2/3, R^2 = 0.75.
  const std::vector<double> s = {0, 1, 2}, t = {1, 2, 2};
  const AlphaBetaFit u = fit_alpha_beta(s, t, {FitWeighting::kUniform, true});
  EXPECT_NEAR(u.b, 0.5, 1e-15);
  EXPECT_NEAR(u.a, 7.0 / 6.0, 1e-15);
  EXPECT_NEAR(u.r_squared, 0.75, 1e-15);
  EXPECT_NEAR(u.residuals[1], 5.0 / 3.0 - 2.0, 1e-15);
  EXPECT_NEAR(u.relative_residuals[0], 1.0 / 6.0, 1e-15);
  // Relative (w = 1/t^2 = 1, 1/4, 1/4): sum w 3/2, weighted means S 1/2, t 4/3;
  // Sxx = 1/4 + 1/16 + 9/16 = 7/8, Sxy = 1/6 + 1/12 + 1/4 = 1/2 -> b = 4/7, a = 4/3 - 2/7 = 22/21.
  const AlphaBetaFit r = fit_alpha_beta(s, t);
  EXPECT_NEAR(r.b, 4.0 / 7.0, 1e-15);
  EXPECT_NEAR(r.a, 22.0 / 21.0, 1e-15);
}

TEST(AlphaBetaFit, NonNegativeBound) {
  // (1,1), (2,3), (3,5) lie on t = -1 + 2S. Unconstrained: a = -1, b = 2. With the bound, a = 0
  // and b = sum w S t / sum w S^2 with w = 1, 1/9, 1/25: (34/15) / (406/225) = 255/203.
  const std::vector<double> s = {1, 2, 3}, t = {1, 3, 5};
  const AlphaBetaFit free = fit_alpha_beta(s, t, {FitWeighting::kRelative, false});
  EXPECT_NEAR(free.a, -1.0, 1e-12);
  EXPECT_NEAR(free.b, 2.0, 1e-12);
  const AlphaBetaFit bounded = fit_alpha_beta(s, t);
  EXPECT_TRUE(bounded.constrained);
  EXPECT_EQ(bounded.a, 0.0);
  EXPECT_NEAR(bounded.b, 255.0 / 203.0, 1e-14);
  // Times falling with size: b would be negative; it is fixed at 0 and a is the weighted mean
  // time: w = 1/4, 1 -> (2/4 + 1) / (5/4) = 6/5.
  const AlphaBetaFit flat = fit_alpha_beta({1, 2}, {2, 1});
  EXPECT_EQ(flat.b, 0.0);
  EXPECT_NEAR(flat.a, 1.2, 1e-15);
}

TEST(AlphaBetaFit, RejectsDataThatCannotDetermineALine) {
  EXPECT_THROW(fit_alpha_beta({1}, {1}), Error);
  EXPECT_THROW(fit_alpha_beta({4, 4}, {1, 2}), Error);
  EXPECT_THROW(fit_alpha_beta({1, 2}, {1, 0}), Error);
  EXPECT_THROW(fit_alpha_beta({1, std::nan("")}, {1, 2}), Error);
}

// (a) ----------------------------------------------------------------------------------------

// The collective constants of the presets come from NCCL's source (NVIDIA/nccl v2.30.7), not from
// the nccl-tests sweeps (results/published tests the model against those):
//   intra ring_efficiency = NCCL's per-link NVLink rate (src/graph/topo.h:20-24: SM70/SM80 20.0,
//     SM90 20.6, SM100 40.1 GB/s) / the datasheet's 25 (NVLink 5: 50) GB/s per link per direction;
//   inter ring_efficiency 1: NCCL takes the NIC's port rate;
//   nvls_efficiency = tuning.cc:139-144 nvlsEfficiency (Blackwell 0.74, Hopper 0.85, Volta/Ampere
//   0); latency_us = tuning.cc:159,171 hwLatencies Ring Simple (NVLink 3.4, NET 14.0 us).
TEST(Presets, CollectiveConstantsComeFromNccl) {
  const std::map<std::string, std::pair<double, double>> expect = {
      {"dgx-1", {20.0 / 25, 0.0}},     {"dgx-a100", {20.0 / 25, 0.0}},
      {"dgx-h100", {20.6 / 25, 0.85}}, {"hgx-h200", {20.6 / 25, 0.85}},
      {"dgx-b200", {40.1 / 50, 0.74}}, {"gb200-nvl72", {40.1 / 50, 0.74}}};
  for (const auto& [name, v] : expect) {
    const HardwareSpec hw = load_system(name);
    EXPECT_NEAR(hw.intra_tuning.ring_efficiency, v.first, 1e-12) << name;
    EXPECT_EQ(hw.intra_tuning.nvls_efficiency, v.second) << name;
    EXPECT_EQ(hw.inter_tuning.ring_efficiency, 1.0) << name;
    EXPECT_NEAR(s_to_us(hw.intra_tuning.latency), 3.4, 1e-12) << name;
    EXPECT_NEAR(s_to_us(hw.inter_tuning.latency), 14.0, 1e-12) << name;
    // Only the kernel costs are fitted, each on one named sweep of its system class (dgx-a100:
    // Azure's A100 sweep; dgx-h100: Azure's H100 NVLS sweep and one Hopper ring log); the other
    // sweeps and logs test them.
    const json c = system_json(name).at("collectives");
    if (c.contains("fitted_from")) {
      EXPECT_TRUE(name == "dgx-a100" || name == "dgx-h100") << name;
      EXPECT_EQ(c.at("fitted_from").at(0), "nccl-azure-" + name.substr(4) + "-*") << name;
    }
  }
  // The sweeps the model is checked against are still well formed (24 powers of two).
  for (const std::string gpu : {"a100", "h100", "h200"}) EXPECT_EQ(azure_sweep(gpu).n, 8) << gpu;
}

// (c) ----------------------------------------------------------------------------------------

std::vector<fs::path> json_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void expect_keys(const json& j, const std::set<std::string>& keys, const fs::path& file) {
  std::set<std::string> got;
  for (const auto& [k, v] : j.items()) got.insert(k);
  EXPECT_EQ(got, keys) << file;
}

TEST(Presets, GpuFilesHaveTheirKeys) {
  const auto files = json_files(kHardwareDir / "gpus");
  std::set<std::string> names;
  for (const auto& f : files) names.insert(f.stem().string());
  for (const std::string need :
       {"v100-sxm2", "a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200-sxm", "gb200"})
    EXPECT_TRUE(names.count(need)) << need;
  for (const auto& f : files) {
    const json j = read_preset_file(f);
    // attention_efficiency only where a flash-attention kernel benchmark exists (Ampere and
    // Hopper: V100 has no flash kernel, and no B200 benchmark is held; their sources say so).
    std::set<std::string> keys = {"name",
                                  "description",
                                  "source",
                                  "memory_gib",
                                  "memory_bandwidth_gbytes_per_s",
                                  "memory_efficiency",
                                  "peak_tflops",
                                  "efficiency",
                                  "sm_count",
                                  "compute_capability"};
    const bool ampere_or_newer = f.stem().string() != "v100-sxm2" &&
                                 f.stem().string() != "b200-sxm" && f.stem().string() != "gb200";
    if (ampere_or_newer) keys.insert("attention_efficiency");
    // Fused attention kernels' measured rates by shape (FlashAttention-2's benchmark figures).
    if (ampere_or_newer) keys.insert("attention_kernels");
    // Measured GEMM rates by shape where a sustained sweep (A100: Azure's cuBLASLt table) or the
    // project's own GPU run (H200, the H100 die) is held; the others run on the tile model.
    if (ampere_or_newer) keys.insert("gemm_table");
    // The per-kernel floor where a small-kernel benchmark is held (gpu-benches: V100, A100,
    // H200); none for Blackwell.
    if (f.stem().string() != "b200-sxm" && f.stem().string() != "gb200") {
      keys.insert("kernel_floor_us");
    }
    expect_keys(j, keys, f);
    EXPECT_GT(j.at("sm_count").get<int>(), 0) << f;
    EXPECT_EQ(j.at("name"), f.stem().string());
    EXPECT_FALSE(j.at("source").get<std::string>().empty()) << f;
    EXPECT_FALSE(j.at("description").get<std::string>().empty()) << f;
    EXPECT_GT(j.at("memory_gib").get<double>(), 0) << f;
    EXPECT_GT(j.at("memory_bandwidth_gbytes_per_s").get<double>(), 0) << f;
    EXPECT_GT(j.at("memory_efficiency").get<double>(), 0) << f;
    EXPECT_LE(j.at("memory_efficiency").get<double>(), 1) << f;
    for (const auto& [dtype, tf] : j.at("peak_tflops").items()) {
      // tf32 is a math mode of fp32 tensors, not a storage dtype (GpuSpec::tf32_peak_flops).
      EXPECT_TRUE(dtype == "tf32" || parse_dtype(dtype).has_value()) << f << " " << dtype;
      EXPECT_GT(tf.get<double>(), 0) << f << " " << dtype;
    }
    EXPECT_TRUE(j.at("peak_tflops").contains("fp32")) << f;
    EXPECT_TRUE(j.at("peak_tflops").contains("fp16")) << f;
    for (const auto& [dtype, eff] : j.at("efficiency").items()) {
      EXPECT_TRUE(j.at("peak_tflops").contains(dtype)) << f << " efficiency for " << dtype;
      EXPECT_GT(eff.get<double>(), 0) << f << " " << dtype;
      EXPECT_LE(eff.get<double>(), 1) << f << " " << dtype;
    }
  }
  // Dense datasheet peaks.
  EXPECT_FALSE(
      read_preset_file(kHardwareDir / "gpus/v100-sxm2.json").at("peak_tflops").contains("bf16"));
  EXPECT_EQ(read_preset_file(kHardwareDir / "gpus/h100-sxm.json").at("peak_tflops").at("bf16"),
            989.4);
  EXPECT_EQ(read_preset_file(kHardwareDir / "gpus/a100-sxm-80gb.json").at("peak_tflops").at("fp16"),
            312);
  // TF32 tensor cores from Ampere on: half the 16-bit dense peak; none on Volta.
  EXPECT_EQ(read_preset_file(kHardwareDir / "gpus/a100-sxm-80gb.json").at("peak_tflops").at("tf32"),
            156);
  EXPECT_EQ(read_preset_file(kHardwareDir / "gpus/h100-sxm.json").at("peak_tflops").at("tf32"),
            494.7);
  EXPECT_FALSE(
      read_preset_file(kHardwareDir / "gpus/v100-sxm2.json").at("peak_tflops").contains("tf32"));
}

TEST(Presets, LinkFilesHaveTheirKeys) {
  std::set<std::string> names;
  for (const auto& f : json_files(kHardwareDir / "links")) {
    names.insert(f.stem().string());
    const json j = read_preset_file(f);
    EXPECT_EQ(j.at("name"), f.stem().string());
    const std::string kind = j.at("kind").get<std::string>();
    const std::string rate = kind == "nic" ? "bandwidth_gbps" : "bandwidth_gbytes_per_s";
    EXPECT_TRUE(kind == "intra_node" || kind == "pcie" || kind == "nic") << f << " " << kind;
    std::set<std::string> keys = {"name", "kind", rate, "latency_us", "source"};
    if (j.contains("reported_latency_us")) keys.insert("reported_latency_us");  // a net plugin's
    expect_keys(j, keys, f);
    EXPECT_GT(j.at(rate).get<double>(), 0) << f;
    EXPECT_GT(j.at("latency_us").get<double>(), 0) << f;
    EXPECT_FALSE(j.at("source").get<std::string>().empty()) << f;
  }
  for (const std::string need :
       {"nvlink2", "nvlink3", "nvlink4", "pcie3-x16", "pcie4-x16", "pcie5-x16", "eth-25g",
        "eth-100g", "ib-edr-100", "ib-hdr-200", "ib-ndr-400", "efa-100g"})
    EXPECT_TRUE(names.count(need)) << need;
}

TEST(Presets, SystemFilesHaveTheirKeys) {
  std::set<std::string> names;
  for (const auto& f : json_files(kHardwareDir)) {
    names.insert(f.stem().string());
    const json j = read_preset_file(f);
    std::set<std::string> keys = {
        "name",        "description",         "source", "gpu",        "gpus_per_node",
        "intra_node",  "intra_node_switched", "pcie",   "inter_node", "network",
        "collectives", "cpu_vendor"};
    if (j.contains("gpus_per_host")) keys.insert("gpus_per_host");  // an NVLink domain of hosts
    expect_keys(j, keys, f);
    EXPECT_EQ(j.at("name"), f.stem().string());
    EXPECT_FALSE(j.at("source").get<std::string>().empty()) << f;
    EXPECT_FALSE(j.at("description").get<std::string>().empty()) << f;
    EXPECT_TRUE(
        fs::exists(kHardwareDir / "gpus" / (j.at("gpu").at("preset").get<std::string>() + ".json")))
        << f;
    for (const char* l : {"intra_node", "pcie", "inter_node"})
      EXPECT_TRUE(
          fs::exists(kHardwareDir / "links" / (j.at(l).at("preset").get<std::string>() + ".json")))
          << f << " " << l;
    EXPECT_EQ(read_preset_file(kHardwareDir / "links" /
                               (j.at("intra_node").at("preset").get<std::string>() + ".json"))
                  .at("kind"),
              "intra_node");
    EXPECT_EQ(read_preset_file(kHardwareDir / "links" /
                               (j.at("inter_node").at("preset").get<std::string>() + ".json"))
                  .at("kind"),
              "nic");
    EXPECT_GE(j.at("gpus_per_node").get<int>(), 1);
    EXPECT_GE(j.at("inter_node").at("nics_per_node").get<int>(), 1);
    EXPECT_GE(j.at("network").at("oversubscription").get<double>(), 1.0);
    EXPECT_GE(j.at("network").at("nodes_per_leaf").get<int>(), 1);
    const json& c = j.at("collectives");
    // NCCL's kernel costs (nccl_pipeline.hpp) beside the per-link-class constants.
    std::set<std::string> coll = {"intra_node", "inter_node", "simple_slice_us",
                                  "ll128_iteration_us", "host_launch_us"};
    // NCCL's environment sizes where the system sets them (aws-ofi-nccl on AWS instances).
    for (const char* k : {"nvls_chunk_us", "fitted_from", "buffsize_bytes", "nvls_chunk_bytes",
                          "nvls_tree_max_chunk_bytes"}) {
      if (c.contains(k)) coll.insert(k);
    }
    expect_keys(c, coll, f);
    for (const char* side : {"intra_node", "inter_node"}) {
      expect_keys(c.at(side), {"ring_efficiency", "nvls_efficiency", "latency_us"}, f);
      for (const char* k : {"ring_efficiency"}) {
        EXPECT_GT(c.at(side).at(k).get<double>(), 0) << f << " " << side << " " << k;
        EXPECT_LE(c.at(side).at(k).get<double>(), 1) << f << " " << side << " " << k;
      }
      EXPECT_GE(c.at(side).at("nvls_efficiency").get<double>(), 0) << f;
      EXPECT_LE(c.at(side).at("nvls_efficiency").get<double>(), 1) << f;
      EXPECT_GT(c.at(side).at("latency_us").get<double>(), 0) << f;
    }
  }
  for (const std::string need :
       {"dgx-1", "dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72"})
    EXPECT_TRUE(names.count(need)) << need;
}

// GB200 NVL72: one NVLink domain of 72 GPUs (the graph's node) made of 18 hosts of 4. Dense
// datasheet peaks (NVL72: 360 PFLOPS bf16 with sparsity / 2 / 72 = 2,500 TFLOPS per GPU; 13.4 TB
// / 72 = 186 GB; 576 TB/s / 72 = 8,000 GB/s); one 400 Gb/s NIC per GPU.
TEST(Presets, Gb200Nvl72IsOneNvlinkDomainOfHosts) {
  const HardwareSpec hw =
      resolve_hardware(json{{"preset", "gb200-nvl72"}}, "test.json", "/hardware");
  EXPECT_EQ(hw.gpus_per_node, 72);
  EXPECT_EQ(hw.gpus_per_host, 4);
  EXPECT_EQ(hw.hosts_per_node(), 18);
  EXPECT_EQ(hw.nics_per_node, 72);
  EXPECT_DOUBLE_EQ(hw.gpu.peak_flops.at(DType::kBf16), 2500e12);
  EXPECT_DOUBLE_EQ(hw.gpu.memory_bandwidth, 8000e9);
  EXPECT_DOUBLE_EQ(hw.intra_node.bandwidth, 900e9);
  // 72 GPUs collect over NVLink alone; 144 cross the network once per rack.
  const CollectiveBandwidths in_rack = Topology(hw, 72).bandwidths();
  EXPECT_EQ(in_rack.nodes, 1);
  EXPECT_EQ(in_rack.inter_node_per_gpu, 0);
  const CollectiveBandwidths two_racks = Topology(hw, 144).bandwidths();
  EXPECT_EQ(two_racks.nodes, 2);
  EXPECT_DOUBLE_EQ(two_racks.inter_node_per_gpu, 50e9);  // its own 400 Gb/s NIC
  EXPECT_GT(in_rack.ring_bus, 8 * two_racks.inter_node_per_gpu);
}

// (d) ----------------------------------------------------------------------------------------

TEST(Presets, UnitConversions) {
  // NVLink datasheet figures count both directions: 900 GB/s (H100) -> 450 per direction,
  // 600 (A100) -> 300, 300 (V100) -> 150.
  const std::map<std::string, std::pair<double, std::string>> nvlink = {
      {"nvlink5", {900, "1800 GB/s"}},
      {"nvlink4", {450, "900 GB/s"}},
      {"nvlink3", {300, "600 GB/s"}},
      {"nvlink2", {150, "300 GB/s"}}};
  for (const auto& [name, expect] : nvlink) {
    const json j = read_preset_file(kHardwareDir / "links" / (name + ".json"));
    EXPECT_EQ(j.at("bandwidth_gbytes_per_s").get<double>(), expect.first) << name;
    EXPECT_EQ(j.at("bandwidth_gbytes_per_s").get<double>() * 2, std::stod(expect.second)) << name;
    const std::string src = j.at("source").get<std::string>();
    EXPECT_NE(src.find(expect.second), std::string::npos) << name << ": " << src;
    EXPECT_NE(src.find("both directions"), std::string::npos) << name;
  }
  EXPECT_DOUBLE_EQ(load_link("nvlink4").bandwidth, 450e9);
  // PCIe x16 per direction: GT/s x 16 lanes x 128/130 (encoding) / 8 bits, printed to 0.25 GB/s.
  const std::map<std::string, double> pcie = {
      {"pcie3-x16", 8}, {"pcie4-x16", 16}, {"pcie5-x16", 32}};
  for (const auto& [name, gts] : pcie) {
    const double exact = gts * 16 * 128.0 / 130.0 / 8.0;
    EXPECT_NEAR(read_preset_file(kHardwareDir / "links" / (name + ".json"))
                    .at("bandwidth_gbytes_per_s")
                    .get<double>(),
                exact, 0.02)
        << name;
  }
  // NIC rates are per direction already: 400 Gb/s -> 50e9 bytes/s; 200 -> 25e9.
  EXPECT_DOUBLE_EQ(load_link("ib-ndr-400").bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(load_link("ib-hdr-200").bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(load_link("ib-edr-100").bandwidth, 12.5e9);
  // The DGX A100 pair from its presets: 8 x 25 GB/s = 200 GB/s (cluster.hpp's example).
  EXPECT_DOUBLE_EQ(Topology(load_system("dgx-a100"), 16).ring_bus_bandwidth(), 200e9);
  EXPECT_DOUBLE_EQ(Topology(load_system("dgx-a100"), 8).ring_bus_bandwidth(), 300e9);
}

}  // namespace
}  // namespace ddpsim::model
