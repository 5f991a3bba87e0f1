// Public nccl-tests logs against the collective model (nccl_logs.hpp).
#include "simulator/fidelity/nccl_logs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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
#include "simulator/fidelity/detail/sweep_bands.hpp"

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

}  // namespace

std::vector<BusbwBand> nccl_log_bands(const std::filesystem::path& dir) {
  std::vector<BusbwBand> out;
  const auto index_path = dir / "index.json";
  if (!std::filesystem::exists(index_path)) return out;
  const json index = model::read_json_file(index_path.string());
  if (!index.is_array()) throw Error(index_path.string() + ": expected an array of logs");
  for (const json& e : index) {
    const std::string file = text(e, "file");
    const std::string preset = detail::preset_for_gpu(text(e, "gpu"));
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
    // The hosts' CPU vendor where the log's system states it (NCCL's tuner reads it across nodes).
    if (const std::string vendor = text(e, "cpu_vendor"); !vendor.empty()) {
      section["cpu_vendor"] = vendor;
    }
    json nic = nic_of(text(e, "fabric"));
    if (nodes > 1 && !nic.is_null()) {
      nic["nics_per_node"] = std::max(1, count(e, "nics_per_node", 8));
      section["inter_node"] = nic;
    }
    const model::HardwareSpec hw = model::resolve_hardware(section, file, "/hardware");
    const model::Topology topo(hw, per_node * nodes);
    // NCCL_ALGO / NCCL_PROTO as the log set them ("Ring", "NVLSTree", "LL128"); none: auto.
    std::string algo_name = lower(text(e, "algo"));
    if (algo_name == "nvlstree") algo_name = "nvls_tree";
    const auto algo =
        model::algorithm_from_name(algo_name).value_or(model::CollectiveAlgorithm::kAuto);
    const auto proto = model::protocol_from_name(lower(text(e, "proto")))
                           .value_or(model::CollectiveProtocol::kAuto);
    for (const auto& [name, table] : c.at("ops").items()) {
      const auto op = model::parse_collective_op(name);
      if (!op) continue;
      std::vector<detail::SweepPoint> points;
      for (const json& row : table.at("rows")) {
        const double bytes = row.at("size_bytes").get<double>();
        const double busbw = row.value("busbw_gbytes_per_s", 0.0);
        if (!(bytes > 0) || !(busbw > 0)) continue;
        const double model_bw =
            collective_cost(*op, topo.bandwidths(), hw, bytes, algo, proto).busbw_gbytes_per_s;
        points.push_back({bytes, (model_bw - busbw) / busbw});
      }
      std::string sweep = fmt::format(
          "{} | {} | {} x {} GPUs, {} | NCCL {} | -g {}", name, file, nodes, per_node,
          text(e, "fabric"), version.empty() ? "?" : version, hw.nccl_kernel.gpus_per_process);
      // A log a preset's constants were fitted on says so: its error is a fit, not a test.
      if (!text(e, "fitted_for").empty()) sweep += " | FIT: " + text(e, "fitted_for");
      for (BusbwBand& b : detail::sweep_bands(sweep, preset, points)) out.push_back(b);
    }
  }
  return out;
}

}  // namespace ddpsim::sim
