// uncertainty.cpp: error bands by class (contracts in uncertainty.hpp).
#include "simulator/prediction/uncertainty.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "model/error.hpp"
#include "model/paths.hpp"

namespace ddpsim::sim {

using nlohmann::json;

std::string gpu_family(const std::string& gpu_name) {
  return gpu_name.substr(0, gpu_name.find('-'));
}

std::string size_class(double params) {
  if (params < 1e9) return "<1B";
  if (params < 10e9) return "1-10B";
  if (params < 100e9) return "10-100B";
  return ">=100B";
}

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::optional<Uncertainty> uncertainty_from(const std::vector<PublishedError>& rows,
                                            const std::string& gpu_name, model::Strategy strategy,
                                            double params) {
  if (rows.empty()) return std::nullopt;
  Uncertainty u;
  u.gpu_family = gpu_family(gpu_name);
  u.strategy = model::strategy_name(strategy);
  u.size_class = size_class(params);
  // Widening row sets: (gpu, strategy, size) down to every row.
  struct Level {
    bool gpu, strategy, size;
    const char* name;
  };
  static const Level kLevels[] = {{true, true, true, "gpu, strategy and size"},
                                  {true, false, true, "gpu and size"},
                                  {true, true, false, "gpu and strategy"},
                                  {true, false, false, "gpu"},
                                  {false, true, true, "strategy and size"},
                                  {false, false, true, "size"},
                                  {false, false, false, "all rows"}};
  for (const Level& level : kLevels) {
    std::vector<double> e;
    for (const PublishedError& r : rows) {
      if (level.gpu && gpu_family(r.gpu) != u.gpu_family) continue;
      if (level.strategy && r.strategy != u.strategy) continue;
      if (level.size && size_class(r.params) != u.size_class) continue;
      e.push_back(r.speed_error);
    }
    if (e.size() < kMinRows && level.gpu + level.strategy + level.size > 0) continue;
    u.matched_on = level.name;
    u.rows = e.size();
    std::vector<double> a(e.size());
    std::transform(e.begin(), e.end(), a.begin(), [](double x) { return std::abs(x); });
    u.median_abs = median_of(a);
    u.max_abs = *std::max_element(a.begin(), a.end());
    u.median = median_of(e);
    u.min = *std::min_element(e.begin(), e.end());
    u.max = *std::max_element(e.begin(), e.end());
    return u;
  }
  return std::nullopt;  // unreachable: the last level takes every row
}

const std::vector<PublishedError>& published_errors() {
  static const std::vector<PublishedError> rows = [] {
    std::vector<PublishedError> out;
    std::filesystem::path path;
    try {
      path = model::data_dir() / "data" / "uncertainty.json";
    } catch (const Error&) {
      return out;
    }
    std::ifstream in(path);
    if (!in) return out;
    const json doc = json::parse(in, nullptr, false);
    if (!doc.is_object() || !doc.contains("rows") || !doc.at("rows").is_array()) {
      throw Error(path.string() +
                  ": not a ddpsim uncertainty file (regenerate it: ninja -C build "
                  "fidelity-update)");
    }
    for (const json& r : doc.at("rows")) {
      out.push_back({r.at("id").get<std::string>(), r.at("gpu").get<std::string>(),
                     r.at("strategy").get<std::string>(), r.at("params").get<double>(),
                     r.at("speed_error").get<double>(), r.at("held_out").get<bool>()});
    }
    return out;
  }();
  return rows;
}

std::optional<Uncertainty> uncertainty_for(const std::string& gpu_name, model::Strategy strategy,
                                           double params) {
  return uncertainty_from(published_errors(), gpu_name, strategy, params);
}

json uncertainty_json(const Uncertainty& u, double step_time_s) {
  json j = {{"class", {{"gpu", u.gpu_family}, {"strategy", u.strategy}, {"size", u.size_class}}},
            {"matched_on", u.matched_on},
            {"rows", u.rows},
            {"median_abs_error", u.median_abs},
            {"max_abs_error", u.max_abs},
            {"median_error", u.median},
            {"source", "scenarios/data/uncertainty.json (results/FIDELITY.md)"}};
  if (step_time_s > 0) {
    j["step_time_s_range"] = {step_time_s * (1.0 + u.min), step_time_s * (1.0 + u.max)};
  }
  return j;
}

std::string uncertainty_line(const Uncertainty& u) {
  return fmt::format(
      "error band ({} {} {}; published runs matched on {}: {}): median |error| {:.1f}%, max "
      "{:.1f}%; ddpsim {} by a median {:.1f}%",
      u.gpu_family, u.strategy, u.size_class, u.matched_on,
      u.rows == 1 ? std::string("1 row") : fmt::format("{} rows", u.rows), u.median_abs * 100,
      u.max_abs * 100, u.median >= 0 ? "fast" : "slow", std::abs(u.median) * 100);
}

json published_errors_json(const std::vector<PublishedError>& rows) {
  json out = json::array();
  for (const PublishedError& r : rows) {
    out.push_back({{"id", r.id},
                   {"gpu", r.gpu},
                   {"strategy", r.strategy},
                   {"params", std::llround(r.params)},
                   // Six decimals: the committed file does not move with the last bits of a
                   // prediction.
                   {"speed_error", std::round(r.speed_error * 1e6) / 1e6},
                   {"held_out", r.held_out}});
  }
  return {{"about",
           "Generated by `ddpsim fidelity` (ninja -C build fidelity-update) from "
           "scenarios/data/published-training.json; do not edit. speed_error = ddpsim throughput "
           "/ published throughput - 1 with the presets (results/FIDELITY.md); "
           "simulator/prediction/uncertainty.hpp turns it into error bands by class."},
          {"rows", out}};
}

}  // namespace ddpsim::sim
