// planner.hpp: `ddpsim plan`, the best cluster size and knobs under memory, deadline and budget,
// and the Pareto front of time versus GPU-hours.
//
// Candidates are the Cartesian product of scenario.plan's lists (gpus x per_gpu_batch x
// grad_accumulation x bucket_cap_mb x comm_hook x strategy x activation_checkpointing), in that
// nesting order (activation checkpointing fastest); fsdp_hybrid is no candidate where gpus_per_node
// does not divide the GPU count (a warning says so). Each is judged with ONE analytic Predictor
// per system, predicted in full or, where its answer cannot depend on its exact step time, from
// bounds (simulator/plan_search.hpp: the same result), then rejected for the FIRST reason that
// applies, in this order:
//   "global_batch"  per_gpu_batch x grad_accumulation x gpus > plan.max_global_batch
//   "reliability"   with a "reliability" section, ETTR 0: the job would not finish
//   "memory"        memory per GPU > (1 - plan.memory_margin) x GPU memory
//   "deadline"      time to train > plan.deadline_hours
//   "budget"        cost to train > plan.budget_usd
// so every rejected candidate is counted once. Cluster shapes (above gpus_per_node and not a
// multiple of it) are rejected earlier, by the scenario parser (InputError at /plan/gpus/i).
//
// Metrics. With training.target.critical_batch (McCandlish et al. 2018), steps to target
// S = S_min (1 + B_noise / B) for the global batch B, time to train T = S x step time and
// GPU-hours = T x N / 3600: the planner trades time against GPU-hours. Without a target it plans
// by throughput over a fixed amount of work, one million samples: time per 1M samples
// (step x 1e6 / B for the global batch B) and GPU-hours per 1M samples (that x N / 3600), and says
// so in a warning; a deadline_hours or budget_usd without a target is an InputError naming
// /training/target (they bound the time to train, which needs steps to target). With a
// "reliability" section every time (and so GPU-hours and cost) is the failure-free one / ETTR
// (simulator/prediction/goodput.hpp): failures and checkpoints, whose cost grows with the node
// count, can make a smaller cluster the better one.
//
// Pareto front over the feasible points on (time, GPU-hours): a point is on it unless another is
// at least as good in both and strictly better in one. Points equal in both keep the first in
// the order (time, GPU-hours, gpus, global batch, enumeration index), which is also the order
// of the front. The chosen point minimises the objective (time, cost or GPU-hours; cost orders
// like GPU-hours, as one price applies to all), then the other front metric (so it is always on
// the front), then fewer GPUs, then a smaller global batch, then enumeration order.
// Every front point then gets what limits it and the sensitivity of its step time to each
// hardware figure (PlanPoint::sensitivity_pct, limited_by): four more Predictors on the scenario
// with one figure improved by 10%, each predicting only the front.
//
//   PlanResult r = make_plan(scenario);   // or make_plan(scenario, predictor)
//   nlohmann::json doc = plan_json(scenario, r);
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/prediction/uncertainty.hpp"

namespace ddpsim::sim {

/// One evaluated candidate.
struct PlanPoint {
  std::size_t index = 0;  ///< position in the enumeration (deterministic tie-break)
  /// Which system of plan.hardware (0 and the scenario's hardware without one).
  std::size_t system = 0;
  std::string system_label;            ///< the preset's name (or the hardware's name)
  std::optional<double> gpu_hour_usd;  ///< that system's price
  int gpus = 1;
  int nodes = 1;
  std::int64_t per_gpu_batch = 1;
  int grad_accumulation = 1;
  double bucket_cap_mb = 25;
  std::string comm_hook = "none";
  model::Strategy strategy = model::Strategy::kDdp;
  model::ActivationCheckpointing activation_checkpointing;
  std::int64_t global_batch = 1;
  std::optional<double> lr;
  double step_time_s = 0;
  double throughput_samples_per_s = 0;
  std::optional<double> steps_to_target;
  std::optional<double> time_to_train_s;
  std::optional<double> gpu_hours;
  std::optional<double> cost_usd;
  /// With a "reliability" section: the effective training time ratio, and the three above and
  /// the per-million-samples time below include failures and checkpoints (time / ETTR).
  std::optional<double> ettr;
  /// Without a target, the work is one million samples (issue 19 item 3: per step, 1 GPU always
  /// "won", as a step of one GPU processes N times fewer samples):
  double time_per_million_samples_s = 0;     ///< step_time_s x 1e6 / global_batch
  double gpu_hours_per_million_samples = 0;  ///< that x gpus / 3600
  double memory_per_gpu_bytes = 0;
  /// (1 - plan.memory_margin) x GPU memory - memory_per_gpu_bytes: what is left (>= 0 when it
  /// fits).
  double memory_headroom_bytes = 0;
  double mfu = 0;                   ///< model FLOPs utilisation (prediction.hpp mfu)
  double tokens_per_s_per_gpu = 0;  ///< samples/s x seq_len / gpus (samples/s for non-sequence)
  /// With a price: what one million samples (tokens) cost, ETTR included. Per token only for
  /// sequence models.
  std::optional<double> cost_per_million_samples;
  std::optional<double> cost_per_million_tokens;
  /// The error band of this point's class (front points, system bests, the chosen and the
  /// nearest point; simulator/prediction/uncertainty.hpp).
  std::optional<Uncertainty> uncertainty;
  std::size_t hook_index = 0;  ///< position of comm_hook in plan.comm_hook (to re-predict)
  /// Front points only (make_plan fills them after the choice): the relative change of step time,
  /// in percent (negative = faster), when one hardware figure improves by 10% while everything
  /// else stays: "network_bandwidth" (every link's bandwidth x 1.1), "network_latency" (every
  /// link's and algorithm's latency x 0.9), "gpu_flops" (peak x 1.1), "hbm_bandwidth" (x 1.1).
  std::map<std::string, double> sensitivity_pct;
  /// What limits the point, the first that applies: "statistical efficiency" (global batch at
  /// or above B_noise: steps cannot fall below S_min, E = E_min (1 + B/B_noise) samples), "memory"
  /// (over 90% of the usable memory: no larger micro-batch fits), else the hardware figure with
  /// the largest sensitivity ("compute", "memory bandwidth", "network bandwidth", "latency").
  std::string limited_by;
  /// The two metrics the front is built on: time to train and GPU-hours with a target, else
  /// time and GPU-hours per million samples.
  double time_metric() const {
    return time_to_train_s ? *time_to_train_s : time_per_million_samples_s;
  }
  double gpu_hours_metric() const { return gpu_hours ? *gpu_hours : gpu_hours_per_million_samples; }
  /// GPU-hours at this system's price (0 without one): cost to train, or per million samples.
  double cost_metric() const { return gpu_hours_metric() * gpu_hour_usd.value_or(0.0); }
};

/// One system of the search (plan.hardware, or the scenario's hardware): its best option under
/// the objective and the constraints, and what was rejected.
struct PlanSystemResult {
  std::string label;     ///< preset or hardware name
  std::string hardware;  ///< HardwareSpec::name ("DGX H100")
  std::string gpu;       ///< the GPU's name
  std::optional<double> gpu_hour_usd;
  std::vector<int> gpus;  ///< the cluster sizes searched
  std::size_t candidates = 0;
  std::size_t feasible = 0;
  std::map<std::string, std::size_t> rejected;
  std::optional<PlanPoint> best;  ///< by the plan's objective among this system's feasible points
  /// best's objective metric differs from the chosen point's by less than the larger median
  /// |error| of their two classes: the model cannot tell them apart (false for the chosen one).
  bool within_band_of_chosen = false;
};

struct PlanResult {
  std::size_t candidates = 0;
  std::size_t feasible = 0;
  /// Rejected candidates per reason ("global_batch", "memory", "deadline", "budget",
  /// "reliability"); every
  /// reason is present, 0 when none.
  std::map<std::string, std::size_t> rejected;
  std::size_t dominated = 0;  ///< feasible but beaten on both metrics by a front point
  /// Candidates predicted in full; the others were judged from bounds (PlanSearch::kPruned).
  std::size_t predicted = 0;
  bool by_throughput = false;     ///< no training.target: metrics are per million samples
  std::vector<PlanPoint> pareto;  ///< by increasing time (then GPU-hours)
  std::optional<PlanPoint> chosen;
  std::vector<std::string> warnings;  ///< deduplicated, in order of first appearance
  /// One line saying why nothing is feasible (counts per reason); empty when something is.
  std::string none_feasible_reason;
  /// When nothing is feasible: the rejected candidate closest to its limit (the smallest ratio of
  /// what it needs to what the limit allows), and that in words.
  std::optional<PlanPoint> nearest;
  std::string nearest_reason;
  /// Every system searched, in plan.hardware's order (one: the scenario's own hardware).
  std::vector<PlanSystemResult> systems;
  /// The second front metric and the choice compare cost (every system has a price) or else
  /// GPU-hours (one price for all, or none).
  bool by_cost = false;
};

/// How make_plan searches. kPruned judges a candidate from bounds where the answer cannot depend
/// on its exact step time, and reuses a sharded candidate's prediction across bucket caps
/// (simulator/plan_search.hpp): the same PlanResult, field for field. kEveryCandidate predicts
/// each candidate in full: what the pruned search is tested against.
enum class PlanSearch { kPruned, kEveryCandidate };

/// Plans `s` (its base point: a sweep is ignored, with a warning) with `predictor`, which must
/// have been built for s's workload and hardware.
PlanResult make_plan(const model::Scenario& s, const Predictor& predictor,
                     PlanSearch search = PlanSearch::kPruned);
/// Same, with a Predictor built here.
PlanResult make_plan(const model::Scenario& s, PlanSearch search = PlanSearch::kPruned);

/// `s` with one hardware figure 10% better: "gpu_flops" (every peak, and the measured fused
/// attention rates), "hbm_bandwidth", "network_bandwidth" (every link) or "network_latency"
/// (every link's and collective tuning's latency x 0.9). What sensitivity_pct predicts on.
model::Scenario with_improved_figure(const model::Scenario& s, const std::string& figure);

/// {"context", "scenario", "plan": {"candidates", "feasible", "rejected", "objective", "mode",
/// "constraints", "pareto": [...], "chosen", "warnings", "none_feasible_reason"}}; check_finite.
nlohmann::json plan_json(const model::Scenario& s, const PlanResult& r);

/// The Pareto front as a fixed-width table, the chosen row marked with '*', then counts.
std::string plan_table(const model::Scenario& s, const PlanResult& r);

/// CSV, one row per system's best option ("role" best, or chosen for the chosen one), then one
/// per front point ("front"), then the nearest rejected option ("nearest") when nothing is
/// feasible: system, price, knobs, step time, time and cost (to the target or per million
/// samples), cost per million tokens, tokens/s/GPU, MFU, memory and headroom, and the error
/// band (median and max |error|, rows).
std::string plan_csv(const PlanResult& r);

}  // namespace ddpsim::sim
