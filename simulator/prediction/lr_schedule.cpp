// Learning-rate scaling, gradual warmup and batch-size warnings (derivations in the header).
#include "simulator/prediction/lr_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "model/error.hpp"
#include "model/paths.hpp"

namespace ddpsim::sim {

using nlohmann::json;

double scaled_lr(const model::LrConfig& lr, std::int64_t global_batch) {
  DDPSIM_ASSERT(lr.base_batch >= 1, "lr.base_batch must be >= 1");
  DDPSIM_ASSERT(global_batch >= 1, "global batch must be >= 1");
  const double k = static_cast<double>(global_batch) / static_cast<double>(lr.base_batch);
  switch (lr.scaling) {
    case model::LrScaling::kLinear:
      return lr.base * k;
    case model::LrScaling::kSqrt:
      return lr.base * std::sqrt(k);
    case model::LrScaling::kNone:
      break;
  }
  return lr.base;
}

double lr_at_step(const model::LrConfig& lr, std::int64_t global_batch, std::int64_t step) {
  DDPSIM_ASSERT(step >= 0, "step must be >= 0");
  const double peak = scaled_lr(lr, global_batch);
  if (step >= lr.warmup_steps) return peak;
  // Goyal et al. §2.2: from the base-batch rate eta, a constant increment per iteration reaching
  // k x eta after the warmup. A batch below base_batch has nothing to ramp up to.
  const double start = std::min(lr.base, peak);
  return start + (peak - start) * static_cast<double>(step) / static_cast<double>(lr.warmup_steps);
}

std::vector<std::int64_t> schedule_steps(std::int64_t warmup_steps, std::int64_t horizon) {
  DDPSIM_ASSERT(horizon >= 0 && warmup_steps >= 0, "steps must be >= 0");
  std::vector<std::int64_t> s = {
      0, warmup_steps / 4, warmup_steps / 2, 3 * warmup_steps / 4, warmup_steps, horizon};
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  s.erase(std::remove_if(s.begin(), s.end(), [&](std::int64_t t) { return t > horizon; }), s.end());
  return s;
}

std::vector<LrPoint> lr_schedule(const model::LrConfig& lr, std::int64_t global_batch,
                                 std::int64_t horizon) {
  std::vector<LrPoint> out;
  for (std::int64_t t : schedule_steps(lr.warmup_steps, horizon)) {
    out.push_back({t, lr_at_step(lr, global_batch, t)});
  }
  return out;
}

GoyalBreakPoint goyal_break_point(const json& rows, double tolerance_pct) {
  // Figure 3's table: top-1 error of ResNet-50 with the linear rule and gradual warmup, one
  // row per global batch kn.
  std::map<std::int64_t, std::pair<double, std::string>> by_batch;
  if (rows.is_array()) {
    for (const json& r : rows) {
      const std::string id = r.value("id", "");
      if (id.rfind("goyal-err-kn", 0) != 0) continue;
      if (!r.contains("global_batch") || !r.at("global_batch").is_number_integer() ||
          !r.contains("value") || !r.at("value").is_number()) {
        throw Error("published row " + id + ": expected an integer global_batch and a value");
      }
      by_batch[r.at("global_batch").get<std::int64_t>()] = {r.at("value").get<double>(), id};
    }
  }
  auto base = by_batch.find(256);
  if (base == by_batch.end()) {
    throw Error("published rows: no goyal-err-kn* row at global batch 256 (the baseline)");
  }
  GoyalBreakPoint g;
  g.tolerance_pct = tolerance_pct;
  g.baseline_batch = 256;
  g.baseline_error_pct = base->second.first;
  g.baseline_id = base->second.second;
  g.last_good_batch = 256;
  g.last_good_error_pct = g.baseline_error_pct;
  g.last_good_id = g.baseline_id;
  // Walk up from the baseline: the break is the first batch whose error exceeds the baseline by
  // more than the tolerance; the linear rule "holds" up to the batch before it.
  for (auto it = std::next(base); it != by_batch.end(); ++it) {
    if (it->second.first > g.baseline_error_pct + tolerance_pct) {
      g.first_bad_batch = it->first;
      g.first_bad_error_pct = it->second.first;
      g.first_bad_id = it->second.second;
      return g;
    }
    g.last_good_batch = it->first;
    g.last_good_error_pct = it->second.first;
    g.last_good_id = it->second.second;
  }
  throw Error("published rows: no goyal-err-kn* batch exceeds the baseline error by more than " +
              std::to_string(tolerance_pct) + " points");
}

const GoyalBreakPoint& default_goyal_break_point() {
  static const GoyalBreakPoint g = [] {
    const auto path = model::data_dir() / "data" / "published-measurements.json";
    return goyal_break_point(model::read_json_file(path.string()));
  }();
  return g;
}

namespace {
std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
}  // namespace

std::optional<double> steps_to_target(const model::TrainingConfig& training, double global_batch) {
  if (training.critical_batch) {
    return training.critical_batch->s_min * (1.0 + training.critical_batch->b_noise / global_batch);
  }
  if (training.target_samples) return std::ceil(*training.target_samples / global_batch);
  return std::nullopt;
}

std::vector<std::string> batch_size_warnings(std::int64_t global_batch,
                                             const model::TrainingConfig& training,
                                             const GoyalBreakPoint& goyal) {
  std::vector<std::string> out;
  if (training.lr && training.lr->scaling == model::LrScaling::kLinear &&
      global_batch > goyal.last_good_batch) {
    out.push_back(
        "global batch " + std::to_string(global_batch) + " is past " +
        std::to_string(goyal.last_good_batch) +
        ", the largest batch at which Goyal et al. found the linear scaling rule matching its "
        "baseline (ResNet-50/ImageNet top-1 error " +
        fmt("%.2f", goyal.last_good_error_pct) + "% at " + std::to_string(goyal.last_good_batch) +
        " vs " + fmt("%.2f", goyal.baseline_error_pct) + "% at " +
        std::to_string(goyal.baseline_batch) + ", " + fmt("%.2f", goyal.first_bad_error_pct) +
        "% at " + std::to_string(goyal.first_bad_batch) + "; rows " + goyal.last_good_id + ", " +
        goyal.first_bad_id + "): the scaled learning rate " +
        fmt("%.4g", scaled_lr(*training.lr, global_batch)) + " may not reach the same accuracy");
  }
  if (training.critical_batch) {
    const double b_noise = training.critical_batch->b_noise;
    const double k = static_cast<double>(global_batch) / b_noise;
    if (k > kFarPastNoiseScale) {
      out.push_back("global batch " + std::to_string(global_batch) + " is " + fmt("%.3g", k) +
                    "x B_noise = " + fmt("%.6g", b_noise) +
                    " (training.target.critical_batch): with S = S_min (1 + B_noise / B) "
                    "(McCandlish et al. 2018) the steps are within " +
                    fmt("%.2g", 100.0 / k) + "% of S_min, so doubling the batch saves under " +
                    fmt("%.2g", 100.0 / (2.0 * (k + 1.0))) +
                    "% of the steps while doubling the samples processed");
    }
  }
  return out;
}

}  // namespace ddpsim::sim
