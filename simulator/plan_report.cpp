// plan_report.cpp: `ddpsim plan`'s answer as JSON, a table and CSV (contracts in planner.hpp).
#include <fmt/format.h>

#include <optional>
#include <string>

#include "model/error.hpp"
#include "model/units.hpp"
#include "simulator/optional_json.hpp"
#include "simulator/planner.hpp"
#include "simulator/report.hpp"

namespace ddpsim::sim {

namespace {

using nlohmann::json;

json point_json(const PlanPoint& p) {
  return {{"system", p.system_label},
          {"gpu_hour_usd", optional_json(p.gpu_hour_usd)},
          {"gpus", p.gpus},
          {"nodes", p.nodes},
          {"per_gpu_batch", p.per_gpu_batch},
          {"grad_accumulation", p.grad_accumulation},
          {"bucket_cap_mb", p.bucket_cap_mb},
          {"comm_hook", p.comm_hook},
          {"strategy", model::strategy_name(p.strategy)},
          {"activation_checkpointing", model::checkpointing_json(p.activation_checkpointing)},
          {"global_batch", p.global_batch},
          {"lr", optional_json(p.lr)},
          {"step_time_s", p.step_time_s},
          {"throughput_samples_per_s", p.throughput_samples_per_s},
          {"steps_to_target", optional_json(p.steps_to_target)},
          {"time_to_train_s", optional_json(p.time_to_train_s)},
          {"gpu_hours", optional_json(p.gpu_hours)},
          {"cost_usd", optional_json(p.cost_usd)},
          {"ettr", optional_json(p.ettr)},
          {"time_per_million_samples_s", p.time_per_million_samples_s},
          {"gpu_hours_per_million_samples", p.gpu_hours_per_million_samples},
          {"memory_per_gpu_bytes", p.memory_per_gpu_bytes},
          {"memory_headroom_bytes", p.memory_headroom_bytes},
          {"mfu", p.mfu},
          {"tokens_per_s_per_gpu", p.tokens_per_s_per_gpu},
          {"cost_per_million_samples", optional_json(p.cost_per_million_samples)},
          {"cost_per_million_tokens", optional_json(p.cost_per_million_tokens)},
          {"limited_by", p.limited_by.empty() ? json(nullptr) : json(p.limited_by)},
          {"step_time_sensitivity_pct", p.sensitivity_pct},
          {"uncertainty",
           p.uncertainty ? uncertainty_json(*p.uncertainty, p.step_time_s) : json(nullptr)}};
}

}  // namespace

json plan_json(const model::Scenario& s, const PlanResult& r) {
  const model::PlanConfig& pc = s.plan;
  json plan;
  plan["candidates"] = r.candidates;
  plan["feasible"] = r.feasible;
  plan["rejected"] = r.rejected;
  plan["dominated"] = r.dominated;
  plan["objective"] = model::objective_name(pc.objective);
  plan["mode"] = r.by_throughput ? "throughput" : "time_to_train";
  plan["constraints"] = {
      {"deadline_hours", optional_json(pc.deadline_hours)},
      {"budget_usd", optional_json(pc.budget_usd)},
      {"memory_margin", pc.memory_margin},
      {"max_global_batch", pc.max_global_batch ? json(*pc.max_global_batch) : json(nullptr)},
      {"gpu_hour_usd", optional_json(s.gpu_hour_usd)}};
  json front = json::array();
  for (const PlanPoint& p : r.pareto) front.push_back(point_json(p));
  plan["pareto"] = std::move(front);
  plan["chosen"] = r.chosen ? point_json(*r.chosen) : json(nullptr);
  plan["compares"] = r.by_cost ? "cost" : "gpu_hours";
  json systems = json::array();
  for (const PlanSystemResult& sr : r.systems) {
    systems.push_back({{"system", sr.label},
                       {"hardware", sr.hardware},
                       {"gpu", sr.gpu},
                       {"gpu_hour_usd", optional_json(sr.gpu_hour_usd)},
                       {"gpus_searched", sr.gpus},
                       {"candidates", sr.candidates},
                       {"feasible", sr.feasible},
                       {"rejected", sr.rejected},
                       {"best", sr.best ? point_json(*sr.best) : json(nullptr)},
                       {"within_band_of_chosen", sr.within_band_of_chosen}});
  }
  plan["systems"] = std::move(systems);
  plan["warnings"] = r.warnings;
  plan["none_feasible_reason"] =
      r.none_feasible_reason.empty() ? json(nullptr) : json(r.none_feasible_reason);
  plan["nearest"] = r.nearest ? point_json(*r.nearest) : json(nullptr);
  plan["nearest_reason"] = r.nearest_reason.empty() ? json(nullptr) : json(r.nearest_reason);
  json doc;
  doc["context"] = context_json("analytic");
  doc["scenario"] = scenario_json(s);
  doc["plan"] = std::move(plan);
  check_finite(doc, "plan");
  return doc;
}

namespace {

// Per million samples a small model's hours are tiny: three significant digits there.
std::string hours_cell(double hours, bool by_throughput) {
  return by_throughput ? fmt::format("{:.3g}", hours) : fmt::format("{:.2f}", hours);
}

// Money with thousands separators: $286,807; cents below $100.
std::string usd(double v) {
  if (v < 100) return fmt::format("${:.2f}", v);
  std::string digits = fmt::format("{:.0f}", v);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return "$" + digits;
}

// The best option of each system, the chosen one marked.
std::string systems_table(const model::Scenario& s, const PlanResult& r) {
  const bool per_token = s.workload->seq_len > 1;
  std::string out = fmt::format(
      "Best option per system ({}):\n  {:>16} {:>9} {:>5} {:>18} {:>6} {:>4} {:>12} {:>10} {:>10} "
      "{:>6} {:>10} {:>12} {:>12} {:>9} {:>14}\n",
      r.by_throughput ? "per million samples" : "to the target", "system", "$/GPU-h", "gpus",
      "strategy", "micro", "acc", "ckpt", "step_ms", per_token ? "tok/s/GPU" : "smp/s/GPU", "MFU",
      r.by_throughput ? "h/1M smp" : "hours", r.by_throughput ? "$/1M smp" : "cost",
      per_token ? "$/1M tok" : "$/1M smp", "free_GiB", "error med/max");
  for (const PlanSystemResult& sr : r.systems) {
    const std::string price = sr.gpu_hour_usd ? fmt::format("{:.2f}", *sr.gpu_hour_usd) : "-";
    if (!sr.best) {
      out += fmt::format("  {:>16} {:>9}  no feasible option among {} candidates\n", sr.label,
                         price, sr.candidates);
      continue;
    }
    const PlanPoint& p = *sr.best;
    const bool chosen = r.chosen && r.chosen->index == p.index;
    const std::optional<double> per_unit =
        per_token ? p.cost_per_million_tokens : p.cost_per_million_samples;
    const double spend =
        r.by_throughput ? p.cost_per_million_samples.value_or(0) : p.cost_usd.value_or(0);
    out += fmt::format(
        "{} {:>16} {:>9} {:>5} {:>18} {:>6} {:>4} {:>12} {:>10.2f} {:>10.0f} {:>6.3f} {:>10} "
        "{:>12} "
        "{:>12} {:>9.1f} {:>14}\n",
        chosen ? "*" : " ", sr.label, price, p.gpus, model::strategy_name(p.strategy),
        p.per_gpu_batch, p.grad_accumulation,
        model::checkpointing_short_name(p.activation_checkpointing), p.step_time_s * 1e3,
        p.tokens_per_s_per_gpu, p.mfu, hours_cell(p.time_metric() / 3600.0, r.by_throughput),
        p.gpu_hour_usd ? usd(spend) : "-", per_unit ? fmt::format("{:.4g}", *per_unit) : "-",
        p.memory_headroom_bytes / kGiB,
        p.uncertainty
            ? fmt::format("{:.0f}%/{:.0f}%{}", p.uncertainty->median_abs * 100,
                          p.uncertainty->max_abs * 100, sr.within_band_of_chosen ? " ~" : "")
            : "-");
  }
  out +=
      "  error med/max: median and max |error| of ddpsim on published runs of the option's "
      "class (results/FIDELITY.md); ~ marks an option inside that band of the chosen one\n";
  return out;
}

}  // namespace

std::string plan_table(const model::Scenario& s, const PlanResult& r) {
  const model::PlanConfig& pc = s.plan;
  // A ckpt column when any candidate checkpoints.
  bool searches_checkpointing = s.training.activation_checkpointing.enabled();
  for (const model::ActivationCheckpointing& ac : pc.activation_checkpointing) {
    searches_checkpointing = searches_checkpointing || ac.enabled();
  }
  const bool multi = r.systems.size() > 1;
  std::string out =
      multi ? fmt::format("{}: plan for {} on {} systems, objective {}\n",
                          s.name.empty() ? s.file : s.name, s.workload->name, r.systems.size(),
                          model::objective_name(pc.objective))
            : fmt::format("{}: plan for {} on {} ({}), objective {}\n",
                          s.name.empty() ? s.file : s.name, s.workload->name, s.hardware.name,
                          s.hardware.gpu.name, model::objective_name(pc.objective));
  if (multi) out += systems_table(s, r);
  if (!r.pareto.empty()) {
    out += fmt::format("Pareto front of {} vs {}:\n",
                       r.by_throughput ? "time per million samples" : "time to train",
                       r.by_cost ? "cost" : "GPU-hours");
    out += fmt::format(
        "  {:>5} {:>5} {:>6} {:>4} {:>8} {:>12} {:>18} {:>9} {:>10} {:>10} {:>12} {:>12} "
        "{:>11} {:>8}\n",
        "gpus", "nodes", "micro", "acc", "cap_MiB", "hook", "strategy", "g.batch", "step_ms",
        r.by_throughput ? "-" : "steps", r.by_throughput ? "h/1M smp" : "hours",
        r.by_throughput ? "GPU-h/1M smp" : "GPU-hours", "cost_usd", "mem_GiB");
    if (s.reliability) out.insert(out.size() - 1, fmt::format(" {:>6}", "ETTR"));
    if (searches_checkpointing) out.insert(out.size() - 1, fmt::format(" {:>12}", "ckpt"));
    if (multi) out.insert(out.size() - 1, fmt::format(" {:>14}", "system"));
    for (const PlanPoint& p : r.pareto) {
      const bool chosen = r.chosen && r.chosen->index == p.index;
      out += fmt::format(
          "{} {:>5} {:>5} {:>6} {:>4} {:>8.4g} {:>12} {:>18} {:>9} {:>10.2f} {:>10} {:>12} "
          "{:>12} {:>11} {:>8.1f}\n",
          chosen ? "*" : " ", p.gpus, p.nodes, p.per_gpu_batch, p.grad_accumulation,
          p.bucket_cap_mb, p.comm_hook, model::strategy_name(p.strategy), p.global_batch,
          p.step_time_s * 1e3, p.steps_to_target ? fmt::format("{:.0f}", *p.steps_to_target) : "-",
          hours_cell(p.time_metric() / 3600.0, r.by_throughput),
          hours_cell(p.gpu_hours_metric(), r.by_throughput),
          p.cost_usd ? fmt::format("{:.0f}", *p.cost_usd) : "-", p.memory_per_gpu_bytes / kGiB);
      if (p.ettr) out.insert(out.size() - 1, fmt::format(" {:>6.3f}", *p.ettr));
      if (searches_checkpointing) {
        out.insert(
            out.size() - 1,
            fmt::format(" {:>12}", model::checkpointing_short_name(p.activation_checkpointing)));
      }
      if (multi) out.insert(out.size() - 1, fmt::format(" {:>14}", p.system_label));
    }
  }
  if (!r.pareto.empty()) {
    out += "What limits each front point, and step time change when one figure improves by 10%:\n";
    out += fmt::format("  {:>5} {:>18} {:>24} {:>10} {:>10} {:>10} {:>10}\n", "gpus", "strategy",
                       "limited by", "flops", "hbm", "net_bw", "latency");
    for (const PlanPoint& p : r.pareto) {
      auto pct = [&](const char* f) {
        const auto it = p.sensitivity_pct.find(f);
        return it == p.sensitivity_pct.end() ? std::string("-")
                                             : fmt::format("{:+.2f}%", it->second);
      };
      out += fmt::format("  {:>5} {:>18} {:>24} {:>10} {:>10} {:>10} {:>10}\n", p.gpus,
                         model::strategy_name(p.strategy), p.limited_by, pct("gpu_flops"),
                         pct("hbm_bandwidth"), pct("network_bandwidth"), pct("network_latency"));
    }
  }
  std::string rejected;
  for (const auto& [reason, n] : r.rejected) {
    rejected += fmt::format("{}{} {}", rejected.empty() ? "" : ", ", reason, n);
  }
  out += fmt::format(
      "{} candidates, {} feasible, {} on the Pareto front, {} dominated by it; rejected: {}\n",
      r.candidates, r.feasible, r.pareto.size(), r.dominated, rejected);
  if (r.chosen) {
    const PlanPoint& c = *r.chosen;
    out += fmt::format(
        "chosen (*): {} GPUs x per_gpu_batch {} x grad_accumulation {} (global "
        "batch {}), bucket_cap_mb {:.4g}, comm_hook {}, strategy {}\n",
        c.gpus, c.per_gpu_batch, c.grad_accumulation, c.global_batch, c.bucket_cap_mb, c.comm_hook,
        model::strategy_name(c.strategy));
    if (c.activation_checkpointing.enabled()) {
      out.insert(out.size() - 1, ", activation checkpointing " +
                                     model::checkpointing_name(c.activation_checkpointing));
    }
    if (multi) out.insert(out.size() - 1, ", on " + c.system_label);
  } else {
    out += r.none_feasible_reason + "\n";
    if (!r.nearest_reason.empty()) out += r.nearest_reason + "\n";
  }
  for (const std::string& w : r.warnings) out += "note: " + w + "\n";
  return printable(out);  // names come from the user: no terminal escapes
}

std::string plan_csv(const PlanResult& r) {
  std::string out =
      "role,system,gpu_hour_usd,gpus,nodes,strategy,per_gpu_batch,grad_accumulation,"
      "bucket_cap_mb,comm_hook,activation_checkpointing,global_batch,step_time_s,steps_to_target,"
      "time_to_train_s,gpu_hours,cost_usd,time_per_million_samples_s,"
      "gpu_hours_per_million_samples,cost_per_million_samples,cost_per_million_tokens,"
      "tokens_per_s_per_gpu,mfu,memory_per_gpu_bytes,memory_headroom_bytes,ettr,"
      "uncertainty_median_abs_error,uncertainty_max_abs_error,uncertainty_rows\n";
  auto opt = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.9g}", *v) : std::string();
  };
  auto row = [&](const char* role, const PlanPoint& p) {
    // RFC 4180: a label with a comma or a quote is quoted, its quotes doubled.
    std::string label = p.system_label;
    if (label.find_first_of(",\"\n") != std::string::npos) {
      std::string q = "\"";
      for (char c : label) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      label = q + "\"";
    }
    const std::optional<Uncertainty>& u = p.uncertainty;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{:.9g},{},{},{},{:.9g},{},{},{},{},{:.9g},{:.9g},{},{},{:.9g},"
        "{:.9g},{:.9g},{:.9g},{},{},{},{}\n",
        role, label, opt(p.gpu_hour_usd), p.gpus, p.nodes, model::strategy_name(p.strategy),
        p.per_gpu_batch, p.grad_accumulation, p.bucket_cap_mb, p.comm_hook,
        model::checkpointing_short_name(p.activation_checkpointing), p.global_batch, p.step_time_s,
        opt(p.steps_to_target), opt(p.time_to_train_s), opt(p.gpu_hours), opt(p.cost_usd),
        p.time_per_million_samples_s, p.gpu_hours_per_million_samples,
        opt(p.cost_per_million_samples), opt(p.cost_per_million_tokens), p.tokens_per_s_per_gpu,
        p.mfu, p.memory_per_gpu_bytes, p.memory_headroom_bytes, opt(p.ettr),
        opt(u ? std::optional<double>(u->median_abs) : std::nullopt),
        opt(u ? std::optional<double>(u->max_abs) : std::nullopt),
        u ? std::to_string(u->rows) : std::string());
  };
  for (const PlanSystemResult& sr : r.systems) {
    if (sr.best) row(r.chosen && r.chosen->index == sr.best->index ? "chosen" : "best", *sr.best);
  }
  for (const PlanPoint& p : r.pareto) row("front", p);
  if (r.nearest) row("nearest", *r.nearest);
  return out;
}

}  // namespace ddpsim::sim
