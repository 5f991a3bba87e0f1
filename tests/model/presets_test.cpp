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

#include "model/alpha_beta_fit.hpp"
#include "model/cluster.hpp"
#include "model/error.hpp"
#include "model/hardware.hpp"
#include "model/units.hpp"

namespace ddpsim::model {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kHardwareDir = fs::path(DDPSIM_SCENARIO_DIR) / "hardware";

double s_to_us(double seconds) { return seconds * 1e6; }

json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return json::parse(in);
}

const json& published() {
  static const json rows = read_json(DDPSIM_PUBLISHED_JSON);
  return rows;
}

const json& row(const std::string& id) {
  for (const auto& r : published())
    if (r.at("id") == id) return r;
  throw std::runtime_error("no published row " + id);
}

// --- A minimal reader of the preset files (the scenario loader proper lives elsewhere). ---

LinkSpec load_link(const std::string& name) {
  const json j = read_json(kHardwareDir / "links" / (name + ".json"));
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
  t.tree_efficiency = j.at("tree_efficiency").get<double>();
  t.nvls_efficiency = j.at("nvls_efficiency").get<double>();
  t.latency = us_to_s(j.at("latency_us").get<double>());
  t.nvls_latency = us_to_s(j.value("nvls_latency_us", 25.0));
  return t;
}

HardwareSpec load_system(const std::string& name) {
  const json j = read_json(kHardwareDir / (name + ".json"));
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

// How the presets' intra-node constants were fitted: one relative-error (1/t^2) fit of t = a + b*S
// over the whole sweep, read as the algorithm that produced it.
//   A100 (ring):         a = 2(n-1)*alpha,  b = (2(n-1)/n) / (eta_ring * B)
//   H100/H200 (NVLS):    a = 2*alpha,       b = 1 / (eta_nvls * B)
// B is the one-node intra_node_bus of the preset's topology (the NVLink rate per GPU).
struct IntraFit {
  double alpha_us = 0;
  double eta = 0;
  AlphaBetaFit fit;
};

IntraFit fit_intra(const Sweep& s, double bus, bool nvls) {
  IntraFit f;
  f.fit = fit_alpha_beta(s.bytes, s.seconds);
  const double steps = nvls ? 2.0 : 2.0 * (s.n - 1);
  const double volume = nvls ? 1.0 : 2.0 * (s.n - 1) / s.n;
  f.alpha_us = f.fit.a / steps * 1e6;
  f.eta = volume / (f.fit.b * bus);
  return f;
}

// Tree efficiency is not in any sweep: NCCL's own model derates Tree AllReduce to 0.92 (the
// Simple-protocol cap) x 0.85 (the TREE pattern factor) of the ring's bus bandwidth (NCCL 2.30.7
// src/graph/tuning.cc; reference ecosystem.md 5.3). The presets apply the same ratio.
constexpr double kTreeOverRing = 0.92 * 0.85;
// NCCL's per-step latencies (ecosystem.md 5.2, tuning.cc hwLatencies, Simple protocol):
// NVLINK Ring 3.4 us (used for DGX-1, which has no published sweep), NET Ring 14.0 us.
constexpr double kNcclNvlinkRingSimpleUs = 3.4;
constexpr double kNcclNetRingSimpleUs = 14.0;

// A preset constant printed with `decimals` decimals equals `fitted` rounded.
void expect_printed(double preset, double fitted, int decimals, const std::string& what) {
  EXPECT_NEAR(preset, fitted, 0.5 * std::pow(10.0, -decimals) + 1e-12)
      << what << ": preset " << preset << ", fit " << fitted;
}

json system_json(const std::string& name) { return read_json(kHardwareDir / (name + ".json")); }

void expect_fitted_from(const std::string& system, const std::vector<std::string>& ids) {
  const json j = system_json(system);
  std::set<std::string> listed;
  for (const auto& id : j.at("collectives").at("fitted_from")) listed.insert(id.get<std::string>());
  for (const auto& id : ids) EXPECT_TRUE(listed.count(id)) << system << " does not list " << id;
}

double ring_bus_of(const std::string& system, int gpus) {
  return Topology(load_system(system), gpus).ring_bus_bandwidth();
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

TEST(Presets, DgxA100ConstantsAreTheFit) {
  const HardwareSpec hw = load_system("dgx-a100");
  const Sweep s = azure_sweep("a100");
  const IntraFit f = fit_intra(s, Topology(hw, 8).bandwidths().intra_node_bus, /*nvls=*/false);
  expect_printed(s_to_us(hw.intra_tuning.latency), f.alpha_us, 2, "a100 intra alpha (us)");
  expect_printed(hw.intra_tuning.ring_efficiency, f.eta, 3, "a100 intra ring eta");
  expect_printed(hw.intra_tuning.tree_efficiency, f.eta * kTreeOverRing, 3, "a100 intra tree");
  EXPECT_EQ(hw.intra_tuning.nvls_efficiency, 0.0);  // A100's NVSwitch does not reduce
  // Inter-node: 192 GB/s (row nccl-dgxa100-multinode) of the 200 GB/s the graph allows.
  const double eta_inter =
      row("nccl-dgxa100-multinode").at("value").get<double>() * 1e9 / ring_bus_of("dgx-a100", 16);
  expect_printed(hw.inter_tuning.ring_efficiency, eta_inter, 3, "a100 inter ring eta");
  expect_printed(hw.inter_tuning.tree_efficiency, eta_inter * kTreeOverRing, 3, "a100 inter tree");
  expect_printed(s_to_us(hw.inter_tuning.latency), kNcclNetRingSimpleUs, 2, "inter alpha");
  std::vector<std::string> ids = s.ids;
  ids.push_back("nccl-dgxa100-multinode");
  expect_fitted_from("dgx-a100", ids);
  std::cout << "[ fit      ] dgx-a100 intra: alpha " << f.alpha_us << " us, eta_ring " << f.eta
            << ", R^2 " << f.fit.r_squared << "; inter eta " << eta_inter << "\n";
}

// The maintainers' statement that NVLink4 reaches ~370 GB/s busbw with NCCL_ALGO=RING (row
// nccl-h100-nvls-peak, notes) gives the ring efficiency on H100/H200: 370 / 450.
double hopper_ring_eta(double nvlink_bus) {
  const std::string notes = row("nccl-h100-nvls-peak").at("notes").get<std::string>();
  EXPECT_NE(notes.find("~370 GB/s"), std::string::npos) << notes;
  EXPECT_NE(notes.find("NCCL_ALGO=RING"), std::string::npos) << notes;
  return 370e9 / nvlink_bus;
}

// Row nccl-cx7-ndr-per-nic: "48-49" GB/s per 400G NIC; the midpoint over the per-NIC share of
// the graph's ring bandwidth.
double ndr_inter_eta(const std::string& system) {
  const std::string v = row("nccl-cx7-ndr-per-nic").at("value").get<std::string>();
  const auto dash = v.find('-');
  const double mid = (std::stod(v.substr(0, dash)) + std::stod(v.substr(dash + 1))) / 2;
  const HardwareSpec hw = load_system(system);
  return mid * 1e9 / (ring_bus_of(system, 2 * hw.gpus_per_node) / hw.nics_per_node);
}

void check_hopper(const std::string& system, const std::string& gpu) {
  const HardwareSpec hw = load_system(system);
  const Topology node(hw, 8);
  ASSERT_GT(node.bandwidths().nvls_bus, 0.0) << system << ": NVLS must be on";
  const Sweep s = azure_sweep(gpu);
  const IntraFit f = fit_intra(s, node.bandwidths().nvls_bus, /*nvls=*/true);
  // The NVLS fit's intercept is the whole NVLS latency (2 alpha); ring steps keep NCCL's
  // NVLink ring step, which the NVLS-dominated sweep cannot show.
  expect_printed(s_to_us(hw.intra_tuning.nvls_latency), 2.0 * f.alpha_us, 2,
                 gpu + " NVLS latency (us)");
  expect_printed(s_to_us(hw.intra_tuning.latency), kNcclNvlinkRingSimpleUs, 2,
                 gpu + " intra ring step (us)");
  expect_printed(hw.intra_tuning.nvls_efficiency, f.eta, 3, gpu + " nvls eta");
  const double ring = hopper_ring_eta(node.bandwidths().intra_node_bus);
  expect_printed(hw.intra_tuning.ring_efficiency, ring, 3, gpu + " intra ring eta");
  expect_printed(hw.intra_tuning.tree_efficiency, ring * kTreeOverRing, 3, gpu + " intra tree");
  const double inter = ndr_inter_eta(system);
  expect_printed(hw.inter_tuning.ring_efficiency, inter, 3, gpu + " inter ring eta");
  expect_printed(hw.inter_tuning.tree_efficiency, inter * kTreeOverRing, 3, gpu + " inter tree");
  EXPECT_EQ(hw.inter_tuning.nvls_efficiency, 0.0);
  expect_printed(s_to_us(hw.inter_tuning.latency), kNcclNetRingSimpleUs, 2, "inter alpha");
  std::vector<std::string> ids = s.ids;
  ids.push_back("nccl-h100-nvls-peak");
  ids.push_back("nccl-cx7-ndr-per-nic");
  expect_fitted_from(system, ids);
  std::cout << "[ fit      ] " << system << " intra (NVLS): alpha " << f.alpha_us
            << " us, eta_nvls " << f.eta << ", R^2 " << f.fit.r_squared << "; ring " << ring
            << "; inter " << inter << "\n";
}

TEST(Presets, DgxH100ConstantsAreTheFit) { check_hopper("dgx-h100", "h100"); }
TEST(Presets, HgxH200ConstantsAreTheFit) { check_hopper("hgx-h200", "h200"); }

TEST(Presets, Dgx1ConstantsFollowTheirSources) {
  // No published sweep for DGX-1: alpha is NCCL's NVLink ring step (Simple), the ring efficiency
  // is assumed equal to A100's fitted NVLink ring efficiency, and the inter-node efficiency is
  // 48 GB/s (row nccl-dgx1-multinode) over the graph's 4 x 12.5 = 50 GB/s.
  const HardwareSpec hw = load_system("dgx-1");
  const HardwareSpec a100 = load_system("dgx-a100");
  expect_printed(s_to_us(hw.intra_tuning.latency), kNcclNvlinkRingSimpleUs, 2, "dgx-1 alpha");
  EXPECT_EQ(hw.intra_tuning.ring_efficiency, a100.intra_tuning.ring_efficiency);
  EXPECT_EQ(hw.intra_tuning.tree_efficiency, a100.intra_tuning.tree_efficiency);
  EXPECT_EQ(hw.intra_tuning.nvls_efficiency, 0.0);
  EXPECT_FALSE(hw.intra_node_switched);
  EXPECT_DOUBLE_EQ(ring_bus_of("dgx-1", 16), 50e9);
  const double eta_inter =
      row("nccl-dgx1-multinode").at("value").get<double>() * 1e9 / ring_bus_of("dgx-1", 16);
  expect_printed(hw.inter_tuning.ring_efficiency, eta_inter, 3, "dgx-1 inter eta");
  expect_printed(hw.inter_tuning.tree_efficiency, eta_inter * kTreeOverRing, 3, "dgx-1 tree");
  expect_printed(s_to_us(hw.inter_tuning.latency), kNcclNetRingSimpleUs, 2, "inter alpha");
  expect_fitted_from("dgx-1", {"nccl-dgx1-multinode", "nccl-azure-a100-8G"});
}

// (b) ----------------------------------------------------------------------------------------

// The model as the analytic engine evaluates it, with the preset's rounded constants.
double predicted_busbw(const HardwareSpec& hw, const CollectiveBandwidths& b, double bytes) {
  const int n = b.gpus;
  const double ring =
      2.0 * (n - 1) * hw.intra_tuning.latency +
      2.0 * (n - 1) / n * bytes / (hw.intra_tuning.ring_efficiency * b.intra_node_bus);
  double t = ring;
  if (b.nvls_bus > 0 && hw.intra_tuning.nvls_efficiency > 0)
    t = std::min(
        t, hw.intra_tuning.nvls_latency + bytes / (hw.intra_tuning.nvls_efficiency * b.nvls_bus));
  return bytes / t * 2.0 * (n - 1) / n;
}

// Tolerance at >= 256 MiB: 15 %. A two-parameter alpha-beta line fitted for relative error over
// 1 KiB..8 GiB cannot follow NCCL's gradual approach to its asymptote (protocol and chunking
// changes between ~1 MiB and ~256 MiB): it over-predicts the middle (up to +43 % at 16 MiB on
// A100) and under-predicts the largest sizes (-12 % at 8 GiB on A100, -10 % on H100).
constexpr double kLargeTolerance = 0.15;
constexpr double kLarge = 256.0 * 1024 * 1024;

void check_sweep(const std::string& system, const std::string& gpu, double rms_bound) {
  const HardwareSpec hw = load_system(system);
  const Topology node(hw, 8);
  const Sweep s = azure_sweep(gpu);
  double sum_sq = 0, worst = 0;
  for (std::size_t i = 0; i < s.bytes.size(); ++i) {
    const double pred = predicted_busbw(hw, node.bandwidths(), s.bytes[i]);
    const double rel = (pred - s.busbw[i]) / s.busbw[i];
    sum_sq += rel * rel;
    worst = std::max(worst, std::abs(rel));
    if (s.bytes[i] >= kLarge) {
      EXPECT_NEAR(rel, 0.0, kLargeTolerance)
          << s.ids[i] << ": predicted " << pred / 1e9 << " GB/s, published " << s.busbw[i] / 1e9;
    }
  }
  const double rms = std::sqrt(sum_sq / static_cast<double>(s.bytes.size()));
  std::cout << "[ busbw    ] " << system << " vs nccl-azure-" << gpu << "-*: RMS relative error "
            << rms << ", worst " << worst << " over " << s.bytes.size() << " sizes\n";
  ::testing::Test::RecordProperty(system + "_busbw_rms_rel_error", std::to_string(rms));
  ::testing::Test::RecordProperty(system + "_busbw_worst_rel_error", std::to_string(worst));
  EXPECT_LT(rms, rms_bound) << system;  // a regression guard at the value the fit gives today
}

TEST(Presets, DgxA100PredictsTheSweep) { check_sweep("dgx-a100", "a100", 0.18); }
TEST(Presets, DgxH100PredictsTheSweep) { check_sweep("dgx-h100", "h100", 0.19); }
TEST(Presets, HgxH200PredictsTheSweep) { check_sweep("hgx-h200", "h200", 0.10); }

TEST(Presets, HopperPicksNvls) {
  // Azure's H100 curve reaches 478.87 GB/s at 8 GiB, above the 450 GB/s a ring can ever give on
  // NVLink4, so NVLS must win there: eta_nvls * B * 2(n-1)/n > eta_ring * B.
  for (const std::string system : {"dgx-h100", "hgx-h200"}) {
    const HardwareSpec hw = load_system(system);
    const double nvls_asymptote = hw.intra_tuning.nvls_efficiency * 450e9 * 1.75;
    EXPECT_GT(nvls_asymptote, hw.intra_tuning.ring_efficiency * 450e9) << system;
    EXPECT_GT(nvls_asymptote, 0.85 * 478.87e9) << system;
  }
}

TEST(Presets, MultiNodeBandwidthMatchesRows) {
  // Large-message busbw across nodes is eta_inter * ring_bus: DGX A100 pair 0.96 * 200 = 192
  // (nccl-dgxa100-multinode), DGX-1 pair 0.96 * 50 = 48 (nccl-dgx1-multinode).
  EXPECT_NEAR(load_system("dgx-a100").inter_tuning.ring_efficiency * ring_bus_of("dgx-a100", 16),
              192e9, 0.5e9);
  EXPECT_NEAR(load_system("dgx-1").inter_tuning.ring_efficiency * ring_bus_of("dgx-1", 16), 48e9,
              0.5e9);
  // DGX H100, 4 nodes: 0.97 * 400 = 388 GB/s; a user's RoCE cluster reported 320 (row
  // nccl-user-4xh100-roce), 18 % below: RoCE and that cluster's tuning, not the preset (IB).
  EXPECT_NEAR(load_system("dgx-h100").inter_tuning.ring_efficiency * ring_bus_of("dgx-h100", 32),
              388e9, 0.5e9);
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
  for (const std::string need : {"v100-sxm2", "a100-sxm-80gb", "h100-sxm", "h200-sxm"})
    EXPECT_TRUE(names.count(need)) << need;
  for (const auto& f : files) {
    const json j = read_json(f);
    // attention_efficiency only where a flash-attention kernel benchmark exists (Ampere and
    // newer: V100 has no flash kernel, and its source says so).
    std::set<std::string> keys = {"name",
                                  "description",
                                  "source",
                                  "memory_gib",
                                  "memory_bandwidth_gbytes_per_s",
                                  "memory_efficiency",
                                  "peak_tflops",
                                  "efficiency",
                                  "sm_count"};
    const bool ampere_or_newer = f.stem().string() != "v100-sxm2";
    if (ampere_or_newer) keys.insert("attention_efficiency");
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
      EXPECT_TRUE(parse_dtype(dtype).has_value()) << f << " " << dtype;
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
  EXPECT_FALSE(read_json(kHardwareDir / "gpus/v100-sxm2.json").at("peak_tflops").contains("bf16"));
  EXPECT_EQ(read_json(kHardwareDir / "gpus/h100-sxm.json").at("peak_tflops").at("bf16"), 989.4);
  EXPECT_EQ(read_json(kHardwareDir / "gpus/a100-sxm-80gb.json").at("peak_tflops").at("fp16"), 312);
}

TEST(Presets, LinkFilesHaveTheirKeys) {
  std::set<std::string> names;
  for (const auto& f : json_files(kHardwareDir / "links")) {
    names.insert(f.stem().string());
    const json j = read_json(f);
    EXPECT_EQ(j.at("name"), f.stem().string());
    const std::string kind = j.at("kind").get<std::string>();
    const std::string rate = kind == "nic" ? "bandwidth_gbps" : "bandwidth_gbytes_per_s";
    EXPECT_TRUE(kind == "intra_node" || kind == "pcie" || kind == "nic") << f << " " << kind;
    expect_keys(j, {"name", "kind", rate, "latency_us", "source"}, f);
    EXPECT_GT(j.at(rate).get<double>(), 0) << f;
    EXPECT_GT(j.at("latency_us").get<double>(), 0) << f;
    EXPECT_FALSE(j.at("source").get<std::string>().empty()) << f;
  }
  for (const std::string need :
       {"nvlink2", "nvlink3", "nvlink4", "pcie3-x16", "pcie4-x16", "pcie5-x16", "eth-25g",
        "eth-100g", "ib-edr-100", "ib-hdr-200", "ib-ndr-400"})
    EXPECT_TRUE(names.count(need)) << need;
}

TEST(Presets, SystemFilesHaveTheirKeys) {
  std::set<std::string> names;
  std::set<std::string> ids;
  for (const auto& r : published()) ids.insert(r.at("id").get<std::string>());
  for (const auto& f : json_files(kHardwareDir)) {
    names.insert(f.stem().string());
    const json j = read_json(f);
    expect_keys(j,
                {"name", "description", "source", "gpu", "gpus_per_node", "intra_node",
                 "intra_node_switched", "pcie", "inter_node", "network", "collectives"},
                f);
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
    EXPECT_EQ(read_json(kHardwareDir / "links" /
                        (j.at("intra_node").at("preset").get<std::string>() + ".json"))
                  .at("kind"),
              "intra_node");
    EXPECT_EQ(read_json(kHardwareDir / "links" /
                        (j.at("inter_node").at("preset").get<std::string>() + ".json"))
                  .at("kind"),
              "nic");
    EXPECT_GE(j.at("gpus_per_node").get<int>(), 1);
    EXPECT_GE(j.at("inter_node").at("nics_per_node").get<int>(), 1);
    EXPECT_GE(j.at("network").at("oversubscription").get<double>(), 1.0);
    EXPECT_GE(j.at("network").at("nodes_per_leaf").get<int>(), 1);
    const json& c = j.at("collectives");
    expect_keys(c, {"intra_node", "inter_node", "fitted_from"}, f);
    for (const char* side : {"intra_node", "inter_node"}) {
      std::set<std::string> keys = {"ring_efficiency", "tree_efficiency", "nvls_efficiency",
                                    "latency_us"};
      if (std::string(side) == "intra_node") keys.insert("nvls_latency_us");
      expect_keys(c.at(side), keys, f);
      for (const char* k : {"ring_efficiency", "tree_efficiency"}) {
        EXPECT_GT(c.at(side).at(k).get<double>(), 0) << f << " " << side << " " << k;
        EXPECT_LE(c.at(side).at(k).get<double>(), 1) << f << " " << side << " " << k;
      }
      EXPECT_GE(c.at(side).at("nvls_efficiency").get<double>(), 0) << f;
      EXPECT_LE(c.at(side).at("nvls_efficiency").get<double>(), 1) << f;
      EXPECT_GT(c.at(side).at("latency_us").get<double>(), 0) << f;
    }
    EXPECT_FALSE(c.at("fitted_from").empty()) << f;
    for (const auto& id : c.at("fitted_from"))
      EXPECT_TRUE(ids.count(id.get<std::string>())) << f << ": unknown row " << id;
  }
  for (const std::string need : {"dgx-1", "dgx-a100", "dgx-h100", "hgx-h200"})
    EXPECT_TRUE(names.count(need)) << need;
}

// (d) ----------------------------------------------------------------------------------------

TEST(Presets, UnitConversions) {
  // NVLink datasheet figures count both directions: 900 GB/s (H100) -> 450 per direction,
  // 600 (A100) -> 300, 300 (V100) -> 150.
  const std::map<std::string, std::pair<double, std::string>> nvlink = {
      {"nvlink4", {450, "900 GB/s"}},
      {"nvlink3", {300, "600 GB/s"}},
      {"nvlink2", {150, "300 GB/s"}}};
  for (const auto& [name, expect] : nvlink) {
    const json j = read_json(kHardwareDir / "links" / (name + ".json"));
    EXPECT_EQ(j.at("bandwidth_gbytes_per_s").get<double>(), expect.first) << name;
    EXPECT_EQ(j.at("bandwidth_gbytes_per_s").get<double>() * 2,
              std::stod(expect.second.substr(0, 3)))
        << name;
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
    EXPECT_NEAR(read_json(kHardwareDir / "links" / (name + ".json"))
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
  EXPECT_DOUBLE_EQ(ring_bus_of("dgx-a100", 16), 200e9);
  EXPECT_DOUBLE_EQ(Topology(load_system("dgx-a100"), 8).ring_bus_bandwidth(), 300e9);
}

}  // namespace
}  // namespace ddpsim::model
