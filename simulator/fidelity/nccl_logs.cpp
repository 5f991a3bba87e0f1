// Public nccl-tests logs against the collective model (nccl_logs.hpp).
#include "simulator/fidelity/nccl_logs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <string>

#include "model/ascii_lower.hpp"
#include "model/collective_op.hpp"
#include "model/error.hpp"
#include "model/hardware/cluster.hpp"
#include "model/hardware/nccl_version.hpp"
#include "model/imports/measurement_import.hpp"
#include "model/json_file.hpp"
#include "model/profile/profile.hpp"
#include "model/scenario/hardware_io.hpp"
#include "model/trace_file.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/collectives/fabric_fit.hpp"
#include "simulator/fidelity/detail/sweep_bands.hpp"

namespace ddpsim::sim {

using nlohmann::json;

namespace {

std::string text(const json& e, const char* key) {
  return e.contains(key) && e.at(key).is_string() ? e.at(key).get<std::string>() : "";
}

int count(const json& e, const char* key, int fallback) {
  return e.contains(key) && e.at(key).is_number_integer() ? e.at(key).get<int>() : fallback;
}

// The NIC of a fabric as the index names it: a link preset, with keys beside it where the
// fabric's rate differs from the preset's; null: the system preset's own.
json nic_of(const std::string& fabric) {
  const std::string f = model::ascii_lower(fabric);
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

// One index entry as it ran: its tables, its system and how it was launched.
struct LoggedRun {
  std::string file, op_name, preset, version, group;
  std::string sweep;     // "<op> | <file> | N x G GPUs, <fabric> | NCCL <v> | -g <g>"
  std::string fit_mark;  // " | FIT: <preset> <constants>" when the log set a preset's constants
  int per_node = 8, nodes = 1;
  json tables;   // import_nccl_tests_log's section ("ops": {op: {"rows": ...}})
  json section;  // the hardware section that runs it: the index's system preset, if it names one
  json generic;  // ... on its GPU's preset and its fabric's NIC preset (what a user composes)
  std::string generic_preset;
  model::CollectiveAlgorithm algo = model::CollectiveAlgorithm::kAuto;
  model::CollectiveProtocol proto = model::CollectiveProtocol::kAuto;
  std::string algo_env, proto_env;  // NCCL_ALGO / NCCL_PROTO as the index names them
};

std::optional<LoggedRun> logged_run(const json& e, const std::filesystem::path& dir) {
  LoggedRun r;
  r.file = text(e, "file");
  r.generic_preset = detail::preset_for_gpu(text(e, "gpu"));
  // A system preset of the log's own instance (aws-p5) where ddpsim has one.
  r.preset = text(e, "preset").empty() ? r.generic_preset : text(e, "preset");
  if (r.file.empty() || r.generic_preset.empty()) return std::nullopt;
  // The op from the file name (table excerpts carry no "Collective test starting" line).
  for (const char* o : {"all_reduce", "all_gather", "reduce_scatter", "broadcast"}) {
    if (r.file.rfind(o, 0) == 0) r.op_name = o;
  }
  if (r.op_name.empty()) return std::nullopt;  // sendrecv and others: not a collective modelled
  // Read as a log (not import_nccl_tests_file: a table excerpt has no rank lines, and the
  // ranks come from the index here).
  const std::string path = (dir / r.file).string();
  r.tables = model::import_nccl_tests_log(model::read_measurement_text(path, "an nccl-tests log"),
                                          path, r.op_name);
  r.per_node = count(e, "gpus_per_node", 8);
  r.nodes = std::max(1, count(e, "nodes", 1));
  // How it ran, whatever the system: layout, release, -g, the hosts' CPU vendor (NCCL's tuner
  // reads it across nodes).
  json launch = {{"gpus_per_node", r.per_node}};
  r.version = text(e, "nccl_version");
  if (model::nccl_version_known(r.version)) launch["collectives"]["nccl_version"] = r.version;
  const bool threads = text(e, "launch") == "threads";
  launch["collectives"]["gpus_per_process"] =
      std::max(1, count(e, "gpus_per_process", threads ? r.per_node : 1));
  if (const std::string vendor = text(e, "cpu_vendor"); !vendor.empty()) {
    launch["cpu_vendor"] = vendor;
  }
  r.generic = launch;
  r.generic["preset"] = r.generic_preset;
  json nic = nic_of(text(e, "fabric"));
  if (r.nodes > 1 && !nic.is_null()) {
    nic["nics_per_node"] = std::max(1, count(e, "nics_per_node", 8));
    r.generic["inter_node"] = nic;
  }
  if (text(e, "preset").empty()) {
    r.section = r.generic;
  } else {
    r.section = launch;
    r.section["preset"] = r.preset;
  }
  // NCCL_ALGO / NCCL_PROTO as the log set them ("Ring", "NVLSTree", "LL128"); none: auto.
  r.algo_env = text(e, "algo");
  r.proto_env = text(e, "proto");
  r.algo = model::algorithm_from_nccl_env(r.algo_env);
  r.proto = model::protocol_from_nccl_env(r.proto_env);
  r.group = text(e, "fabric_group");
  // A release older than those ddpsim holds is predicted with the default's constants; the label
  // says so rather than naming a release the prediction did not model.
  const std::string version =
      r.version.empty() ? "?"
      : model::nccl_version_known(r.version)
          ? r.version
          : fmt::format("{} (modelled as {})", r.version, model::NcclKernelCosts{}.nccl_version);
  r.sweep = fmt::format("{} | {} | {} x {} GPUs, {} | NCCL {} | -g {}", r.op_name, r.file, r.nodes,
                        r.per_node, text(e, "fabric"), version,
                        r.section["collectives"]["gpus_per_process"].get<int>());
  // A log a preset's constants were fitted on says so: its error is a fit, not a test.
  if (!text(e, "fitted_for").empty()) r.fit_mark = " | FIT: " + text(e, "fitted_for");
  return r;
}

// The model's busbw error at every row of `r`'s tables, on hardware `hw`.
std::vector<detail::SweepPoint> busbw_errors(const LoggedRun& r, const model::HardwareSpec& hw) {
  const model::Topology topo(hw, r.per_node * r.nodes);
  std::vector<detail::SweepPoint> points;
  for (const auto& [name, table] : r.tables.at("ops").items()) {
    const auto op = model::parse_collective_op(name);
    if (!op) continue;
    for (const json& row : table.at("rows")) {
      const double bytes = row.at("size_bytes").get<double>();
      const double busbw = row.value("busbw_gbytes_per_s", 0.0);
      if (!(bytes > 0) || !(busbw > 0)) continue;
      const double model_bw =
          collective_cost(*op, topo.bandwidths(), hw, bytes, r.algo, r.proto).busbw_gbytes_per_s;
      points.push_back({bytes, (model_bw - busbw) / busbw});
    }
  }
  return points;
}

// `r` as a collectives profile: what `ddpsim-calibrate import nccl-tests` writes for a whole
// log, with the layout, release and forced choice the index states (table excerpts print none).
std::shared_ptr<const model::Profile> as_profile(const LoggedRun& r) {
  json c = r.tables;
  c["ranks"] = r.per_node * r.nodes;
  c["nodes"] = r.nodes;
  if (model::nccl_version_known(r.version)) c["version"] = r.version;
  c["gpus_per_process"] = r.generic.at("collectives").at("gpus_per_process");
  if (!r.algo_env.empty()) c["nccl_env"]["NCCL_ALGO"] = r.algo_env;
  if (!r.proto_env.empty()) c["nccl_env"]["NCCL_PROTO"] = r.proto_env;
  return std::make_shared<const model::Profile>(model::Profile::from_json(
      model::imported_profile(c, nullptr, "fidelity: " + r.file), r.file));
}

std::vector<LoggedRun> logged_runs(const std::filesystem::path& dir) {
  std::vector<LoggedRun> out;
  const auto index_path = dir / "index.json";
  if (!std::filesystem::exists(index_path)) return out;
  const json index = model::read_json_file(index_path.string());
  if (!index.is_array()) throw Error(index_path.string() + ": expected an array of logs");
  for (const json& e : index) {
    if (std::optional<LoggedRun> r = logged_run(e, dir)) out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace

std::vector<BusbwBand> nccl_log_bands(const std::filesystem::path& dir) {
  std::vector<BusbwBand> out;
  for (const LoggedRun& r : logged_runs(dir)) {
    const model::HardwareSpec hw = model::resolve_hardware(r.section, r.file, "/hardware");
    for (BusbwBand& b : detail::sweep_bands(r.sweep + r.fit_mark, r.preset, busbw_errors(r, hw))) {
      out.push_back(b);
    }
  }
  return out;
}

std::vector<BusbwBand> fabric_fit_bands(const std::filesystem::path& dir) {
  std::vector<BusbwBand> out;
  const std::vector<LoggedRun> runs = logged_runs(dir);
  for (const LoggedRun& fitted : runs) {
    if (fitted.group.empty() || fitted.nodes < 2) continue;
    // The user's path: the log imported as a profile beside the system preset.
    model::HardwareSpec with_log =
        model::resolve_hardware(fitted.generic, fitted.file, "/hardware");
    with_log.profile = as_profile(fitted);
    const std::optional<FabricFit> f = fit_fabric(with_log);
    if (!f) continue;
    for (const LoggedRun& tested : runs) {
      if (&tested == &fitted || tested.group != fitted.group || tested.nodes < 2) continue;
      model::HardwareSpec hw = model::resolve_hardware(tested.generic, tested.file, "/hardware");
      apply_fabric_fit(hw, *f);
      const std::string sweep =
          fmt::format("{} | NIC fitted on {} (rate x {:.3g}, latency {:.3g} us)", tested.sweep,
                      fitted.file, f->bandwidth_scale, f->latency_s * 1e6);
      for (BusbwBand& b :
           detail::sweep_bands(sweep, tested.generic_preset, busbw_errors(tested, hw))) {
        out.push_back(b);
      }
    }
  }
  return out;
}

}  // namespace ddpsim::sim
