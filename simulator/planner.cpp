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

// One system being searched: its scenario (hardware, price, cluster sizes) and Predictor.
struct SystemSearch {
  const model::Scenario* scenario = nullptr;
  const Predictor* predictor = nullptr;
  std::string label;
  double usable_bytes = 0;  ///< (1 - memory_margin) x GPU memory
};

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

// The order of the front and of ties: time, GPU-hours, fewer GPUs, smaller global batch,
// enumeration order.
double spend_metric(const PlanPoint& p, bool by_cost) {
  return by_cost ? p.cost_metric() : p.gpu_hours_metric();
}

auto front_key(const PlanPoint& p, bool by_cost) {
  return std::make_tuple(p.time_metric(), spend_metric(p, by_cost), p.gpus, p.global_batch,
                         p.index);
}

// Warnings about what plan does not do with the scenario; a deadline or a budget without a
// training target is refused.
void check_plan_inputs(const model::Scenario& s, PlanResult& r) {
  const model::PlanConfig& pc = s.plan;
  r.by_throughput = !s.training.critical_batch && !s.training.target_samples;
  if (r.by_throughput) {
    add_warning(r.warnings,
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
                     const model::ParallelismConfig& par, std::size_t hook_index,
                     std::optional<double> gpu_hour_usd, double usable_bytes) {
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
  p.memory_headroom_bytes = usable_bytes - p.memory_per_gpu_bytes;
  p.mfu = mfu(pred);
  p.tokens_per_s_per_gpu = tokens_per_s_per_gpu(pred);
  p.gpu_hour_usd = gpu_hour_usd;
  if (gpu_hour_usd) {
    p.cost_per_million_samples = p.gpu_hours_per_million_samples * *gpu_hour_usd;
    if (pred.tokens_per_sample > 1) {
      p.cost_per_million_tokens =
          *p.cost_per_million_samples / static_cast<double>(pred.tokens_per_sample);
    }
  }
  return p;
}

// Which constraint of plan a candidate breaks (one of kReasons), or nullptr; `over` receives
// how far past that limit it is (need / allowed, > 1; infinite for a job that never finishes).
const char* rejection(const model::PlanConfig& pc, const PlanPoint& p, const Prediction& pred,
                      double capacity, double& over) {
  if (pc.max_global_batch && p.global_batch > *pc.max_global_batch) {
    over = static_cast<double>(p.global_batch) / static_cast<double>(*pc.max_global_batch);
    return "global_batch";
  }
  if (p.ettr && *p.ettr <= 0) {
    over = std::numeric_limits<double>::infinity();
    return "reliability";
  }
  if (!fits(pred.memory, capacity, pc.memory_margin)) {
    over = pred.memory.total() / ((1.0 - pc.memory_margin) * capacity);
    return "memory";
  }
  if (pc.deadline_hours && p.time_to_train_s && *p.time_to_train_s > *pc.deadline_hours * 3600.0) {
    over = *p.time_to_train_s / (*pc.deadline_hours * 3600.0);
    return "deadline";
  }
  if (pc.budget_usd && p.cost_usd && *p.cost_usd > *pc.budget_usd) {
    over = *p.cost_usd / *pc.budget_usd;
    return "budget";
  }
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

// The choice key: the objective's metric first, then the other front metric, then fewer GPUs, a
// smaller global batch and enumeration order.
auto choice_key(const model::PlanConfig& pc, const PlanPoint& p, bool by_cost) {
  const double spend = pc.objective == model::PlanObjective::kCost       ? p.cost_metric()
                       : pc.objective == model::PlanObjective::kGpuHours ? p.gpu_hours_metric()
                                                                         : spend_metric(p, by_cost);
  const bool by_time = pc.objective == model::PlanObjective::kTime;
  const double a = by_time ? p.time_metric() : spend;
  const double b = by_time ? spend : p.time_metric();
  return std::make_tuple(a, b, p.gpus, p.global_batch, p.index);
}

// The Pareto front of the feasible points, each system's best and the one chosen.
void choose(const model::PlanConfig& pc, std::vector<PlanPoint>& feasible, PlanResult& r) {
  const bool by_cost = r.by_cost;
  // Pareto front: in front order, a point is non-dominated iff its spend is strictly below that
  // of every point before it (those are at least as fast; an equal pair keeps the first).
  std::sort(feasible.begin(), feasible.end(), [&](const PlanPoint& a, const PlanPoint& b) {
    return front_key(a, by_cost) < front_key(b, by_cost);
  });
  double best_spend = 0;
  for (const PlanPoint& p : feasible) {
    if (r.pareto.empty() || spend_metric(p, by_cost) < best_spend) {
      r.pareto.push_back(p);
      best_spend = spend_metric(p, by_cost);
    }
  }
  for (const PlanPoint& p : feasible) {
    std::optional<PlanPoint>& best = r.systems[p.system].best;
    if (!best || choice_key(pc, p, by_cost) < choice_key(pc, *best, by_cost)) best = p;
  }
  r.chosen = *std::min_element(r.pareto.begin(), r.pareto.end(),
                               [&](const PlanPoint& a, const PlanPoint& b) {
                                 return choice_key(pc, a, by_cost) < choice_key(pc, b, by_cost);
                               });
  r.dominated = r.feasible - r.pareto.size();
}

// Every candidate of one system: predicted, checked, feasible ones appended to `feasible`; the
// closest rejected one kept in `nearest` (with its reason and ratio).
void search(const SystemSearch& sys, std::size_t system_index, std::size_t& index, PlanResult& r,
            std::vector<PlanPoint>& feasible, std::optional<PlanPoint>& nearest,
            std::string& nearest_reason, double& nearest_over) {
  const model::Scenario& s = *sys.scenario;
  const Predictor& predictor = *sys.predictor;
  const model::PlanConfig& pc = s.plan;
  PlanSystemResult& sr = r.systems[system_index];
  const double capacity = predictor.hardware().gpu.memory_bytes;
  // A PlanConfig built in code may leave the strategy list empty: the scenario's own then.
  const std::vector<model::Strategy> strategies =
      pc.strategy.empty() ? std::vector<model::Strategy>{s.parallelism.strategy} : pc.strategy;
  const std::vector<model::ActivationCheckpointing> checkpointing =
      pc.activation_checkpointing.empty()
          ? std::vector<model::ActivationCheckpointing>{s.training.activation_checkpointing}
          : pc.activation_checkpointing;
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
                ++sr.candidates;
                PlanPoint p = plan_point(pred, gpus, training, par,
                                         static_cast<std::size_t>(&hook - pc.comm_hook.data()),
                                         s.gpu_hour_usd, sys.usable_bytes);
                p.index = index++;
                p.system = system_index;
                p.system_label = sys.label;
                double over = 0;
                if (const char* reason = rejection(pc, p, pred, capacity, over)) {
                  ++r.rejected[reason];
                  ++sr.rejected[reason];
                  if (!nearest || over < nearest_over) {
                    nearest = std::move(p);
                    nearest_reason = reason;
                    nearest_over = over;
                  }
                  continue;
                }
                ++sr.feasible;
                feasible.push_back(std::move(p));
              }
            }
          }
        }
      }
    }
  }
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
      add_warning(
          r.warnings,
          fmt::format("{}'s best option is {:.1f}% behind the chosen one on {}, inside the "
                      "model's error band (median |error| {:.1f}% of published runs of "
                      "their classes, results/FIDELITY.md): this model cannot decide "
                      "between them; measure both",
                      sr.label, diff * 100, model::objective_name(pc.objective), band * 100));
    }
  }
}

PlanResult plan_systems(const model::Scenario& s, const std::vector<SystemSearch>& systems) {
  PlanResult r;
  for (const char* reason : kReasons) r.rejected[reason] = 0;
  check_plan_inputs(s, r);
  r.by_cost = true;
  for (const SystemSearch& sys : systems) {
    PlanSystemResult sr;
    sr.label = sys.label;
    sr.hardware = sys.scenario->hardware.name;
    sr.gpu = sys.scenario->hardware.gpu.name;
    sr.gpu_hour_usd = sys.scenario->gpu_hour_usd;
    sr.gpus = sys.scenario->plan.gpus;
    for (const char* reason : kReasons) sr.rejected[reason] = 0;
    r.systems.push_back(std::move(sr));
    r.by_cost = r.by_cost && sys.scenario->gpu_hour_usd.has_value();
  }
  std::vector<PlanPoint> feasible;
  std::optional<PlanPoint> nearest;
  std::string nearest_reason;
  double nearest_over = 0;
  std::size_t index = 0;
  for (std::size_t i = 0; i < systems.size(); ++i) {
    search(systems[i], i, index, r, feasible, nearest, nearest_reason, nearest_over);
  }
  r.feasible = feasible.size();
  if (feasible.empty()) {
    r.none_feasible_reason = none_feasible(r);
    if (nearest) {
      nearest->uncertainty = band_of(systems[nearest->system], *nearest);
      r.nearest_reason = nearest_words(systems[nearest->system].scenario->plan, *nearest,
                                       nearest_reason, nearest_over);
      r.nearest = std::move(nearest);
    }
    return r;
  }
  choose(s.plan, feasible, r);
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
    if (w.rfind("no training.target", 0) != 0) add_warning(r.warnings, "chosen: " + w);
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

PlanResult make_plan(const model::Scenario& s, const Predictor& predictor) {
  if (s.plan.systems.empty()) return plan_systems(s, {system_search(s, predictor, own_label(s))});
  // plan.hardware: one Predictor per system (the one given serves the scenario's own hardware,
  // which no longer takes part).
  std::vector<std::unique_ptr<Predictor>> predictors;
  std::vector<SystemSearch> systems;
  for (const model::PlanSystem& sys : s.plan.systems) {
    predictors.push_back(std::make_unique<Predictor>(*sys.scenario));
    systems.push_back(system_search(*sys.scenario, *predictors.back(), sys.label));
  }
  return plan_systems(s, systems);
}

PlanResult make_plan(const model::Scenario& s) {
  const Predictor predictor(s);
  return make_plan(s, predictor);
}

}  // namespace ddpsim::sim
