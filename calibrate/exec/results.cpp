// The executor's records turned into what `ddpsim exec` writes: the results document (medians
// over the measured steps, as `ddpsim predict` reports them), its noise-scale block, and the
// Chrome trace.
#include "calibrate/exec/results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/exec/noise_scale.hpp"
#include "model/chrome_trace.hpp"

namespace ddpsim::exec {
namespace {

using json = nlohmann::json;

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

json rank_record_json(const RankRecord& r) {
  json steps = json::array(), spans = json::array();
  for (const auto& s : r.steps) {
    steps.push_back({{"start_ns", s.start_ns},
                     {"step_time_s", s.step_time_s},
                     {"forward_time_s", s.forward_time_s},
                     {"backward_time_s", s.backward_time_s},
                     {"optimizer_time_s", s.optimizer_time_s},
                     {"comm_time_s", s.comm_time_s},
                     {"exposed_comm_s", s.exposed_comm_s},
                     {"loss", s.loss},
                     {"lr", s.lr},
                     {"g_local_sq", s.g_local_sq},
                     {"g_small_sq", s.g_small_sq},
                     {"g_big_sq", s.g_big_sq},
                     {"noise_norm_s", s.noise_norm_s},
                     {"noise_comm_s", s.noise_comm_s},
                     {"buckets", s.buckets}});
  }
  for (const auto& s : r.spans) {
    spans.push_back({s.stream, s.step, s.name, s.layer, s.bytes, s.start_ns, s.end_ns});
  }
  return {{"rank", r.rank}, {"steps", steps}, {"spans", spans}};
}

json noise_scale_json(const ExecConfig& c, const json& steps) {
  json out = {{"method",
               "McCandlish et al. 2018, An Empirical Model of Large-Batch Training "
               "(arXiv:1812.06162), appendix A.1: unbiased two-batch estimators, B_small = "
               "samples per rank per step, B_big = global batch"},
              {"unit", "samples"},
              {"units",
               {{"b_small", "samples"},
                {"b_big", "samples"},
                {"b_simple", "samples"},
                {"g_local_sq", "squared L2 norm of dLoss/dparameters"},
                {"g_small_sq", "squared L2 norm of dLoss/dparameters"},
                {"g_big_sq", "squared L2 norm of dLoss/dparameters"},
                {"g_sq", "squared L2 norm of dLoss/dparameters"},
                {"trace_sigma", "squared L2 norm of dLoss/dparameters x samples"},
                {"time_s", "seconds"}}},
              {"b_small", c.rank_batch()},
              {"b_big", c.global_batch()},
              {"ema_beta", c.noise_ema_beta}};
  if (!c.noise_scale) {
    out["estimable"] = false;
    out["reason"] = "not measured (--noise-scale false)";
    return out;
  }
  out["estimable"] = c.ranks > 1;
  if (c.ranks == 1) {
    out["reason"] =
        "1 rank: B_big = B_small, and the two-batch estimator needs B_big > B_small (run on 2 or "
        "more ranks)";
  }
  std::optional<NoiseScaleTracker> tracker;
  if (c.ranks > 1) {
    tracker.emplace(static_cast<double>(c.rank_batch()), static_cast<double>(c.global_batch()),
                    c.noise_ema_beta);
  }
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json rows = json::array();
  std::vector<double> comm_s, norm_s, frac;
  NoiseStep last;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const json& s = steps[i];
    json row = {{"step", i + 1},
                {"g_local_sq", s.at("g_local_sq")},
                {"g_small_sq", s.at("g_small_sq")},
                {"g_big_sq", s.at("g_big_sq")},
                {"norm_time_s", s.at("noise_norm_s")},
                {"collective_time_s", s.at("noise_comm_s")}};
    if (tracker) {
      last = tracker->add(s.at("g_small_sq").get<double>(), s.at("g_big_sq").get<double>());
      row["g_sq"] = last.raw.g_sq;
      row["trace_sigma"] = last.raw.trace_sigma;
      row["b_simple"] = opt(last.b_simple_raw);
      row["g_sq_ema"] = last.ema.g_sq;
      row["trace_sigma_ema"] = last.ema.trace_sigma;
      row["b_simple_ema"] = opt(last.b_simple_ema);
    }
    if (static_cast<int>(i) >= c.warmup_steps) {
      comm_s.push_back(s.at("noise_comm_s").get<double>());
      norm_s.push_back(s.at("noise_norm_s").get<double>());
      frac.push_back(s.at("noise_comm_s").get<double>() / s.at("step_time_s").get<double>());
    }
    rows.push_back(row);
  }
  out["b_simple"] = tracker ? opt(last.b_simple_ema) : json(nullptr);
  out["g_sq_ema"] = tracker ? json(last.ema.g_sq) : json(nullptr);
  out["trace_sigma_ema"] = tracker ? json(last.ema.trace_sigma) : json(nullptr);
  out["collective"] = {{"op", c.ranks > 1 ? "all_gather" : "none"},
                       {"bytes_per_rank", c.ranks > 1 ? (c.zero1 ? 16 : 8) : 0},
                       {"median_time_s", median(comm_s)},
                       {"median_fraction_of_step", median(frac)}};
  out["norm_median_time_s"] = median(norm_s);
  out["steps"] = rows;
  return out;
}

json results_json(const ExecConfig& c, const std::vector<json>& ranks, const json& context) {
  const json& r0 = ranks.at(0);
  const auto& steps = r0.at("steps");
  json step_rows = json::array();
  std::map<std::string, std::vector<double>> measured;
  static const char* kKeys[] = {"step_time_s",      "forward_time_s", "backward_time_s",
                                "optimizer_time_s", "comm_time_s",    "exposed_comm_s"};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    json row = steps[i];
    row.erase("start_ns");
    for (const char* key :
         {"g_local_sq", "g_small_sq", "g_big_sq", "noise_norm_s", "noise_comm_s"}) {
      row.erase(key);  // reported in the noise_scale block
    }
    row["step"] = i + 1;
    const bool warm = static_cast<int>(i) < c.warmup_steps;
    row["warmup"] = warm;
    json per_rank = json::array();
    for (const json& r : ranks) per_rank.push_back(r.at("steps")[i].at("step_time_s"));
    row["rank_step_time_s"] = per_rank;
    if (!warm) {
      for (const char* key : kKeys) measured[key].push_back(row.at(key).get<double>());
    }
    step_rows.push_back(row);
  }
  json res = {{"gpus", c.ranks},
              {"nodes", 1},
              {"per_gpu_batch", c.per_gpu_batch},
              {"grad_accumulation", c.grad_accumulation},
              {"global_batch", c.global_batch()},
              {"strategy", c.zero1 ? "zero1" : "ddp"},
              {"mode", c.independent ? "independent" : "ddp"},
              {"comm_hook", c.hook_name},
              {"overlap", c.overlap},
              {"bucket_cap_mb", c.bucket_cap_mb},
              {"optimizer", c.optimizer_name},
              {"loss_function", c.loss == Loss::kMse ? "mse" : "cross_entropy"},
              {"param_count", c.workload->param_count()},
              {"measured_steps", c.steps},
              {"warmup_steps", c.warmup_steps}};
  for (const char* key : kKeys) res[key] = median(measured[key]);
  res["throughput_samples_per_s"] =
      static_cast<double>(c.global_batch()) / res.at("step_time_s").get<double>();
  // Buckets of the measured step whose time is closest to the median.
  std::size_t pick = static_cast<std::size_t>(c.warmup_steps);
  double best = 1e300;
  for (std::size_t i = static_cast<std::size_t>(c.warmup_steps); i < steps.size(); ++i) {
    const double d =
        std::abs(steps[i].at("step_time_s").get<double>() - res["step_time_s"].get<double>());
    if (d < best) best = d, pick = i;
  }
  res["buckets"] = steps[pick].at("buckets");
  res["bucket_count"] = steps[pick].at("buckets").size();
  res["loss_first"] = steps.front().at("loss");
  res["loss_last"] = steps.back().at("loss");
  res["steps"] = step_rows;
  res["noise_scale"] = noise_scale_json(c, steps);
  return {{"context", context},
          {"scenario", c.scenario_file},
          {"name", c.scenario_name},
          {"model", c.model_label},
          {"results", json::array({res})}};
}

std::string chrome_trace_text(const std::vector<json>& ranks, const json& metadata) {
  const std::int64_t origin = ranks.at(0).at("steps").at(0).at("start_ns").get<std::int64_t>();
  std::vector<model::TraceSpan> spans;
  std::vector<int> rank_ids;
  for (const json& r : ranks) {
    const int rank = r.at("rank").get<int>();
    rank_ids.push_back(rank);
    for (const json& s : r.at("spans")) {
      model::TraceSpan t;
      t.rank = rank;
      t.stream = s[0].get<int>();
      t.step = s[1].get<int>();
      t.name = s[2].get<std::string>();
      t.layer = s[3].get<std::string>();
      t.bytes = s[4].get<std::int64_t>();
      t.start_ns = s[5].get<std::int64_t>() - origin;
      t.end_ns = s[6].get<std::int64_t>() - origin;
      spans.push_back(std::move(t));
    }
  }
  return model::chrome_trace_text(spans, metadata, rank_ids);
}

}  // namespace ddpsim::exec
