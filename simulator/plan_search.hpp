// plan_search.hpp: the planner's search over one system's candidates (planner.hpp states what
// a candidate is, the order of the rejections and the front): each candidate predicted and
// filed, or, where the plan allows it, judged from bounds without laying it out.
//
// The pruned search gives the same PlanResult as predicting every candidate (tests/simulator
// planner_pruning_test.cpp checks it field by field). A candidate is judged without a prediction
// only where the answer cannot depend on its exact step time:
//   - its memory (which needs no plan: Predictor::unplanned_memory) does not fit: "memory";
//   - its step-time floor (Predictor::step_time_floor_s: the nominal compute, never more than
//     the step) already puts its time to train past plan.deadline_hours: "deadline"; or, with no
//     deadline, its cost past plan.budget_usd: "budget";
//   - with neither a deadline nor a budget it is feasible, and a feasible point of its system
//     predicted in full is strictly faster and needs no more GPU-hours than its floor allows:
//     it is on no front and no system's best (planner.cpp choice_key), so it is only counted.
// A sharded candidate differs from the one with the first bucket cap only in a key it does not
// read (Predictor::reads_bucket_cap): that one's verdict is reused.
// Where the bounds do not apply (a reliability section: ETTR needs the step time; a profile or
// measured costs: no model floor; PowerSGD or top-k: their state needs a plan) the candidate is
// predicted in full. Before a class of candidates (GPU count, hook, strategy, checkpointing) is
// judged from bounds, its largest accumulation is predicted once: where it is refused (an
// InputError), the whole search is run candidate by candidate, so the same error names the same
// first candidate. When nothing is feasible the search is run again in full, for the nearest
// rejected option.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/planner.hpp"

namespace ddpsim::sim::detail {

/// Rejection reasons, in the order the reports list them (planner.hpp gives the order they are
/// checked in).
inline constexpr const char* kPlanReasons[] = {"global_batch", "memory", "deadline", "budget",
                                               "reliability"};

/// One system being searched: its scenario (hardware, price, cluster sizes) and Predictor.
struct SystemSearch {
  const model::Scenario* scenario = nullptr;
  const Predictor* predictor = nullptr;
  std::string label;
  double usable_bytes = 0;  ///< (1 - memory_margin) x GPU memory
};

/// The second front metric: cost where every system has a price, else GPU-hours.
double spend_metric(const PlanPoint& p, bool by_cost);
/// The order of the front and of ties: time, spend, fewer GPUs, smaller global batch,
/// enumeration order.
std::tuple<double, double, int, std::int64_t, std::size_t> front_key(const PlanPoint& p,
                                                                     bool by_cost);
/// The choice key: the objective's metric first, then the other front metric, then fewer GPUs,
/// a smaller global batch and enumeration order.
std::tuple<double, double, int, std::int64_t, std::size_t> choice_key(const model::PlanConfig& pc,
                                                                      const PlanPoint& p,
                                                                      bool by_cost);

/// What the search of every system adds to the result: the front and each system's best, kept
/// as feasible points arrive (no list of every feasible point), and the nearest rejected one.
struct SearchTally {
  SearchTally(const model::PlanConfig& plan, bool by_cost_metric, std::size_t systems)
      : pc(&plan), by_cost(by_cost_metric), best(systems) {}
  /// Files a feasible point predicted in full: onto the front unless a point before it in front
  /// order needs no more spend (then it is on no front: the relation is transitive), removing
  /// those it beats; and its system's best when its choice key is lower.
  void offer(const PlanPoint& p);

  const model::PlanConfig* pc;
  bool by_cost;
  std::vector<PlanPoint> front;                ///< in front order, spend strictly falling
  std::vector<std::optional<PlanPoint>> best;  ///< per system
  std::size_t feasible_predicted = 0;
  std::size_t feasible_unpredicted = 0;  ///< feasible, dominated, judged from their floor
  std::size_t judged_from_bounds = 0;    ///< candidates not predicted in full
  std::size_t index = 0;                 ///< the next candidate's enumeration index
  std::optional<PlanPoint> nearest;      ///< the rejected candidate closest to its limit
  std::string nearest_reason;
  double nearest_over = 0;
};

/// Appends `w` to `ws` unless it is there.
void add_warning(std::vector<std::string>& ws, const std::string& w);

/// Searches every candidate of system `system_index` into `r` (counts, warnings) and `tally`;
/// `pruned` judges candidates from bounds where it may (the file comment). Throws
/// NeedsFullSearch where a class of candidates is refused in a pruned search.
void search_system(const SystemSearch& sys, std::size_t system_index, bool pruned, PlanResult& r,
                   SearchTally& tally);

/// Thrown by a pruned search_system when a candidate class is refused: search in full instead.
struct NeedsFullSearch {};

/// Whether a plan of `s` may judge candidates from bounds (no reliability section).
bool may_prune(const model::Scenario& s);

}  // namespace ddpsim::sim::detail
