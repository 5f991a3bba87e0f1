// Resolving a "hardware" section: system, GPU and link presets merged with the keys beside them.
#include "model/scenario/hardware_io.hpp"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>

#include "model/error.hpp"
#include "model/hardware/nccl_version.hpp"
#include "model/paths.hpp"
#include "model/profile/machine_match.hpp"
#include "model/profile/profile.hpp"
#include "model/profile/profile_hardware.hpp"
#include "model/run_context.hpp"
#include "model/scenario/detail/json_io.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "model/units.hpp"

namespace ddpsim::model {

using detail::get_or;
using detail::get_or_default;
using detail::need_number;
using detail::read_cached;
using detail::require_file;
using detail::reroot;
using nlohmann::json;

namespace {

json merge_preset(const json& section, const std::string& dir, const KeyTable& table,
                  const std::string& file, const std::string& pointer) {
  if (!section.is_object() || !section.contains("preset")) return section;
  const std::string name = section.at("preset").get<std::string>();
  const auto path = data_dir() / dir / (name + ".json");
  if (!std::filesystem::exists(path)) {
    std::string known;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(data_dir() / dir, ec)) {
      if (e.path().extension() == ".json") {
        known += known.empty() ? "" : ", ";
        known += e.path().stem().string();
      }
    }
    throw InputError(file, pointer + "/preset", "a preset name (" + known + ")",
                     "\"" + name + "\"");
  }
  json base = read_cached(path.string());
  validate(base, table, path.string());
  json patch = section;
  patch.erase("preset");
  base.merge_patch(patch);
  return base;
}

LinkSpec parse_link(const json& o, bool nic, const std::string& file, const std::string& p) {
  LinkSpec l;
  l.name = get_or<std::string>(o, "name", "custom");
  l.kind = get_or<std::string>(o, "kind", nic ? "nic" : "intra_node");
  l.bandwidth =
      nic ? gbps_to_bytes_per_s(need_number(o, "bandwidth_gbps", file, p))
          : gbytes_per_s_to_bytes_per_s(need_number(o, "bandwidth_gbytes_per_s", file, p));
  l.latency = us_to_s(need_number(o, "latency_us", file, p));
  if (nic) l.reported_latency = us_to_s(get_or<double>(o, "reported_latency_us", 0.0));
  return l;
}

// "this-machine": results/profile-<hostname>.json in the scenario's folder or any folder above
// it (a project tree keeps results/ at its root), then beside the data dir (an installed tree).
std::string find_this_machine_profile(const std::string& file, const std::string& pointer) {
  const std::string name = "profile-" + host_name() + ".json";
  std::vector<std::filesystem::path> looked;
  std::error_code ec;
  auto dir = std::filesystem::absolute(std::filesystem::path(file), ec).parent_path();
  for (int depth = 0; depth < 64 && !dir.empty(); ++depth) {
    looked.push_back(dir / "results" / name);
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  try {
    looked.push_back(data_dir().parent_path() / "results" / name);
  } catch (const Error&) {
    // No data dir: the folders above the scenario are all there is to search.
  }
  for (const auto& p : looked) {
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  throw InputError(
      file, pointer + "/preset",
      "a calibration profile of this machine (results/" + name +
          " beside or above the scenario, or beside the data dir); run `ddpsim "
          "calibrate --out results/" +
          name + "` first",
      "\"this-machine\" but none was found (first looked at " + looked.front().string() + ")");
}

// This machine's fingerprint, probed once per process (a sweep resolves its hardware per point).
const MachineFingerprint& this_machine_fingerprint() {
  static const MachineFingerprint m = probe_machine();
  return m;
}

// A profile read for `file`: "this-machine" refuses one whose fingerprint does not match this
// machine (one line: the profile, the first differing field, both values; exit 2); a profile
// named explicitly is used, with a warning per difference. Warn-only differences are warnings.
std::vector<std::string> check_machine(const Profile& p, bool this_machine) {
  const MachineMatch r =
      compare_machines(machine_from_json(p.document()), this_machine_fingerprint());
  if (this_machine && !r.same_machine()) {
    const MachineDifference& d = r.mismatches.front();
    std::string more;
    for (std::size_t i = 1; i < r.mismatches.size(); ++i) {
      more += (i == 1 ? " (also " : ", ") + r.mismatches[i].field;
    }
    if (!more.empty()) more += ")";
    throw InputError(p.file(), d.field == "machine" ? "/machine" : "/machine/" + d.field,
                     "a profile of this machine for \"preset\": \"this-machine\" (" + d.field +
                         " here: " + d.here + "); recalibrate (ddpsim calibrate ... --out " +
                         p.file() + ") or name it in hardware.profile to use it anyway",
                     d.profile + more);
  }
  std::vector<std::string> w;
  for (const MachineDifference& d : r.mismatches) {
    w.push_back(p.file() + ": measured on another machine, used as named: " + describe(d));
  }
  for (const MachineDifference& d : r.warnings) {
    w.push_back(p.file() + ": machine differs from this one: " + describe(d));
  }
  return w;
}

// `pointer`: the scenario table's row of this link class, whose defaults apply
// ("/hardware/collectives/intra_node").
CollectiveTuning parse_tuning(const json& o, const std::string& pointer) {
  CollectiveTuning c;
  c.ring_efficiency = get_or_default<double>(o, pointer + "/ring_efficiency");
  c.tree_efficiency = get_or_default<double>(o, pointer + "/tree_efficiency");
  c.nvls_efficiency = get_or_default<double>(o, pointer + "/nvls_efficiency");
  c.latency = us_to_s(get_or_default<double>(o, pointer + "/latency_us"));
  c.nvls_latency = us_to_s(get_or_default<double>(o, pointer + "/nvls_latency_us"));
  return c;
}

// NCCL's kernel costs, launch and release ("/hardware/collectives/...").
NcclKernelCosts parse_nccl_kernel(const json& c, const std::string& file) {
  const std::string p = "/hardware/collectives";
  NcclKernelCosts k;
  k.simple_slice = us_to_s(get_or_default<double>(c, p + "/simple_slice_us"));
  k.ll128_iteration = us_to_s(get_or_default<double>(c, p + "/ll128_iteration_us"));
  k.nvls_chunk = us_to_s(get_or_default<double>(c, p + "/nvls_chunk_us"));
  k.host_launch = us_to_s(get_or_default<double>(c, p + "/host_launch_us"));
  k.gpus_per_process = get_or_default<int>(c, p + "/gpus_per_process");
  k.cuda_graphs = get_or_default<bool>(c, p + "/cuda_graphs");
  k.buffsize_bytes = static_cast<double>(get_or_default<std::int64_t>(c, p + "/buffsize_bytes"));
  k.nvls_chunk_bytes =
      static_cast<double>(get_or_default<std::int64_t>(c, p + "/nvls_chunk_bytes"));
  k.nvls_tree_max_chunk_bytes =
      static_cast<double>(get_or_default<std::int64_t>(c, p + "/nvls_tree_max_chunk_bytes"));
  k.nccl_version = get_or_default<std::string>(c, p + "/nccl_version");
  if (!nccl_version_known(k.nccl_version)) {
    throw InputError(file, p + "/nccl_version",
                     "an NCCL release 2.18.0 .. 2.30.x written MAJOR.MINOR.PATCH (e.g. \"2.18.5\")",
                     "\"" + k.nccl_version + "\"");
  }
  return k;
}

// The hardware section as one document: the profile it names (or this machine's) or the hardware
// file, then the system, GPU and link presets, each with the keys beside it merged over it.
struct MergedHardware {
  json doc;
  std::shared_ptr<const Profile> profile;
  std::vector<std::string> warnings;  // from checking the profile against this machine
};

MergedHardware merged_hardware(const json& section, const std::string& file,
                               const std::string& pointer) {
  static const KeyTable system_table = reroot(scenario_keys(), "/hardware", "hardware preset");
  static const KeyTable gpu_table = reroot(scenario_keys(), "/hardware/gpu", "GPU preset");
  static const KeyTable link_table = reroot(scenario_keys(), "/hardware/intra_node", "link preset");
  static const KeyTable nic_table = reroot(scenario_keys(), "/hardware/inter_node", "NIC preset");

  json hw = section;
  std::string hw_file = file;
  // A profile (named, or this machine's) replaces the preset: the hardware document is built
  // from its measurements and the keys beside it override that, as they override a preset.
  std::string profile_path;
  const bool this_machine =
      hw.contains("preset") && hw.at("preset").get<std::string>() == "this-machine";
  if (hw.contains("profile")) {
    if (hw.contains("file") || this_machine) {
      throw InputError(file, pointer + "/profile",
                       "a profile alone, or beside a system preset (a collectives-only profile)",
                       std::string("a profile beside ") +
                           (this_machine ? "\"preset\": \"this-machine\"" : "a file"));
    }
    profile_path = require_file(file, pointer + "/profile", hw.at("profile").get<std::string>());
  } else if (this_machine) {
    if (hw.contains("file")) {
      throw InputError(file, pointer + "/file", "no file beside \"preset\": \"this-machine\"",
                       "a file");
    }
    profile_path = find_this_machine_profile(file, pointer);
  }
  MergedHardware m;
  if (!profile_path.empty() && hw.contains("preset") && !this_machine) {
    // A profile beside a preset (an imported nccl-tests log of the user's own cluster): the
    // preset is the machine; the profile's measured collective tables replace its collectives
    // where the ranks match (analytic.cpp profile_collective_s). GEMMs would replace the GPU:
    // a whole calibration profile stands alone.
    m.profile = std::make_shared<const Profile>(Profile::load(profile_path));
    if (!m.profile->gemms().empty() || !m.profile->document().contains("collectives")) {
      throw InputError(file, pointer + "/profile",
                       "a profile holding collectives only beside \"preset\" (ddpsim-calibrate "
                       "import nccl-tests LOG); a calibration profile with GEMMs stands alone",
                       m.profile->gemms().empty() ? "no collectives in " + profile_path
                                                  : "GEMMs in " + profile_path);
    }
    const json& coll = m.profile->document().at("collectives");
    if (coll.value("gpus_per_process", 1) > 1) {
      m.warnings.push_back(
          profile_path + ": measured with one thread driving " +
          std::to_string(coll.value("gpus_per_process", 1)) +
          " GPUs (nccl-tests -g): its calls below ~1 MiB carry that many host launches, which a "
          "process per GPU (DDP, FSDP) does not pay");
    }
    hw.erase("profile");
    profile_path.clear();
  }
  if (!profile_path.empty()) {
    m.profile = std::make_shared<const Profile>(Profile::load(profile_path));
    m.warnings = check_machine(*m.profile, this_machine);
    json base = hardware_json_from_profile(*m.profile, file, pointer);
    json patch = hw;
    patch.erase("profile");
    patch.erase("preset");
    // A part given by its own preset replaces the measured part (merging would let the
    // measured keys override the preset the user asked for); other keys patch it.
    for (auto it = patch.begin(); it != patch.end();) {
      if (it->is_object() && it->contains("preset")) {
        base[it.key()] = *it;
        it = patch.erase(it);
      } else {
        ++it;
      }
    }
    base.merge_patch(patch);
    hw = std::move(base);
  }
  if (hw.contains("file")) {
    const auto path = require_file(file, pointer + "/file", hw.at("file").get<std::string>());
    json base = read_cached(path);
    validate(base, system_table, path);
    json patch = hw;
    patch.erase("file");
    base.merge_patch(patch);
    hw = std::move(base);
  }
  hw = merge_preset(hw, "hardware", system_table, file, pointer);
  if (hw.contains("gpu"))
    hw["gpu"] = merge_preset(hw["gpu"], "hardware/gpus", gpu_table, file, pointer + "/gpu");
  for (const char* k : {"intra_node", "pcie"}) {
    if (hw.contains(k))
      hw[k] = merge_preset(hw[k], "hardware/links", link_table, file, pointer + "/" + k);
  }
  if (hw.contains("inter_node")) {
    hw["inter_node"] =
        merge_preset(hw["inter_node"], "hardware/links", nic_table, file, pointer + "/inter_node");
  }
  m.doc = std::move(hw);
  return m;
}

// gpu.attention_kernels: measured fused-attention rates by kernel, causality and head dimension.
std::vector<GpuSpec::AttentionBenchmark> parse_attention_kernels(const json& k,
                                                                 const std::string& file,
                                                                 const std::string& gp) {
  std::vector<GpuSpec::AttentionBenchmark> out;
  for (const char* kernel : {"flash2", "triton", "flash1"}) {
    if (!k.contains(kernel)) continue;
    const json& series = k.at(kernel);
    for (std::size_t i = 0; i < series.size(); ++i) {
      const json& e = series.at(i);
      const std::string ep = gp + "/attention_kernels/" + kernel + "/" + std::to_string(i);
      GpuSpec::AttentionBenchmark b;
      b.kernel = kernel;
      b.causal = e.at("causal").get<bool>();
      b.head_dim = e.at("head_dim").get<double>();
      b.seq_len = e.at("seq_len").get<std::vector<double>>();
      for (double t : e.at("fwd_bwd_tflops").get<std::vector<double>>()) {
        b.flops_per_s.push_back(tflops_to_flops(t));
      }
      if (b.seq_len.size() != b.flops_per_s.size()) {
        throw InputError(file, ep + "/fwd_bwd_tflops",
                         "one rate per seq_len (" + std::to_string(b.seq_len.size()) + ")",
                         std::to_string(b.flops_per_s.size()) + " rates");
      }
      for (std::size_t j = 1; j < b.seq_len.size(); ++j) {
        if (b.seq_len[j] <= b.seq_len[j - 1]) {
          throw InputError(file, ep + "/seq_len/" + std::to_string(j),
                           "sequence lengths in ascending order", e.at("seq_len").at(j).dump());
        }
      }
      out.push_back(std::move(b));
    }
  }
  return out;
}

// gpu.gemm_table: measured GEMM rates by shape, one list per compute dtype.
void parse_gemm_table(const json& t, const std::string& file, const std::string& gp, GpuSpec& gpu) {
  gpu.gemm_table_source = get_or<std::string>(t, "source", "");
  for (const auto& [key, list] : t.items()) {
    if (key == "source") continue;
    const DType d = *parse_dtype(key);  // the key table admits fp32/fp16/bf16 only
    std::vector<GpuSpec::GemmMeasurement>& out = gpu.gemm_table[d];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& e = list.at(i);
      const std::string ep = gp + "/gemm_table/" + key + "/" + std::to_string(i);
      GpuSpec::GemmMeasurement g;
      g.m = need_number(e, "m", file, ep);
      g.n = need_number(e, "n", file, ep);
      g.k = need_number(e, "k", file, ep);
      g.flops_per_s = tflops_to_flops(need_number(e, "tflops", file, ep));
      out.push_back(g);
    }
  }
}

// The "gpu" part of a merged hardware document (at `gp`, for errors).
GpuSpec parse_gpu(const json& g, const std::string& file, const std::string& gp) {
  GpuSpec gpu;
  gpu.name = get_or<std::string>(g, "name", "custom");
  gpu.source = get_or<std::string>(g, "source", "");
  gpu.memory_bytes = need_number(g, "memory_gib", file, gp) * kGiB;
  gpu.memory_bandwidth =
      gbytes_per_s_to_bytes_per_s(need_number(g, "memory_bandwidth_gbytes_per_s", file, gp));
  gpu.memory_efficiency = get_or_default<double>(g, "/hardware/gpu/memory_efficiency");
  gpu.kernel_floor_s = us_to_s(get_or_default<double>(g, "/hardware/gpu/kernel_floor_us"));
  gpu.compute_capability = get_or_default<double>(g, "/hardware/gpu/compute_capability");
  if (!g.contains("peak_tflops") || g.at("peak_tflops").empty()) {
    throw InputError(file, gp + "/peak_tflops", "at least one dtype's peak", "nothing");
  }
  for (const auto& [k, v] : g.at("peak_tflops").items()) {
    if (k == "tf32") {
      gpu.tf32_peak_flops = tflops_to_flops(v.get<double>());
      if (g.contains("efficiency") && g.at("efficiency").contains(k)) {
        gpu.tf32_efficiency = g.at("efficiency").at(k).get<double>();
      }
      continue;
    }
    const DType d = *parse_dtype(k);
    gpu.peak_flops[d] = tflops_to_flops(v.get<double>());
    // A peak without an efficiency is kept (it documents the part) but cannot be computed
    // with; the precision check below names the missing efficiency if training needs it.
    if (g.contains("efficiency") && g.at("efficiency").contains(k)) {
      gpu.efficiency[d] = g.at("efficiency").at(k).get<double>();
    }
  }
  gpu.sm_count = get_or_default<int>(g, "/hardware/gpu/sm_count");
  if (g.contains("attention_efficiency")) {
    const json& a = g.at("attention_efficiency");
    gpu.attention_fwd_efficiency = need_number(a, "fwd", file, gp + "/attention_efficiency");
    gpu.attention_bwd_efficiency = need_number(a, "bwd", file, gp + "/attention_efficiency");
  }
  if (g.contains("attention_kernels")) {
    gpu.attention_benchmarks = parse_attention_kernels(g.at("attention_kernels"), file, gp);
  }
  if (g.contains("gemm_table")) parse_gemm_table(g.at("gemm_table"), file, gp, gpu);
  return gpu;
}

}  // namespace

HardwareSpec resolve_hardware(const json& section, const std::string& file,
                              const std::string& pointer) {
  MergedHardware merged = merged_hardware(section, file, pointer);
  const json& hw = merged.doc;
  HardwareSpec s;
  s.name = get_or<std::string>(hw, "name", "custom");
  s.source = get_or<std::string>(hw, "source", "");
  if (!hw.contains("gpu"))
    throw InputError(file, pointer + "/gpu", "a GPU (preset or keys)", "nothing");
  s.gpu = parse_gpu(hw.at("gpu"), file, pointer + "/gpu");
  if (!hw.contains("gpus_per_node")) {
    throw InputError(file, pointer + "/gpus_per_node", "a value (from a preset or given here)",
                     "nothing");
  }
  s.gpus_per_node = hw.at("gpus_per_node").get<int>();
  if (hw.contains("gpus_per_host")) {
    s.gpus_per_host = hw.at("gpus_per_host").get<int>();
    if (s.gpus_per_node % s.gpus_per_host != 0) {
      throw InputError(file, pointer + "/gpus_per_host",
                       "a divisor of gpus_per_node (" + std::to_string(s.gpus_per_node) +
                           "): hosts share one NVLink domain",
                       std::to_string(s.gpus_per_host));
    }
  }
  const std::string vendor = get_or_default<std::string>(hw, "/hardware/cpu_vendor");
  s.cpu_vendor = vendor == "amd"   ? HardwareSpec::CpuVendor::kAmd
                 : vendor == "arm" ? HardwareSpec::CpuVendor::kArm
                                   : HardwareSpec::CpuVendor::kIntel;
  if (!hw.contains("intra_node")) {
    throw InputError(file, pointer + "/intra_node", "a link (preset or keys)", "nothing");
  }
  s.intra_node = parse_link(hw.at("intra_node"), false, file, pointer + "/intra_node");
  s.intra_node_switched = get_or_default<bool>(hw, "/hardware/intra_node_switched");
  // Without an explicit PCIe path the GPU reaches its NIC at the NIC's own rate.
  if (!hw.contains("inter_node")) {
    throw InputError(file, pointer + "/inter_node", "a NIC (preset or keys)", "nothing");
  }
  s.inter_node = parse_link(hw.at("inter_node"), true, file, pointer + "/inter_node");
  s.nics_per_node = get_or<int>(hw.at("inter_node"), "nics_per_node", 1);
  s.pcie = hw.contains("pcie") ? parse_link(hw.at("pcie"), false, file, pointer + "/pcie")
                               : LinkSpec{"nic-rate", s.inter_node.bandwidth, 0};
  const json net = hw.value("network", json::object());
  s.oversubscription = get_or_default<double>(net, "/hardware/network/oversubscription");
  s.nodes_per_leaf = get_or_default<int>(net, "/hardware/network/nodes_per_leaf");
  const json coll = hw.value("collectives", json::object());
  s.intra_tuning =
      parse_tuning(coll.value("intra_node", json::object()), "/hardware/collectives/intra_node");
  s.inter_tuning =
      parse_tuning(coll.value("inter_node", json::object()), "/hardware/collectives/inter_node");
  s.collective_model =
      get_or_default<std::string>(coll, "/hardware/collectives/model") == "alpha_beta"
          ? CollectiveModel::kAlphaBeta
          : CollectiveModel::kNccl;
  s.nccl_kernel = parse_nccl_kernel(coll, file);
  s.profile = std::move(merged.profile);
  s.warnings = std::move(merged.warnings);
  return s;
}

}  // namespace ddpsim::model
