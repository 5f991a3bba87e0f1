// Public nccl-tests logs against the collective model (nccl_logs.hpp).
#include "simulator/fidelity/nccl_logs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>

#include "model/collective_op.hpp"
#include "model/error.hpp"
#include "model/hardware/cluster.hpp"
#include "model/hardware/nccl_version.hpp"
#include "model/imports/measurement_import.hpp"
#include "model/json_file.hpp"
#include "model/scenario/hardware_io.hpp"
#include "model/trace_file.hpp"
#include "simulator/collectives/collective.hpp"

namespace ddpsim::sim {

using nlohmann::json;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string text(const json& e, const char* key) {
  return e.contains(key) && e.at(key).is_string() ? e.at(key).get<std::string>() : "";
}

int count(const json& e, const char* key, int fallback) {
  return e.contains(key) && e.at(key).is_number_integer() ? e.at(key).get<int>() : fallback;
}

// The system preset of a GPU name as logs print it ("NVIDIA H100 80GB HBM3").
std::string preset_of(const std::string& gpu) {
  const std::string g = lower(gpu);
  if (g.find("b200") != std::string::npos) return "dgx-b200";
  if (g.find("h200") != std::string::npos) return "hgx-h200";
  if (g.find("h100") != std::string::npos) return "dgx-h100";
  if (g.find("a100") != std::string::npos) return "dgx-a100";
  if (g.find("v100") != std::string::npos) return "dgx-1";
  return "";
}

// The NIC of a fabric as the index names it: a link preset, with keys beside it where the
// fabric's rate differs from the preset's; null: the system preset's own.
json nic_of(const std::string& fabric) {
  const std::string f = lower(fabric);
  // GCP A3 Mega: 8 x 200 Gb/s GPU NICs over GPUDirect-TCPXO (Google's A3 Mega documentation:
  // 1,800 Gb/s, of which 200 Gb/s is the host NIC), Ethernet with TCP's costs unknown here.
  if (f.find("tcpxo") != std::string::npos) {
    return {{"preset", "eth-100g"}, {"bandwidth_gbps", 200}};
  }
  if (f.find("efa") != std::string::npos) return {{"preset", "efa-100g"}};
  if (f.find("roce") != std::string::npos) return {{"preset", "roce-400g"}};
  if (f.find("ndr") != std::string::npos) return {{"preset", "ib-ndr-400"}};
  if (f.find("hdr") != std::string::npos) return {{"preset", "ib-hdr-200"}};
  if (f.find("socket") != std::string::npos || f.find("tcp") != std::string::npos) {
    return {{"preset", "eth-100g"}};
  }
  return nullptr;
}

model::CollectiveAlgorithm forced(const std::string& algo) {
  const std::string a = lower(algo);
  if (a == "ring") return model::CollectiveAlgorithm::kRing;
  if (a == "tree") return model::CollectiveAlgorithm::kTree;
  if (a == "nvls") return model::CollectiveAlgorithm::kNvls;
  if (a == "nvlstree" || a == "nvls_tree") return model::CollectiveAlgorithm::kNvlsTree;
  return model::CollectiveAlgorithm::kAuto;
}

model::CollectiveProtocol forced_proto(const std::string& proto) {
  const std::string p = lower(proto);
  if (p == "ll") return model::CollectiveProtocol::kLL;
  if (p == "ll128") return model::CollectiveProtocol::kLL128;
  if (p == "simple") return model::CollectiveProtocol::kSimple;
  return model::CollectiveProtocol::kAuto;
}

}  // namespace

std::vector<BusbwBand> nccl_log_bands(const std::filesystem::path& dir) {
  std::vector<BusbwBand> out;
  const auto index_path = dir / "index.json";
  if (!std::filesystem::exists(index_path)) return out;
  const json index = model::read_json_file(index_path.string());
  if (!index.is_array()) throw Error(index_path.string() + ": expected an array of logs");
  for (const json& e : index) {
    const std::string file = text(e, "file");
    const std::string preset = preset_of(text(e, "gpu"));
    if (file.empty() || preset.empty()) continue;
    // The op from the file name (table excerpts carry no "Collective test starting" line).
    std::string op_name;
    for (const char* o : {"all_reduce", "all_gather", "reduce_scatter", "broadcast"}) {
      if (file.rfind(o, 0) == 0) op_name = o;
    }
    if (op_name.empty()) continue;  // sendrecv and others: not a collective ddpsim models
    // Read as a log (not import_nccl_tests_file: a table excerpt has no rank lines, and the
    // ranks come from the index here).
    const std::string path = (dir / file).string();
    const json c = model::import_nccl_tests_log(
        model::read_measurement_text(path, "an nccl-tests log"), path, op_name);
    const int per_node = count(e, "gpus_per_node", 8);
    const int nodes = std::max(1, count(e, "nodes", 1));
    json section = {{"preset", preset}, {"gpus_per_node", per_node}};
    const std::string version = text(e, "nccl_version");
    if (model::nccl_version_known(version)) section["collectives"]["nccl_version"] = version;
    const bool threads = text(e, "launch") == "threads";
    section["collectives"]["gpus_per_process"] =
        std::max(1, count(e, "gpus_per_process", threads ? per_node : 1));
    json nic = nic_of(text(e, "fabric"));
    if (nodes > 1 && !nic.is_null()) {
      nic["nics_per_node"] = std::max(1, count(e, "nics_per_node", 8));
      section["inter_node"] = nic;
    }
    const model::HardwareSpec hw = model::resolve_hardware(section, file, "/hardware");
    const model::Topology topo(hw, per_node * nodes);
    const auto algo = forced(text(e, "algo"));
    const auto proto = forced_proto(text(e, "proto"));
    for (const auto& [name, table] : c.at("ops").items()) {
      const auto op = model::parse_collective_op(name);
      if (!op) continue;
      std::map<std::string, std::pair<double, std::size_t>> log_sum;
      std::map<std::string, double> worst;
      for (const json& row : table.at("rows")) {
        const double bytes = row.at("size_bytes").get<double>();
        const double busbw = row.value("busbw_gbytes_per_s", 0.0);
        if (!(bytes > 0) || !(busbw > 0)) continue;
        const double model_bw =
            collective_cost(*op, topo.bandwidths(), hw, bytes, algo, proto).busbw_gbytes_per_s;
        const double rel = std::abs(model_bw - busbw) / busbw;
        const std::string band = busbw_band(bytes);
        log_sum[band].first += std::log(std::max(rel, 1e-6));
        ++log_sum[band].second;
        worst[band] = std::max(worst[band], rel);
      }
      for (const char* band : {"< 64 KiB", "64 KiB - 1 MiB", "1 - 64 MiB", ">= 64 MiB"}) {
        if (!log_sum.count(band)) continue;
        BusbwBand b;
        b.sweep = fmt::format("{} | {} | {} x {} GPUs, {} | NCCL {} | -g {}", name, file, nodes,
                              per_node, text(e, "fabric"), version.empty() ? "?" : version,
                              hw.nccl_kernel.gpus_per_process);
        // A log a preset's constants were fitted on says so: its error is a fit, not a test.
        if (!text(e, "fitted_for").empty()) b.sweep += " | FIT: " + text(e, "fitted_for");
        b.preset = preset;
        b.band = band;
        b.count = log_sum[band].second;
        b.geomean_abs_error = std::exp(log_sum[band].first / static_cast<double>(b.count));
        b.max_abs_error = worst[band];
        out.push_back(b);
      }
    }
  }
  return out;
}

}  // namespace ddpsim::sim
