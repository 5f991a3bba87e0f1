// planner.cpp: enumeration, feasibility, Pareto front and choice (contracts in planner.hpp).
#include "simulator/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "model/error.hpp"
#include "model/units.hpp"
#include "simulator/prediction/fsdp2.hpp"
#include "simulator/prediction/memory.hpp"
#include "simulator/report.hpp"

namespace ddpsim::sim {

namespace {

using nlohmann::json;

const char* const kReasons[] = {"global_batch", "memory", "deadline", "budget", "reliability"};

void add_warning(std::vector<std::string>& ws, const std::string& w) {
  if (std::find(ws.begin(), ws.end(), w) == ws.end()) ws.push_back(w);
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json point_json(const PlanPoint& p) {
  return {{"gpus", p.gpus},
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
          {"limited_by", p.limited_by.empty() ? json(nullptr) : json(p.limited_by)},
          {"step_time_sensitivity_pct", p.sensitivity_pct}};
}

}  // namespace

model::Scenario with_improved_figure(const model::Scenario& s, const std::string& figure) {
  model::Scenario v = s;
  model::HardwareSpec& h = v.hardware;
  if (figure == "network_bandwidth") {
    for (model::LinkSpec* l : {&h.intra_node, &h.pcie, &h.inter_node}) l->bandwidth *= 1.1;
  } else if (figure == "network_latency") {
    for (model::LinkSpec* l : {&h.intra_node, &h.pcie, &h.inter_node}) l->latency *= 0.9;
    for (model::CollectiveTuning* t : {&h.intra_tuning, &h.inter_tuning}) {
      t->latency *= 0.9;
      t->nvls_latency *= 0.9;
    }
  } else if (figure == "gpu_flops") {
    for (auto& [dtype, flops] : h.gpu.peak_flops) flops *= 1.1;
    h.gpu.tf32_peak_flops *= 1.1;
    // Fused attention runs at the measured kernel rates where the preset has them
    // (simulator/analytic/kernel_rates.cpp), not at a fraction of the peak: a faster GPU speeds
    // those up too.
    for (auto& b : h.gpu.attention_benchmarks) {
      for (double& f : b.flops_per_s) f *= 1.1;
    }
  } else {
    DDPSIM_ASSERT(figure == "hbm_bandwidth", "unknown hardware figure");
    h.gpu.memory_bandwidth *= 1.1;
  }
  return v;
}

namespace {

// Fills sensitivity_pct and limited_by of every front point (and the chosen one).
void annotate_front(const model::Scenario& s, PlanResult& r, double usable_bytes) {
  static const std::pair<const char*, const char*> kFigures[] = {
      {"gpu_flops", "compute"},
      {"hbm_bandwidth", "memory bandwidth"},
      {"network_bandwidth", "network bandwidth"},
      {"network_latency", "latency"}};
  const model::PlanConfig& pc = s.plan;
  for (const auto& [figure, label] : kFigures) {
    const Predictor p(with_improved_figure(s, figure));
    for (PlanPoint& pt : r.pareto) {
      model::ClusterConfig cluster = s.cluster;
      cluster.gpus = pt.gpus;
      model::TrainingConfig training = s.training;
      training.per_gpu_batch = pt.per_gpu_batch;
      training.grad_accumulation = pt.grad_accumulation;
      model::ParallelismConfig par = s.parallelism;
      if (pc.bucket_cap_given) {
        par.bucket_cap_mb = pt.bucket_cap_mb;
        par.bucket_cap_defaulted = false;
      }
      par.comm_hook = pc.comm_hook[pt.hook_index];
      par.strategy = pt.strategy;
      training.activation_checkpointing = pt.activation_checkpointing;
      const double t =
          p.predict(cluster, training, par, s.gpu_hour_usd, s.simulation.jitter_cv).step_time_s;
      pt.sensitivity_pct[figure] = (t - pt.step_time_s) / pt.step_time_s * 100.0;
    }
  }
  for (PlanPoint& pt : r.pareto) {
    if (s.training.critical_batch &&
        static_cast<double>(pt.global_batch) >= s.training.critical_batch->b_noise) {
      pt.limited_by = "statistical efficiency";
    } else if (pt.memory_per_gpu_bytes > 0.9 * usable_bytes) {
      pt.limited_by = "memory";
    } else {
      // The figure whose improvement shortens the step most (most negative change).
      const char* best = kFigures[0].second;
      double best_pct = 0;
      for (const auto& [figure, label] : kFigures) {
        const double pct = pt.sensitivity_pct.at(figure);
        if (pct < best_pct) {
          best_pct = pct;
          best = label;
        }
      }
      pt.limited_by = best;
    }
    if (r.chosen && r.chosen->index == pt.index) r.chosen = pt;
  }
}

// The order of the front and of ties: time, GPU-hours, fewer GPUs, smaller global batch,
// enumeration order.
auto front_key(const PlanPoint& p) {
  return std::make_tuple(p.time_metric(), p.gpu_hours_metric(), p.gpus, p.global_batch, p.index);
}

// Warnings about what plan does not do with the scenario; a deadline or a budget without a
// training target is refused.
void check_plan_inputs(const model::Scenario& s, PlanResult& r) {
  const model::PlanConfig& pc = s.plan;
  r.by_throughput = !s.training.critical_batch;
  if (r.by_throughput) {
    add_warning(r.warnings,
                "no training.target.critical_batch: planning by throughput (time and GPU-hours "
                "per million samples), not time to train");
    // A deadline or a budget bounds the time to train, which needs steps to target.
    if (pc.deadline_hours || pc.budget_usd) {
      throw InputError(s.file, "/training/target",
                       std::string("a training target (\"critical_batch\": {\"b_noise\", "
                                   "\"s_min\"}): plan.") +
                           (pc.deadline_hours ? "deadline_hours" : "budget_usd") +
                           " limits the time to train, which needs steps to target",
                       "no target");
    }
  }
  if (!s.sweep.empty()) {
    add_warning(r.warnings, "the scenario's sweep is ignored by plan (it plans over /plan)");
  }
  if (s.simulation.engine == model::Engine::kEvent) {
    add_warning(r.warnings, "plan uses the analytic engine (simulation.engine \"event\" ignored)");
  }
}

// Why a strategy is no candidate at `gpus` GPUs (a warning), or empty when it is one.
std::string not_a_candidate(model::Strategy strategy, int gpus, const model::ClusterConfig& cluster,
                            const model::ParallelismConfig& par) {
  if (strategy == model::Strategy::kFsdpHybrid && gpus % cluster.gpus_per_node != 0) {
    // HYBRID_SHARD needs whole nodes: not a candidate at this size.
    return fmt::format("fsdp_hybrid is not a candidate below one node ({} GPUs per node)",
                       cluster.gpus_per_node);
  }
  if (strategy == model::Strategy::kFsdp2) {
    if (auto problem = fsdp2_mesh_problem(par.fsdp2, gpus)) {
      return fmt::format("fsdp2 is not a candidate at {} GPUs: {} {} (got {})", gpus,
                         problem->pointer, problem->expected, problem->got);
    }
  }
  return "";
}

// A candidate's figures from its prediction.
PlanPoint plan_point(const Prediction& pred, int gpus, const model::TrainingConfig& training,
                     const model::ParallelismConfig& par, std::size_t hook_index) {
  PlanPoint p;
  p.gpus = gpus;
  p.nodes = pred.nodes;
  p.per_gpu_batch = training.per_gpu_batch;
  p.grad_accumulation = training.grad_accumulation;
  p.bucket_cap_mb = par.bucket_cap_mb;
  p.comm_hook = par.comm_hook.text;
  p.hook_index = hook_index;
  p.strategy = par.strategy;
  p.activation_checkpointing = training.activation_checkpointing;
  p.global_batch = pred.global_batch;
  p.lr = pred.lr;
  p.step_time_s = pred.step_time_s;
  p.throughput_samples_per_s = pred.throughput_samples_per_s;
  p.steps_to_target = pred.steps_to_target;
  // With failures (reliability): the wall time includes checkpoints, restarts
  // and lost work, i.e. the failure-free time / ETTR.
  const Goodput* g = pred.goodput ? &*pred.goodput : nullptr;
  p.ettr = g ? std::optional<double>(g->ettr) : std::nullopt;
  p.time_to_train_s = g ? g->time_to_train_s : pred.time_to_train_s;
  p.gpu_hours = g ? g->gpu_hours : pred.gpu_hours;
  p.cost_usd = g ? g->cost_usd : pred.cost_usd;
  // One million samples take 1e6 / B steps of step_time_s on N GPUs.
  p.time_per_million_samples_s = pred.step_time_s * 1e6 / static_cast<double>(pred.global_batch);
  if (g && g->ettr > 0) p.time_per_million_samples_s /= g->ettr;
  p.gpu_hours_per_million_samples = p.time_per_million_samples_s * gpus / 3600.0;
  p.memory_per_gpu_bytes = pred.memory.total();
  return p;
}

// Which constraint of plan a candidate breaks (one of kReasons), or nullptr.
const char* rejection(const model::PlanConfig& pc, const PlanPoint& p, const Prediction& pred,
                      double capacity) {
  if (pc.max_global_batch && p.global_batch > *pc.max_global_batch) return "global_batch";
  if (p.ettr && *p.ettr <= 0) return "reliability";
  if (!fits(pred.memory, capacity, pc.memory_margin)) return "memory";
  if (pc.deadline_hours && p.time_to_train_s && *p.time_to_train_s > *pc.deadline_hours * 3600.0) {
    return "deadline";
  }
  if (pc.budget_usd && p.cost_usd && *p.cost_usd > *pc.budget_usd) return "budget";
  return nullptr;
}

// "no feasible configuration among N candidates: ..." with the count of each reason.
std::string none_feasible(const PlanResult& r) {
  std::string counts;
  for (const char* reason : kReasons) {
    if (r.rejected.at(reason) == 0) continue;
    counts += fmt::format("{}{} over {}", counts.empty() ? "" : ", ", r.rejected.at(reason),
                          std::string(reason) == "memory"         ? "memory (with the margin)"
                          : std::string(reason) == "global_batch" ? "max_global_batch"
                                                                  : reason);
  }
  return fmt::format("no feasible configuration among {} candidates: {}", r.candidates, counts);
}

// The Pareto front of the feasible points and the one chosen by plan.objective.
void choose(const model::Scenario& s, std::vector<PlanPoint>& feasible, double capacity,
            PlanResult& r) {
  const model::PlanConfig& pc = s.plan;
  // Pareto front: in front order, a point is non-dominated iff its GPU-hours are strictly below
  // those of every point before it (those are at least as fast; an equal pair keeps the first).
  std::sort(feasible.begin(), feasible.end(),
            [](const PlanPoint& a, const PlanPoint& b) { return front_key(a) < front_key(b); });
  double best_gh = 0;
  for (const PlanPoint& p : feasible) {
    if (r.pareto.empty() || p.gpu_hours_metric() < best_gh) {
      r.pareto.push_back(p);
      best_gh = p.gpu_hours_metric();
    }
  }

  // The choice: objective first, then the other front metric, then the front_key tie-breaks.
  const bool by_time = pc.objective == model::PlanObjective::kTime;
  auto choice_key = [&](const PlanPoint& p) {
    const double a = by_time ? p.time_metric() : p.gpu_hours_metric();
    const double b = by_time ? p.gpu_hours_metric() : p.time_metric();
    return std::make_tuple(a, b, p.gpus, p.global_batch, p.index);
  };
  r.chosen = *std::min_element(
      r.pareto.begin(), r.pareto.end(),
      [&](const PlanPoint& a, const PlanPoint& b) { return choice_key(a) < choice_key(b); });
  r.dominated = r.feasible - r.pareto.size();
  annotate_front(s, r, (1.0 - pc.memory_margin) * capacity);
}

}  // namespace

PlanResult make_plan(const model::Scenario& s, const Predictor& predictor) {
  const model::PlanConfig& pc = s.plan;
  PlanResult r;
  for (const char* reason : kReasons) r.rejected[reason] = 0;
  check_plan_inputs(s, r);
  const double capacity = predictor.hardware().gpu.memory_bytes;

  // A PlanConfig built in code may leave the strategy list empty: the scenario's own then.
  const std::vector<model::Strategy> strategies =
      pc.strategy.empty() ? std::vector<model::Strategy>{s.parallelism.strategy} : pc.strategy;
  const std::vector<model::ActivationCheckpointing> checkpointing =
      pc.activation_checkpointing.empty()
          ? std::vector<model::ActivationCheckpointing>{s.training.activation_checkpointing}
          : pc.activation_checkpointing;
  std::vector<PlanPoint> feasible;
  std::size_t index = 0;
  for (const int gpus : pc.gpus) {
    model::ClusterConfig cluster = s.cluster;
    cluster.gpus = gpus;
    for (const std::int64_t b : pc.per_gpu_batch) {
      for (const int k : pc.grad_accumulation) {
        model::TrainingConfig training = s.training;
        training.per_gpu_batch = b;
        training.grad_accumulation = k;
        for (const double cap : pc.bucket_cap_mb) {
          for (const model::CommHook& hook : pc.comm_hook) {
            for (const model::Strategy strategy : strategies) {
              model::ParallelismConfig par = s.parallelism;
              if (pc.bucket_cap_given) {
                par.bucket_cap_mb = cap;
                par.bucket_cap_defaulted = false;
              }
              par.comm_hook = hook;
              par.strategy = strategy;
              if (const std::string why = not_a_candidate(strategy, gpus, cluster, par);
                  !why.empty()) {
                add_warning(r.warnings, why);
                continue;
              }
              for (const model::ActivationCheckpointing& ac : checkpointing) {
                training.activation_checkpointing = ac;
                Prediction pred = predictor.predict(cluster, training, par, s.gpu_hour_usd,
                                                    s.simulation.jitter_cv);
                apply_goodput(s.reliability, predictor.workload(), cluster, training, par,
                              s.gpu_hour_usd, pred, s.hardware.gpus_per_host);
                ++r.candidates;
                PlanPoint p = plan_point(pred, gpus, training, par,
                                         static_cast<std::size_t>(&hook - pc.comm_hook.data()));
                p.index = index++;
                if (const char* reason = rejection(pc, p, pred, capacity)) {
                  ++r.rejected[reason];
                  continue;
                }
                for (const std::string& w : pred.warnings) {
                  // The per-point "no target" note is replaced by the planner's own warning.
                  if (w.rfind("no training.target", 0) != 0) add_warning(r.warnings, w);
                }
                feasible.push_back(std::move(p));
              }
            }
          }
        }
      }
    }
  }
  r.feasible = feasible.size();
  if (feasible.empty()) {
    r.none_feasible_reason = none_feasible(r);
    return r;
  }
  choose(s, feasible, capacity, r);
  return r;
}

PlanResult make_plan(const model::Scenario& s) {
  const Predictor predictor(s);
  return make_plan(s, predictor);
}

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
  plan["warnings"] = r.warnings;
  plan["none_feasible_reason"] =
      r.none_feasible_reason.empty() ? json(nullptr) : json(r.none_feasible_reason);
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

}  // namespace

std::string plan_table(const model::Scenario& s, const PlanResult& r) {
  const model::PlanConfig& pc = s.plan;
  // A ckpt column when any candidate checkpoints.
  bool searches_checkpointing = s.training.activation_checkpointing.enabled();
  for (const model::ActivationCheckpointing& ac : pc.activation_checkpointing) {
    searches_checkpointing = searches_checkpointing || ac.enabled();
  }
  std::string out = fmt::format("{}: plan for {} on {} ({}), objective {}\n",
                                s.name.empty() ? s.file : s.name, s.workload->name, s.hardware.name,
                                s.hardware.gpu.name, model::objective_name(pc.objective));
  if (!r.pareto.empty()) {
    out += r.by_throughput ? "Pareto front of time vs GPU-hours per million samples:\n"
                           : "Pareto front of time to train vs GPU-hours:\n";
    out += fmt::format(
        "  {:>5} {:>5} {:>6} {:>4} {:>8} {:>12} {:>18} {:>9} {:>10} {:>10} {:>12} {:>12} "
        "{:>11} {:>8}\n",
        "gpus", "nodes", "micro", "acc", "cap_MiB", "hook", "strategy", "g.batch", "step_ms",
        r.by_throughput ? "-" : "steps", r.by_throughput ? "h/1M smp" : "hours",
        r.by_throughput ? "GPU-h/1M smp" : "GPU-hours", "cost_usd", "mem_GiB");
    if (s.reliability) out.insert(out.size() - 1, fmt::format(" {:>6}", "ETTR"));
    if (searches_checkpointing) out.insert(out.size() - 1, fmt::format(" {:>12}", "ckpt"));
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
  } else {
    out += r.none_feasible_reason + "\n";
  }
  for (const std::string& w : r.warnings) out += "note: " + w + "\n";
  return printable(out);  // names come from the user: no terminal escapes
}

}  // namespace ddpsim::sim
