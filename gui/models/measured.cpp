#include "gui/models/measured.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "model/paths.hpp"

namespace ddpsim::gui {

namespace {

namespace fs = std::filesystem;

std::optional<double> number(const nlohmann::json& o, const char* key) {
  if (o.is_object() && o.contains(key) && o.at(key).is_number()) return o.at(key).get<double>();
  return std::nullopt;
}

// The format of validation files is being defined elsewhere: take what unambiguously is a
// measured step time per GPU count and skip the rest (predicted values included).
void collect(const nlohmann::json& j, bool underPredicted, const std::string& source,
             std::vector<MeasuredPoint>& out) {
  if (j.is_array()) {
    for (const auto& v : j) collect(v, underPredicted, source, out);
    return;
  }
  if (!j.is_object()) return;
  const auto gpus = number(j, "gpus");
  if (gpus && *gpus >= 1) {
    std::optional<double> t;
    if (j.contains("measured")) {
      t = number(j.at("measured"), "step_time_s");
    } else if (auto m = number(j, "measured_step_time_s")) {
      t = m;
    } else if (!underPredicted && !j.contains("predicted")) {
      t = number(j, "step_time_s");
    }
    if (t && *t > 0) {
      out.push_back({static_cast<int>(*gpus), *t, source});
      return;
    }
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "measured") continue;
    collect(*it, underPredicted || it.key().find("predict") != std::string::npos, source, out);
  }
}

std::string namedScenario(const nlohmann::json& j) {
  if (!j.is_object()) return {};
  if (j.contains("scenario_name") && j.at("scenario_name").is_string()) {
    return j.at("scenario_name").get<std::string>();
  }
  if (j.contains("scenario") && j.at("scenario").is_object() && j.at("scenario").contains("name") &&
      j.at("scenario").at("name").is_string()) {
    return j.at("scenario").at("name").get<std::string>();
  }
  return {};
}

}  // namespace

std::vector<MeasuredPoint> readMeasured(const std::string& resultsDir,
                                        const std::string& scenarioName) {
  std::vector<MeasuredPoint> out;
  std::error_code ec;
  if (resultsDir.empty() || !fs::is_directory(resultsDir, ec)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(resultsDir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("validation-", 0) == 0 && e.path().extension() == ".json")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) continue;
    const std::string named = namedScenario(j);
    if (!named.empty() && !scenarioName.empty() && named != scenarioName) continue;
    collect(j, false, f.filename().string(), out);
  }
  return out;
}

std::string defaultResultsDir() {
  try {
    const fs::path r = model::data_dir().parent_path() / "results";
    std::error_code ec;
    return fs::is_directory(r, ec) ? r.string() : std::string();
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace ddpsim::gui
