// plan_search.cpp: the search over one system's candidates, in full or pruned by bounds
// (contracts in plan_search.hpp).
#include "simulator/plan_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <string_view>
#include <utility>

#include "model/error.hpp"
#include "simulator/analytic/sharded_layout.hpp"
#include "simulator/prediction/fsdp2.hpp"
#include "simulator/prediction/goodput.hpp"
#include "simulator/prediction/lr_schedule.hpp"
#include "simulator/prediction/memory.hpp"
#include "simulator/report.hpp"

namespace ddpsim::sim::detail {

void add_warning(std::vector<std::string>& ws, const std::string& w) {
  if (std::find(ws.begin(), ws.end(), w) == ws.end()) ws.push_back(w);
}

bool may_prune(const model::Scenario& s) { return !s.reliability.has_value(); }

double spend_metric(const PlanPoint& p, bool by_cost) {
  return by_cost ? p.cost_metric() : p.gpu_hours_metric();
}

std::tuple<double, double, int, std::int64_t, std::size_t> front_key(const PlanPoint& p,
                                                                     bool by_cost) {
  return std::make_tuple(p.time_metric(), spend_metric(p, by_cost), p.gpus, p.global_batch,
                         p.index);
}

std::tuple<double, double, int, std::int64_t, std::size_t> choice_key(const model::PlanConfig& pc,
                                                                      const PlanPoint& p,
                                                                      bool by_cost) {
  const double spend = pc.objective == model::PlanObjective::kCost       ? p.cost_metric()
                       : pc.objective == model::PlanObjective::kGpuHours ? p.gpu_hours_metric()
                                                                         : spend_metric(p, by_cost);
  const bool by_time = pc.objective == model::PlanObjective::kTime;
  const double a = by_time ? p.time_metric() : spend;
  const double b = by_time ? spend : p.time_metric();
  return std::make_tuple(a, b, p.gpus, p.global_batch, p.index);
}

void SearchTally::offer(const PlanPoint& p) {
  ++feasible_predicted;
  const auto key = front_key(p, by_cost);
  const double spend = spend_metric(p, by_cost);
  auto pos = std::lower_bound(
      front.begin(), front.end(), key,
      [&](const PlanPoint& q, const auto& k) { return front_key(q, by_cost) < k; });
  if (pos == front.begin() || spend_metric(*std::prev(pos), by_cost) > spend) {
    auto last = pos;
    while (last != front.end() && spend_metric(*last, by_cost) >= spend) ++last;
    pos = front.erase(pos, last);
    front.insert(pos, p);
  }
  std::optional<PlanPoint>& b = best[p.system];
  if (!b || choice_key(*pc, p, by_cost) < choice_key(*pc, *b, by_cost)) b = p;
}

namespace {

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

// Which constraint of plan a candidate breaks (one of kPlanReasons), or nullptr; `over`
// receives how far past that limit it is (need / allowed, > 1; infinite for a job that never
// finishes).
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

// The exact feasible points of one system on (time, GPU-hours), reduced to their front: whether
// one is strictly faster than `time` and needs at most `gpu_hours`.
class Staircase {
 public:
  bool dominates(double time, double gpu_hours) const {
    // Sorted by time, GPU-hours strictly falling: the last point faster than `time` needs the
    // fewest GPU-hours of those.
    const auto it = std::lower_bound(points_.begin(), points_.end(), time,
                                     [](const Step& p, double t) { return p.first < t; });
    return it != points_.begin() && std::prev(it)->second <= gpu_hours;
  }
  void add(double time, double gpu_hours) {
    const auto after = std::upper_bound(points_.begin(), points_.end(), time,
                                        [](double t, const Step& p) { return t < p.first; });
    if (after != points_.begin() && std::prev(after)->second <= gpu_hours) return;
    auto first = std::lower_bound(points_.begin(), points_.end(), time,
                                  [](const Step& p, double t) { return p.first < t; });
    auto last = first;
    while (last != points_.end() && last->second >= gpu_hours) ++last;
    first = points_.erase(first, last);
    points_.insert(first, {time, gpu_hours});
  }

 private:
  using Step = std::pair<double, double>;
  std::vector<Step> points_;
};

// The position of `reason` in kPlanReasons.
std::size_t reason_index(const char* reason) {
  for (std::size_t i = 0; i < std::size(kPlanReasons); ++i) {
    if (std::string_view(kPlanReasons[i]) == reason) return i;
  }
  DDPSIM_ASSERT(false, "an unknown rejection reason");
  return 0;
}

// How a candidate was filed, to file a copy of it (another bucket cap) the same way.
struct Verdict {
  enum class Kind { kNone, kRejected, kFeasible, kFeasibleUnpredicted } kind = Kind::kNone;
  const char* reason = nullptr;  ///< kRejected
  bool predicted = false;        ///< from a full prediction (else from bounds)
  double over = 0;               ///< kRejected and predicted: how far past its limit
  PlanPoint point;               ///< predicted ones
};

// One system's search: its loops, the per-(GPU count, batch, accumulation) caches and the
// front of what was predicted.
class SystemSearcher {
 public:
  SystemSearcher(const SystemSearch& sys, std::size_t system_index, bool pruned, PlanResult& r,
                 SearchTally& tally)
      : sys_(sys),
        s_(*sys.scenario),
        pc_(s_.plan),
        predictor_(*sys.predictor),
        system_index_(system_index),
        pruned_(pruned),
        r_(r),
        sr_(r.systems[system_index]),
        tally_(tally),
        capacity_(predictor_.hardware().gpu.memory_bytes),
        // A PlanConfig built in code may leave these lists empty: the scenario's own then.
        strategies_(pc_.strategy.empty() ? std::vector<model::Strategy>{s_.parallelism.strategy}
                                         : pc_.strategy),
        checkpointing_(
            pc_.activation_checkpointing.empty()
                ? std::vector<model::ActivationCheckpointing>{s_.training.activation_checkpointing}
                : pc_.activation_checkpointing) {}

  void run();
  /// Adds the rejections counted by reason index (kPlanReasons) to the result's maps.
  void flush_counts();

 private:
  std::size_t slot(std::size_t hook, std::size_t strategy, std::size_t ac) const {
    return (hook * strategies_.size() + strategy) * checkpointing_.size() + ac;
  }
  Verdict judge(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                const model::ParallelismConfig& par, std::size_t hook, std::size_t strategy,
                std::size_t ac);
  Verdict predict_in_full(const model::ClusterConfig& cluster,
                          const model::TrainingConfig& training,
                          const model::ParallelismConfig& par, std::size_t hook);
  void validate_classes(const model::ClusterConfig& cluster, model::TrainingConfig training,
                        const model::ParallelismConfig& par, int k_max);
  void validate_class(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                      const model::ParallelismConfig& par);
  void file(const Verdict& v, std::size_t index, double bucket_cap_mb);

  std::size_t rejected_[std::size(kPlanReasons)] = {};  ///< by kPlanReasons index

  const SystemSearch& sys_;
  const model::Scenario& s_;
  const model::PlanConfig& pc_;
  const Predictor& predictor_;
  std::size_t system_index_;
  bool pruned_;
  PlanResult& r_;
  PlanSystemResult& sr_;
  SearchTally& tally_;
  double capacity_;
  std::vector<model::Strategy> strategies_;
  std::vector<model::ActivationCheckpointing> checkpointing_;
  Staircase front_;
  // Per (GPU count, batch, accumulation): the floor and memory per (strategy, checkpointing)
  // (neither reads the cap or a plain hook), and the verdicts at the first cap.
  // nullopt where the Predictor has no floor or no plan-free memory (predicted in full then).
  std::vector<std::optional<double>> floor_, memory_total_;
  std::vector<bool> floor_known_, memory_known_;
  std::vector<Verdict> first_cap_;
};

void SystemSearcher::run() {
  const std::size_t hooks = pc_.comm_hook.size(), n_s = strategies_.size(),
                    n_ac = checkpointing_.size();
  const int k_max = *std::max_element(pc_.grad_accumulation.begin(), pc_.grad_accumulation.end());
  for (const int gpus : pc_.gpus) {
    model::ClusterConfig cluster = s_.cluster;
    cluster.gpus = gpus;
    bool validated = false;
    for (const std::int64_t b : pc_.per_gpu_batch) {
      for (const int k : pc_.grad_accumulation) {
        model::TrainingConfig training = s_.training;
        training.per_gpu_batch = b;
        training.grad_accumulation = k;
        floor_.assign(n_s * n_ac, std::nullopt);
        floor_known_.assign(n_s * n_ac, false);
        memory_total_.assign(n_s * n_ac, std::nullopt);
        memory_known_.assign(n_s * n_ac, false);
        first_cap_.assign(hooks * n_s * n_ac, Verdict{});
        for (std::size_t ci = 0; ci < pc_.bucket_cap_mb.size(); ++ci) {
          const double cap = pc_.bucket_cap_mb[ci];
          for (std::size_t hi = 0; hi < hooks; ++hi) {
            for (std::size_t si = 0; si < n_s; ++si) {
              const model::Strategy strategy = strategies_[si];
              model::ParallelismConfig par = s_.parallelism;
              if (pc_.bucket_cap_given) {
                par.bucket_cap_mb = cap;
                par.bucket_cap_defaulted = false;
              }
              par.comm_hook = pc_.comm_hook[hi];
              par.strategy = strategy;
              if (const std::string why = not_a_candidate(strategy, gpus, cluster, par);
                  !why.empty()) {
                add_warning(r_.warnings, why);
                continue;
              }
              if (pruned_ && !validated) {
                validated = true;
                validate_classes(cluster, training, par, k_max);
              }
              for (std::size_t ai = 0; ai < n_ac; ++ai) {
                training.activation_checkpointing = checkpointing_[ai];
                ++r_.candidates;
                ++sr_.candidates;
                const std::size_t index = tally_.index++;
                Verdict& first = first_cap_[slot(hi, si, ai)];
                if (pruned_ && ci > 0 && first.kind != Verdict::Kind::kNone &&
                    !Predictor::reads_bucket_cap(strategy)) {
                  file(first, index, par.bucket_cap_mb);  // the prediction at the first cap
                  continue;
                }
                if (pruned_ && ci == 0) {
                  first = judge(cluster, training, par, hi, si, ai);
                  file(first, index, par.bucket_cap_mb);
                } else {
                  file(judge(cluster, training, par, hi, si, ai), index, par.bucket_cap_mb);
                }
              }
            }
          }
        }
      }
    }
  }
}

void SystemSearcher::validate_classes(const model::ClusterConfig& cluster,
                                      model::TrainingConfig training,
                                      const model::ParallelismConfig& par, int k_max) {
  // Every class of this GPU count (hook x strategy x checkpointing), once, at its largest
  // accumulation.
  training.grad_accumulation = k_max;
  for (const model::CommHook& hook : pc_.comm_hook) {
    for (const model::Strategy strategy : strategies_) {
      model::ParallelismConfig p = par;
      p.comm_hook = hook;
      p.strategy = strategy;
      if (!not_a_candidate(strategy, cluster.gpus, cluster, p).empty()) continue;
      for (const model::ActivationCheckpointing& ac : checkpointing_) {
        training.activation_checkpointing = ac;
        validate_class(cluster, training, p);
      }
    }
  }
}

void SystemSearcher::validate_class(const model::ClusterConfig& cluster,
                                    const model::TrainingConfig& training,
                                    const model::ParallelismConfig& par) {
  // What predict() refuses before it lays a plan out (the plan's own checks, then the layout's
  // bound on a sharded step); the layout itself refuses nothing.
  try {
    const StepPlan sp = predictor_.plan(cluster, training, par);
    if (model::is_sharded(sp.strategy)) check_sharded_layout(s_.file, sp);
  } catch (const InputError&) {
    throw NeedsFullSearch{};
  }
}

Verdict SystemSearcher::predict_in_full(const model::ClusterConfig& cluster,
                                        const model::TrainingConfig& training,
                                        const model::ParallelismConfig& par, std::size_t hook) {
  Prediction pred =
      predictor_.predict(cluster, training, par, s_.gpu_hour_usd, s_.simulation.jitter_cv);
  apply_goodput(s_.reliability, predictor_.workload(), cluster, training, par, s_.gpu_hour_usd,
                pred, s_.hardware.gpus_per_host);
  Verdict v;
  v.point = plan_point(pred, cluster.gpus, training, par, hook, s_.gpu_hour_usd, sys_.usable_bytes);
  v.predicted = true;
  if (const char* reason = rejection(pc_, v.point, pred, capacity_, v.over)) {
    v.kind = Verdict::Kind::kRejected;
    v.reason = reason;
  } else {
    v.kind = Verdict::Kind::kFeasible;
  }
  return v;
}

Verdict SystemSearcher::judge(const model::ClusterConfig& cluster,
                              const model::TrainingConfig& training,
                              const model::ParallelismConfig& par, std::size_t hook,
                              std::size_t strategy, std::size_t ac) {
  const double global_batch = static_cast<double>(training.per_gpu_batch) *
                              training.grad_accumulation * static_cast<double>(cluster.gpus);
  // Past 1e18 samples predict() refuses the point: let it say so.
  if (!pruned_ || global_batch > 1e18) return predict_in_full(cluster, training, par, hook);
  Verdict v;
  if (pc_.max_global_batch && global_batch > static_cast<double>(*pc_.max_global_batch)) {
    v.kind = Verdict::Kind::kRejected;
    v.reason = "global_batch";
    return v;
  }
  const std::size_t i = strategy * checkpointing_.size() + ac;
  if (!memory_known_[i]) {
    memory_known_[i] = true;
    if (const MemoryEstimate* m = predictor_.unplanned_memory(cluster, training, par)) {
      memory_total_[i] = m->total();
    }
  }
  if (!floor_known_[i]) {
    floor_known_[i] = true;
    floor_[i] = predictor_.step_time_floor_s(training, par);
  }
  if (!memory_total_[i] || !floor_[i]) return predict_in_full(cluster, training, par, hook);
  if (*memory_total_[i] > capacity_ * (1.0 - pc_.memory_margin)) {  // as fits()
    v.kind = Verdict::Kind::kRejected;
    v.reason = "memory";
    return v;
  }
  // The candidate's metrics at its floor (a hair below it: the floor and the layout add the same
  // times in other orders), as plan_point and add_training_target compute them.
  const double floor = *floor_[i] * (1.0 - 1e-9);
  const std::optional<double> steps = steps_to_target(s_.training, global_batch);
  const double time = steps ? *steps * floor : floor * 1e6 / global_batch;
  const double gpu_hours = time * cluster.gpus / 3600.0;
  const double price = s_.gpu_hour_usd.value_or(0.0);
  const bool limited = steps && (pc_.deadline_hours || pc_.budget_usd);
  if (steps && pc_.deadline_hours && time > *pc_.deadline_hours * 3600.0) {
    v.kind = Verdict::Kind::kRejected;
    v.reason = "deadline";
    return v;
  }
  if (steps && !pc_.deadline_hours && pc_.budget_usd && s_.gpu_hour_usd &&
      gpu_hours * price > *pc_.budget_usd) {
    v.kind = Verdict::Kind::kRejected;
    v.reason = "budget";
    return v;
  }
  // A predicted point of its system is strictly faster and needs no more GPU-hours even at this
  // one's floor: it is on no front and no best. Without limits it is feasible; with them, its
  // exact step (computed as predict() does) says which limit, if any, it breaks.
  if (!front_.dominates(time, gpu_hours)) return predict_in_full(cluster, training, par, hook);
  if (limited) {
    const double t_exact =
        *steps * predictor_.step_time_s(cluster, training, par, s_.simulation.jitter_cv);
    // As add_training_target and rejection(): time, then GPU-hours, then cost.
    if (pc_.deadline_hours && t_exact > *pc_.deadline_hours * 3600.0) {
      v.kind = Verdict::Kind::kRejected;
      v.reason = "deadline";
      return v;
    }
    if (pc_.budget_usd && s_.gpu_hour_usd &&
        t_exact * cluster.gpus / 3600.0 * price > *pc_.budget_usd) {
      v.kind = Verdict::Kind::kRejected;
      v.reason = "budget";
      return v;
    }
  }
  v.kind = Verdict::Kind::kFeasibleUnpredicted;
  return v;
}

void SystemSearcher::flush_counts() {
  for (std::size_t i = 0; i < std::size(kPlanReasons); ++i) {
    r_.rejected[kPlanReasons[i]] += rejected_[i];
    sr_.rejected[kPlanReasons[i]] += rejected_[i];
    rejected_[i] = 0;
  }
}

void SystemSearcher::file(const Verdict& v, std::size_t index, double bucket_cap_mb) {
  if (!v.predicted) ++tally_.judged_from_bounds;
  switch (v.kind) {
    case Verdict::Kind::kRejected: {
      ++rejected_[reason_index(v.reason)];
      if (!v.predicted) return;
      if (!tally_.nearest || v.over < tally_.nearest_over) {
        PlanPoint p = v.point;
        p.index = index;
        p.system = system_index_;
        p.system_label = sys_.label;
        p.bucket_cap_mb = bucket_cap_mb;
        tally_.nearest = std::move(p);
        tally_.nearest_reason = v.reason;
        tally_.nearest_over = v.over;
      }
      return;
    }
    case Verdict::Kind::kFeasibleUnpredicted:
      ++sr_.feasible;
      ++tally_.feasible_unpredicted;
      return;
    case Verdict::Kind::kFeasible: {
      ++sr_.feasible;
      PlanPoint p = v.point;
      p.index = index;
      p.system = system_index_;
      p.system_label = sys_.label;
      p.bucket_cap_mb = bucket_cap_mb;
      front_.add(p.time_metric(), p.gpu_hours_metric());
      tally_.offer(p);
      return;
    }
    case Verdict::Kind::kNone:
      DDPSIM_ASSERT(false, "a candidate filed without a verdict");
  }
}

}  // namespace

void search_system(const SystemSearch& sys, std::size_t system_index, bool pruned, PlanResult& r,
                   SearchTally& tally) {
  SystemSearcher searcher(sys, system_index, pruned, r, tally);
  searcher.run();
  searcher.flush_counts();
}

}  // namespace ddpsim::sim::detail
