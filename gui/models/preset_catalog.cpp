#include "gui/models/preset_catalog.hpp"

#include <QStringList>
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "gui/models/number_format.hpp"
#include "model/builders/zoo.hpp"
#include "model/json_file.hpp"
#include "model/paths.hpp"
#include "model/scenario/hardware_io.hpp"
#include "model/units.hpp"

namespace ddpsim::gui {

namespace {

// The stems of the .json files of data_dir()/sub, sorted; empty without a data folder.
std::vector<std::string> presetStems(const char* sub) {
  std::vector<std::string> out;
  try {
    for (const auto& e : std::filesystem::directory_iterator(model::data_dir() / sub)) {
      if (e.is_regular_file() && e.path().extension() == ".json")
        out.push_back(e.path().stem().string());
    }
  } catch (const std::exception&) {
    // No data folder: nothing to list.
  }
  std::sort(out.begin(), out.end());
  return out;
}

SystemFacts readSystem(const std::string& name) {
  SystemFacts f;
  f.name = name;
  try {
    const std::string file = (model::data_dir() / "hardware" / (name + ".json")).string();
    const model::HardwareSpec hw =
        model::resolve_hardware(nlohmann::json{{"preset", name}}, file, "/hardware");
    f.gpu = hw.gpu.name;
    f.gpusPerNode = hw.gpus_per_node;
    f.memoryGib = hw.gpu.memory_bytes / kGiB;
    f.intraNode = hw.intra_node.name;
    f.interNode = hw.inter_node.name;
    f.nicsPerNode = hw.nics_per_node;
    f.nicGbps = hw.inter_node.bandwidth * 8 / 1e9;  // bytes/s to 10^9 bit/s
  } catch (const std::exception& e) {
    f.error = e.what();
  }
  return f;
}

ModelFacts readModel(const std::string& name) {
  ModelFacts f;
  f.name = name;
  try {
    const std::string file = (model::data_dir() / "models" / (name + ".json")).string();
    const nlohmann::json doc = model::read_json_file(file);
    if (doc.contains("seq_len") && doc.at("seq_len").is_number_integer())
      f.seqLen = doc.at("seq_len").get<std::int64_t>();
    // expected_params is checked against the built model on every load (zoo.hpp).
    if (doc.contains("expected_params") && doc.at("expected_params").is_number_integer()) {
      f.params = doc.at("expected_params").get<std::int64_t>();
    } else {
      const model::Workload w = model::load_model_preset(name, file, "/model/preset", std::nullopt);
      f.params = w.param_count();
      f.seqLen = w.seq_len;
    }
  } catch (const std::exception& e) {
    f.error = e.what();
  }
  return f;
}

}  // namespace

const std::vector<SystemFacts>& systemCatalog() {
  static const std::vector<SystemFacts> all = [] {
    std::vector<SystemFacts> out;
    for (const std::string& n : presetStems("hardware")) out.push_back(readSystem(n));
    return out;
  }();
  return all;
}

const std::vector<ModelFacts>& modelCatalog() {
  static const std::vector<ModelFacts> all = [] {
    std::vector<ModelFacts> out;
    for (const std::string& n : presetStems("models")) out.push_back(readModel(n));
    return out;
  }();
  return all;
}

const SystemFacts* systemFacts(const std::string& name) {
  for (const SystemFacts& s : systemCatalog()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ModelFacts* modelFacts(const std::string& name) {
  for (const ModelFacts& m : modelCatalog()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

QString formatParams(std::int64_t params) { return formatCount(static_cast<double>(params)); }

QString systemSummary(const SystemFacts& s) {
  if (!s.error.empty()) return QString::fromStdString(s.error);
  QString t = QStringLiteral("%1 x %2, %3 GiB each; %4 in a node")
                  .arg(s.gpusPerNode)
                  .arg(QString::fromStdString(s.gpu))
                  .arg(formatNumber(s.memoryGib, 3))
                  .arg(QString::fromStdString(s.intraNode));
  if (s.nicsPerNode > 0 && s.nicGbps > 0) {
    t += QStringLiteral(", %1 x %2 Gb/s %3 between nodes")
             .arg(s.nicsPerNode)
             .arg(formatNumber(s.nicGbps, 3))
             .arg(QString::fromStdString(s.interNode));
  }
  return t;
}

QString modelSummary(const QString& name, std::int64_t params, std::int64_t seqLen) {
  QStringList parts;
  if (params > 0) parts << formatParams(params) + QStringLiteral(" parameters");
  if (seqLen > 1)
    parts << formatNumber(static_cast<double>(seqLen), 4) + QStringLiteral(" tokens per sample");
  if (parts.isEmpty()) return name;
  return name + QStringLiteral(": ") + parts.join(QStringLiteral(", "));
}

}  // namespace ddpsim::gui
