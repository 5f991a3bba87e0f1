// The "/plan" and "/sweep" sections: what `ddpsim plan` searches and what a sweep varies
// (detail/scenario_sections.hpp says when each parser runs).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/scenario/detail/json_io.hpp"
#include "model/scenario/detail/scenario_sections.hpp"
#include "model/scenario/detail/section_parsing.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "model/units.hpp"

namespace ddpsim::model::detail {

using nlohmann::json;

// The "/plan" section (validated by the key table already) on top of the parsed scenario `s`.
void parse_plan(const json& doc, const std::string& file, Scenario& s) {
  PlanConfig& pc = s.plan;
  const json pl = doc.value("plan", json::object());
  const int gpn = s.cluster.gpus_per_node;
  if (pl.contains("min_gpus")) pc.min_gpus = pl.at("min_gpus").get<int>();
  if (pl.contains("max_gpus")) pc.max_gpus = pl.at("max_gpus").get<int>();
  const int lo = pc.min_gpus.value_or(1);
  const int hi = pc.max_gpus.value_or(4096);
  if (lo > hi) {
    throw InputError(file, "/plan/min_gpus", "at most plan.max_gpus (" + std::to_string(hi) + ")",
                     std::to_string(lo));
  }
  auto valid_shape = [gpn](int n) { return n <= gpn || n % gpn == 0; };
  if (pl.contains("gpus")) {
    const json& g = pl.at("gpus");
    for (std::size_t i = 0; i < g.size(); ++i) {
      const int n = g[i].get<int>();
      if (!valid_shape(n)) {
        throw InputError(file, "/plan/gpus/" + std::to_string(i),
                         "at most gpus_per_node (" + std::to_string(gpn) + ") or a multiple of it",
                         std::to_string(n));
      }
      if (n >= lo && n <= hi) pc.gpus.push_back(n);
    }
  } else {
    // The powers of two up to a node, then whole nodes doubling (8 per node: 1, 2, 4, 8, 16,
    // ...; 72 per node: 1, ..., 64, 72, 144, ...), and the largest shape within max_gpus (48
    // GPUs of 8 per node: ..., 32, 48), all within [min_gpus, max_gpus], min_gpus itself
    // included when it is a shape.
    std::vector<int> sizes;
    for (int n = 1; n < gpn && n <= hi; n *= 2) sizes.push_back(n);
    for (long long n = gpn; n <= hi; n *= 2) sizes.push_back(static_cast<int>(n));
    sizes.push_back(hi <= gpn ? hi : hi / gpn * gpn);
    if (valid_shape(lo)) sizes.push_back(lo);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    for (const int n : sizes) {
      if (n >= lo && n <= hi) pc.gpus.push_back(n);
    }
  }
  if (pc.gpus.empty()) {
    throw InputError(file, pl.contains("gpus") ? "/plan/gpus" : "/plan/min_gpus",
                     fmt::format("a cluster size between plan.min_gpus ({}) and plan.max_gpus ({}) "
                                 "that is at most gpus_per_node ({}) or a multiple of it",
                                 lo, hi, gpn),
                     "none");
  }
  if (pl.contains("per_gpu_batch")) {
    pc.per_gpu_batch = pl.at("per_gpu_batch").get<std::vector<std::int64_t>>();
    if (s.training.single_gpu_step_s) {
      for (std::size_t i = 0; i < pc.per_gpu_batch.size(); ++i) {
        if (pc.per_gpu_batch[i] != s.training.per_gpu_batch) {
          throw InputError(file, "/plan/per_gpu_batch/" + std::to_string(i),
                           "training.per_gpu_batch (" + std::to_string(s.training.per_gpu_batch) +
                               ") only: training.single_gpu_step_s was measured at it",
                           std::to_string(pc.per_gpu_batch[i]));
        }
      }
    }
  } else {
    pc.per_gpu_batch = {s.training.per_gpu_batch};
  }
  pc.grad_accumulation = pl.contains("grad_accumulation")
                             ? pl.at("grad_accumulation").get<std::vector<int>>()
                             : std::vector<int>{s.training.grad_accumulation};
  pc.bucket_cap_given = pl.contains("bucket_cap_mb");
  if (pc.bucket_cap_given) {
    pc.bucket_cap_mb = pl.at("bucket_cap_mb").get<std::vector<double>>();
    for (std::size_t i = 0; i < pc.bucket_cap_mb.size(); ++i) {
      if (bucket_cap_mb_to_bytes(pc.bucket_cap_mb[i]) < 1) {
        throw InputError(file, "/plan/bucket_cap_mb/" + std::to_string(i),
                         "a cap of at least 1 byte (2^-20 MiB)",
                         fmt::format("{}", pc.bucket_cap_mb[i]));
      }
    }
  } else {
    pc.bucket_cap_mb = {s.parallelism.bucket_cap_mb};
  }
  if (pl.contains("comm_hook")) {
    const json& h = pl.at("comm_hook");
    for (std::size_t i = 0; i < h.size(); ++i) {
      CommHook hook = parse_comm_hook(h[i].get<std::string>());
      if (s.training.grad_reduce_dtype && hook.kind != CommHook::Kind::kNone) {
        throw InputError(file, "/plan/comm_hook/" + std::to_string(i),
                         "\"none\" (training.grad_reduce_dtype is set; a hook sets the wire "
                         "dtype itself)",
                         "\"" + hook.text + "\"");
      }
      pc.comm_hook.push_back(std::move(hook));
    }
  } else {
    pc.comm_hook = {s.parallelism.comm_hook};
  }
  if (pl.contains("strategy")) {
    for (const json& v : pl.at("strategy")) {
      pc.strategy.push_back(
          parse_enum(v.get<std::string>(),
                     {Strategy::kDdp, Strategy::kZero1, Strategy::kZero2, Strategy::kZero3,
                      Strategy::kFsdpFullShard, Strategy::kFsdpShardGradOp, Strategy::kFsdpHybrid,
                      Strategy::kFsdp2},
                     strategy_name));
    }
  } else {
    pc.strategy = {s.parallelism.strategy};
  }
  // A sharded strategy takes no PowerSGD / top-k hook: such pairs would only be rejected.
  for (std::size_t i = 0; i < pc.strategy.size(); ++i) {
    for (const CommHook& h : pc.comm_hook) {
      if (is_sharded(pc.strategy[i]) &&
          (h.kind == CommHook::Kind::kPowerSgd || h.kind == CommHook::Kind::kTopK)) {
        throw InputError(file, "/plan/strategy/" + std::to_string(i),
                         "ddp only, as the candidate hooks include \"" + h.text +
                             "\" (a DDP communication hook)",
                         std::string("\"") + strategy_name(pc.strategy[i]) + "\"");
      }
    }
  }
  if (pl.contains("activation_checkpointing")) {
    const json& a = pl.at("activation_checkpointing");
    for (std::size_t i = 0; i < a.size(); ++i) {
      pc.activation_checkpointing.push_back(
          parse_checkpointing(file, a[i], "/plan/activation_checkpointing/" + std::to_string(i)));
    }
  } else {
    pc.activation_checkpointing = {s.training.activation_checkpointing};
  }
  if (pl.contains("deadline_hours")) pc.deadline_hours = pl.at("deadline_hours").get<double>();
  if (pl.contains("budget_usd")) {
    pc.budget_usd = pl.at("budget_usd").get<double>();
    if (!s.gpu_hour_usd && !pl.contains("hardware")) {  // else each system is checked
      throw InputError(file, "/plan/budget_usd", "pricing.gpu_hour_usd alongside a budget",
                       "a budget without a price");
    }
  }
  pc.memory_margin = get_or_default<double>(pl, "/plan/memory_margin");
  if (pl.contains("max_global_batch")) {
    pc.max_global_batch = pl.at("max_global_batch").get<std::int64_t>();
  }
  const std::string objective = get_or_default<std::string>(pl, "/plan/objective");
  pc.objective = objective == "cost"        ? PlanObjective::kCost
                 : objective == "gpu_hours" ? PlanObjective::kGpuHours
                                            : PlanObjective::kTime;
  if (pc.objective == PlanObjective::kCost && !s.gpu_hour_usd && !pl.contains("hardware")) {
    throw InputError(file, "/plan/objective", "pricing.gpu_hour_usd for the \"cost\" objective",
                     "\"cost\" without a price");
  }
  // The Cartesian product is predicted point by point: keep it to what runs in seconds.
  const double total = pc.candidate_count();
  if (total > 1e6) {
    throw InputError(file, "/plan", "at most 1,000,000 candidates in the Cartesian product",
                     fmt::format("{:.0f}", total));
  }
}

void parse_sweep(const json& doc, const std::string& file, Scenario& s) {
  if (!doc.contains("sweep")) return;
  for (const auto& [key, values] : doc.at("sweep").items()) {
    const std::string ptr = "/sweep/" + escape_pointer_token(key);
    std::string target = "/" + key;
    std::replace(target.begin(), target.end(), '.', '/');
    const KeySpec* spec = scenario_keys().find(target);
    if (spec == nullptr || spec->type == KeyType::kObject || spec->type == KeyType::kArray ||
        target.rfind("/sweep", 0) == 0 || target.rfind("/plan", 0) == 0 ||
        key.find('/') != std::string::npos) {
      throw InputError(file, ptr,
                       "a dotted path to a scalar scenario key (e.g. \"cluster.gpus\", "
                       "\"parallelism.bucket_cap_mb\")",
                       "\"" + key + "\"");
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      validate_value(values[i], *spec, scenario_keys(), file, ptr + "/" + std::to_string(i));
    }
    if (s.training.single_gpu_step_s &&
        (key == "training.per_gpu_batch" || key.rfind("hardware.", 0) == 0 ||
         key == "training.precision" || key.rfind("model.", 0) == 0)) {
      throw InputError(file, ptr,
                       "no sweep of the batch, precision, model or hardware when "
                       "training.single_gpu_step_s is given (it was measured at one of each)",
                       "\"" + key + "\"");
    }
    s.sweep.push_back({key, std::vector<json>(values.begin(), values.end())});
  }
}

}  // namespace ddpsim::model::detail
