// planner.cpp: enumeration, feasibility, Pareto front and choice (contracts in planner.hpp).
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

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

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
