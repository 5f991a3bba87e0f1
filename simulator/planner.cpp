// planner.cpp: enumeration, feasibility, Pareto front and choice (contracts in planner.hpp; the
// JSON, table and CSV of the answer in plan_report.cpp).
#include "simulator/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <tuple>

#include "model/error.hpp"
#include "model/units.hpp"
#include "simulator/plan_search.hpp"
#include "simulator/prediction/fsdp2.hpp"
#include "simulator/prediction/memory.hpp"
#include "simulator/report.hpp"

namespace ddpsim::sim {

namespace {

using detail::choice_key;
using detail::SearchTally;
using detail::SystemSearch;

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

// The scenario's settings of one candidate, for predicting it again on another Predictor.
struct CandidateConfig {
  model::ClusterConfig cluster;
  model::TrainingConfig training;
  model::ParallelismConfig par;
};

CandidateConfig candidate_config(const model::Scenario& s, const PlanPoint& pt) {
  const model::PlanConfig& pc = s.plan;
  CandidateConfig c{s.cluster, s.training, s.parallelism};
  c.cluster.gpus = pt.gpus;
  c.training.per_gpu_batch = pt.per_gpu_batch;
  c.training.grad_accumulation = pt.grad_accumulation;
  if (pc.bucket_cap_given) {
    c.par.bucket_cap_mb = pt.bucket_cap_mb;
    c.par.bucket_cap_defaulted = false;
  }
  c.par.comm_hook = pc.comm_hook[pt.hook_index];
  c.par.strategy = pt.strategy;
  c.training.activation_checkpointing = pt.activation_checkpointing;
  return c;
}

// Fills sensitivity_pct and limited_by of `points` (all of system `sys`).
void annotate(const SystemSearch& sys, std::vector<PlanPoint*>& points) {
  static const std::pair<const char*, const char*> kFigures[] = {
      {"gpu_flops", "compute"},
      {"hbm_bandwidth", "memory bandwidth"},
      {"network_bandwidth", "network bandwidth"},
      {"network_latency", "latency"}};
  const model::Scenario& s = *sys.scenario;
  if (points.empty()) return;
  for (const auto& [figure, label] : kFigures) {
    const Predictor p(with_improved_figure(s, figure));
    for (PlanPoint* pt : points) {
      const CandidateConfig c = candidate_config(s, *pt);
      const double t =
          p.predict(c.cluster, c.training, c.par, s.gpu_hour_usd, s.simulation.jitter_cv)
              .step_time_s;
      pt->sensitivity_pct[figure] = (t - pt->step_time_s) / pt->step_time_s * 100.0;
    }
  }
  for (PlanPoint* pt : points) {
    if (s.training.critical_batch &&
        static_cast<double>(pt->global_batch) >= s.training.critical_batch->b_noise) {
      pt->limited_by = "statistical efficiency";
    } else if (pt->memory_per_gpu_bytes > 0.9 * sys.usable_bytes) {
      pt->limited_by = "memory";
    } else {
      // The figure whose improvement shortens the step most (most negative change).
      const char* best = kFigures[0].second;
      double best_pct = 0;
      for (const auto& [figure, label] : kFigures) {
        const double pct = pt->sensitivity_pct.at(figure);
        if (pct < best_pct) {
          best_pct = pct;
          best = label;
        }
      }
      pt->limited_by = best;
    }
  }
}

// Annotates the front, the chosen point and every system's best, system by system.
void annotate_front(const std::vector<SystemSearch>& systems, PlanResult& r) {
  for (std::size_t i = 0; i < systems.size(); ++i) {
    std::vector<PlanPoint*> points;
    for (PlanPoint& pt : r.pareto) {
      if (pt.system == i) points.push_back(&pt);
    }
    if (r.systems[i].best) points.push_back(&*r.systems[i].best);
    annotate(systems[i], points);
  }
  if (r.chosen) {
    r.chosen = r.systems[r.chosen->system].best;  // the chosen point is its system's best
  }
}

// Warnings about what plan does not do with the scenario; a deadline or a budget without a
// training target is refused.
void check_plan_inputs(const model::Scenario& s, PlanResult& r) {
  const model::PlanConfig& pc = s.plan;
  r.by_throughput = !s.training.critical_batch && !s.training.target_samples;
  if (r.by_throughput) {
    detail::add_warning(
        r.warnings,
        "no training.target (tokens, samples or critical_batch): planning by throughput "
        "(time and GPU-hours per million samples), not time to train");
    // A deadline or a budget bounds the time to train, which needs steps to target.
    if (pc.deadline_hours || pc.budget_usd) {
      throw InputError(s.file, "/training/target",
                       std::string("a training target (\"tokens\", \"samples\" or "
                                   "\"critical_batch\"): plan.") +
                           (pc.deadline_hours ? "deadline_hours" : "budget_usd") +
                           " limits the time to train, which needs steps to target",
                       "no target");
    }
  }
  if (!s.sweep.empty()) {
    detail::add_warning(r.warnings,
                        "the scenario's sweep is ignored by plan (it plans over /plan)");
  }
  if (s.simulation.engine == model::Engine::kEvent) {
    detail::add_warning(r.warnings,
                        "plan uses the analytic engine (simulation.engine \"event\" ignored)");
  }
}

// "no feasible configuration among N candidates: ..." with the count of each reason.
std::string none_feasible(const PlanResult& r) {
  std::string counts;
  for (const char* reason : detail::kPlanReasons) {
    if (r.rejected.at(reason) == 0) continue;
    counts += fmt::format("{}{} over {}", counts.empty() ? "" : ", ", r.rejected.at(reason),
                          std::string(reason) == "memory"         ? "memory (with the margin)"
                          : std::string(reason) == "global_batch" ? "max_global_batch"
                                                                  : reason);
  }
  return fmt::format("no feasible configuration among {} candidates: {}", r.candidates, counts);
}

// What the nearest rejected candidate lacks, in words.
std::string nearest_words(const model::PlanConfig& pc, const PlanPoint& p,
                          const std::string& reason, double over) {
  std::string what;
  if (reason == "memory") {
    what = fmt::format("needs {:.1f} GiB per GPU of the {:.1f} GiB usable",
                       p.memory_per_gpu_bytes / kGiB,
                       (p.memory_per_gpu_bytes + p.memory_headroom_bytes) / kGiB);
  } else if (reason == "deadline") {
    what = fmt::format("takes {:.1f} h, past the {:g} h deadline", *p.time_to_train_s / 3600.0,
                       *pc.deadline_hours);
  } else if (reason == "budget") {
    what = fmt::format("costs ${:.0f}, past the ${:.0f} budget", *p.cost_usd, *pc.budget_usd);
  } else if (reason == "global_batch") {
    what =
        fmt::format("global batch {} > max_global_batch {}", p.global_batch, *pc.max_global_batch);
  } else {
    what = "never finishes (ETTR 0)";
  }
  return fmt::format(
      "nearest option: {} x {} GPUs, per_gpu_batch {}, grad_accumulation {}, strategy {}{}: {} "
      "({:.2f}x the limit)",
      p.system_label, p.gpus, p.per_gpu_batch, p.grad_accumulation,
      model::strategy_name(p.strategy),
      p.activation_checkpointing.enabled()
          ? ", checkpointing " + model::checkpointing_short_name(p.activation_checkpointing)
          : std::string(),
      what, over);
}

// The front and each system's best from the search, and the one chosen.
void choose(const model::PlanConfig& pc, SearchTally& tally, PlanResult& r) {
  r.pareto = std::move(tally.front);
  for (std::size_t i = 0; i < tally.best.size(); ++i) r.systems[i].best = std::move(tally.best[i]);
  r.chosen = *std::min_element(r.pareto.begin(), r.pareto.end(),
                               [&](const PlanPoint& a, const PlanPoint& b) {
                                 return choice_key(pc, a, r.by_cost) < choice_key(pc, b, r.by_cost);
                               });
  r.dominated = r.feasible - r.pareto.size();
}

std::optional<Uncertainty> band_of(const SystemSearch& sys, const PlanPoint& p) {
  return uncertainty_for(sys.scenario->hardware.gpu.name, p.strategy,
                         static_cast<double>(sys.scenario->workload->param_count()));
}

// The objective's metric of a point (what the choice minimises first).
double objective_metric(const model::PlanConfig& pc, const PlanPoint& p, bool by_cost) {
  return std::get<0>(choice_key(pc, p, by_cost));
}

// Error bands on the front, the bests and the chosen point; each system's best compared with the
// chosen one: closer than their bands, a warning says the model cannot decide between them.
void add_uncertainty(const model::PlanConfig& pc, const std::vector<SystemSearch>& systems,
                     PlanResult& r) {
  for (PlanPoint& p : r.pareto) p.uncertainty = band_of(systems[p.system], p);
  for (std::size_t i = 0; i < systems.size(); ++i) {
    if (r.systems[i].best) r.systems[i].best->uncertainty = band_of(systems[i], *r.systems[i].best);
  }
  r.chosen->uncertainty = band_of(systems[r.chosen->system], *r.chosen);
  const double chosen_metric = objective_metric(pc, *r.chosen, r.by_cost);
  for (PlanSystemResult& sr : r.systems) {
    if (!sr.best || sr.best->index == r.chosen->index || chosen_metric <= 0) continue;
    const double a = r.chosen->uncertainty ? r.chosen->uncertainty->median_abs : 0.0;
    const double b = sr.best->uncertainty ? sr.best->uncertainty->median_abs : 0.0;
    const double band = std::max(a, b);
    const double diff = objective_metric(pc, *sr.best, r.by_cost) / chosen_metric - 1.0;
    if (diff < band) {
      sr.within_band_of_chosen = true;
      detail::add_warning(
          r.warnings,
          fmt::format("{}'s best option is {:.1f}% behind the chosen one on {}, inside the "
                      "model's error band (median |error| {:.1f}% of published runs of "
                      "their classes, results/FIDELITY.md): this model cannot decide "
                      "between them; measure both",
                      sr.label, diff * 100, model::objective_name(pc.objective), band * 100));
    }
  }
}

// Every system's candidates searched into a fresh result (and the tally of the search).
std::pair<PlanResult, SearchTally> search_all(const model::Scenario& s,
                                              const std::vector<SystemSearch>& systems,
                                              bool pruned) {
  PlanResult r;
  for (const char* reason : detail::kPlanReasons) r.rejected[reason] = 0;
  check_plan_inputs(s, r);
  r.by_cost = true;
  for (const SystemSearch& sys : systems) {
    PlanSystemResult sr;
    sr.label = sys.label;
    sr.hardware = sys.scenario->hardware.name;
    sr.gpu = sys.scenario->hardware.gpu.name;
    sr.gpu_hour_usd = sys.scenario->gpu_hour_usd;
    sr.gpus = sys.scenario->plan.gpus;
    for (const char* reason : detail::kPlanReasons) sr.rejected[reason] = 0;
    r.systems.push_back(std::move(sr));
    r.by_cost = r.by_cost && sys.scenario->gpu_hour_usd.has_value();
  }
  SearchTally tally(s.plan, r.by_cost, systems.size());
  for (std::size_t i = 0; i < systems.size(); ++i) {
    detail::search_system(systems[i], i, pruned && detail::may_prune(*systems[i].scenario), r,
                          tally);
  }
  r.feasible = tally.feasible_predicted + tally.feasible_unpredicted;
  r.predicted = r.candidates - tally.judged_from_bounds;
  return {std::move(r), std::move(tally)};
}

PlanResult plan_systems(const model::Scenario& s, const std::vector<SystemSearch>& systems,
                        PlanSearch search) {
  const bool pruned = search == PlanSearch::kPruned;
  std::pair<PlanResult, SearchTally> found{PlanResult{}, SearchTally(s.plan, false, 0)};
  try {
    found = search_all(s, systems, pruned);
  } catch (const detail::NeedsFullSearch&) {
    found = search_all(s, systems, false);  // a class is refused: its first candidate says why
  }
  if (found.first.feasible == 0 && found.second.judged_from_bounds > 0) {
    found = search_all(s, systems, false);  // the nearest option needs every prediction
  }
  PlanResult& r = found.first;
  std::optional<PlanPoint>& nearest = found.second.nearest;
  const std::string& nearest_reason = found.second.nearest_reason;
  const double nearest_over = found.second.nearest_over;
  if (r.feasible == 0) {
    r.none_feasible_reason = none_feasible(r);
    if (nearest) {
      nearest->uncertainty = band_of(systems[nearest->system], *nearest);
      r.nearest_reason = nearest_words(systems[nearest->system].scenario->plan, *nearest,
                                       nearest_reason, nearest_over);
      r.nearest = std::move(nearest);
    }
    return r;
  }
  choose(s.plan, found.second, r);
  annotate_front(systems, r);
  add_uncertainty(s.plan, systems, r);
  // The notes of the chosen configuration's prediction (those of every candidate would repeat
  // each cluster size's mesh and interference).
  const SystemSearch& sys = systems[r.chosen->system];
  const model::Scenario& cs = *sys.scenario;
  const CandidateConfig c = candidate_config(cs, *r.chosen);
  const Prediction pred = sys.predictor->predict(c.cluster, c.training, c.par, cs.gpu_hour_usd,
                                                 cs.simulation.jitter_cv);
  for (const std::string& w : pred.warnings) {
    // The per-point "no target" note is replaced by the planner's own warning.
    if (w.rfind("no training.target", 0) != 0) detail::add_warning(r.warnings, "chosen: " + w);
  }
  return r;
}

SystemSearch system_search(const model::Scenario& s, const Predictor& p, std::string label) {
  return {&s, &p, std::move(label), (1.0 - s.plan.memory_margin) * p.hardware().gpu.memory_bytes};
}

// The label of the scenario's own hardware: its preset's name, else the system's name.
std::string own_label(const model::Scenario& s) {
  const nlohmann::json* hw = s.doc.contains("hardware") ? &s.doc.at("hardware") : nullptr;
  if (hw && hw->is_object() && hw->contains("preset") && hw->at("preset").is_string()) {
    return hw->at("preset").get<std::string>();
  }
  return s.hardware.name;
}

}  // namespace

PlanResult make_plan(const model::Scenario& s, const Predictor& predictor, PlanSearch search) {
  if (s.plan.systems.empty()) {
    return plan_systems(s, {system_search(s, predictor, own_label(s))}, search);
  }
  // plan.hardware: one Predictor per system (the one given serves the scenario's own hardware,
  // which no longer takes part).
  std::vector<std::unique_ptr<Predictor>> predictors;
  std::vector<SystemSearch> systems;
  for (const model::PlanSystem& sys : s.plan.systems) {
    predictors.push_back(std::make_unique<Predictor>(*sys.scenario));
    systems.push_back(system_search(*sys.scenario, *predictors.back(), sys.label));
  }
  return plan_systems(s, systems, search);
}

PlanResult make_plan(const model::Scenario& s, PlanSearch search) {
  const Predictor predictor(s);
  return make_plan(s, predictor, search);
}

}  // namespace ddpsim::sim
