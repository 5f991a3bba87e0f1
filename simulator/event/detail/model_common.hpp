// detail/model_common.hpp: what the three event models share (not a public header; the contract
// is simulator/event/simulate.hpp). dp_model.cpp holds DpModel (DDP buckets), sharded_model.cpp
// ShardedModel (ZeRO / FSDP schedules), relaxed_model.cpp RelaxedModel (local SGD,
// stale-synchronous); simulate.cpp picks one (simulate_event) and applies its result
// (apply_event_result). Each model file exposes one run_* function (detail/<model>.hpp) that
// runs its model through run_model (the symmetric one-rank shortcut and the two-pass trace).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "model/error.hpp"
#include "simulator/event/simulate.hpp"

namespace ddpsim::sim::event_detail {

/// What every model reports the same way once its steps are simulated: each step's time (from
/// the previous step's end; the first from t = 0), per-rank compute ends relative to that step's
/// start, the mean and the nearest-rank p50/p95/p99, and the slowest rank's forward, backward and
/// optimizer times of the last step (`last_times`, per rank). Returns the start of the last step.
SimTime fill_step_statistics(EventResult& out, int ranks, const std::vector<int>& opt_done,
                             const std::vector<SimTime>& step_end,
                             const std::vector<std::vector<SimTime>>& compute_end,
                             const std::vector<std::array<double, 3>>& last_times);

struct RankState {
  std::mt19937_64 rng;
  // Per rank: the distribution caches the second value of each pair it generates.
  std::normal_distribution<double> normal{0.0, 1.0};
  double factor = 1;  ///< straggler slowdown
  int step = 0;
  int micro_batch = 0;
  int layer = 0;
  bool waiting_for_comm = false;
  SimTime bwd_end{0};
  double fwd_s = 0;  ///< this step's forward (incl. broadcasts), backward, optimizer
  double bwd_s = 0;
  double opt_s = 0;
};

// Without jitter and without a straggler every rank does the same thing at the same time, so
// one rank stands for all: the collectives' durations are already costed for plan.gpus ranks,
// and the per-rank results are copies. This makes the symmetric case O(events of one rank)
// instead of O(ranks x events).
inline bool symmetric(const StepPlan& plan, const EventOptions& o) {
  const bool straggler =
      o.straggler_rank >= 0 && o.straggler_rank < plan.gpus && o.straggler_slowdown > 0;
  return plan.gpus > 1 && o.jitter_cv == 0 && !straggler;
}

inline EventResult widen(EventResult one, const EventOptions& o, int ranks) {
  one.ranks = ranks;
  for (auto& v : one.compute_end_s) v.assign(static_cast<std::size_t>(ranks), v.at(0));
  if (o.record_timeline) {
    const int shown = o.timeline_max_ranks > 0 ? std::min(ranks, o.timeline_max_ranks) : ranks;
    std::vector<Span> all;
    all.reserve(one.timeline.size() * static_cast<std::size_t>(shown));
    for (int r = 0; r < shown; ++r) {
      for (Span sp : one.timeline) {
        sp.rank = r;
        all.push_back(sp);
      }
    }
    one.timeline = std::move(all);
  }
  return one;
}

/// The checks every model makes of its plan and options.
inline void check_plan(const StepPlan& plan, const EventOptions& o) {
  DDPSIM_ASSERT(o.steps >= 1, "at least one step");
  DDPSIM_ASSERT(o.jitter_cv >= 0 && o.straggler_slowdown >= 0, "negative jitter or slowdown");
  DDPSIM_ASSERT(plan.gpus >= 1, "at least one rank");
  DDPSIM_ASSERT(plan.layer_bwd_s.size() == plan.layer_fwd_s.size(), "layer times disagree");
}

/// One state per rank: rank r's generator seeded from (seed, r) alone (seed_seq mixes them, so
/// rank r's samples depend on nothing else), and the straggler's slowdown.
inline std::vector<RankState> seeded_ranks(const EventOptions& o, int n) {
  std::vector<RankState> ranks(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    std::seed_seq seq{static_cast<std::uint32_t>(o.seed), static_cast<std::uint32_t>(o.seed >> 32),
                      static_cast<std::uint32_t>(r)};
    ranks[static_cast<std::size_t>(r)].rng.seed(seq);
    if (r == o.straggler_rank) ranks[static_cast<std::size_t>(r)].factor += o.straggler_slowdown;
  }
  return ranks;
}

/// Per-kernel compute jitter, a factor of mean 1: normal with coefficient of variation cv
/// (clipped at 0.05 so that a rare draw below -1/cv cannot make a kernel take no time), or
/// log-normal with the same mean and cv (mu = -s^2/2, s^2 = ln(1 + cv^2)).
class Jitter {
 public:
  explicit Jitter(const EventOptions& o)
      : cv_(o.jitter_cv),
        log_normal_(o.jitter_distribution == model::JitterDistribution::kLogNormal) {
    if (log_normal_ && cv_ > 0) {
      const double s2 = std::log1p(cv_ * cv_);
      sigma_ = std::sqrt(s2);
      mu_ = -0.5 * s2;
    }
  }
  double operator()(RankState& rs) const {
    if (cv_ <= 0) return 1.0;
    const double z = rs.normal(rs.rng);
    return log_normal_ ? std::exp(mu_ + sigma_ * z) : std::max(0.05, 1.0 + cv_ * z);
  }

 private:
  double cv_;
  bool log_normal_;
  double mu_ = 0, sigma_ = 0;
};

template <class Model>
EventResult run_model(const StepPlan& plan, const EventOptions& opts) {
  DDPSIM_ASSERT(plan.interference >= 1.0, "interference factor below 1");
  if (symmetric(plan, opts)) {
    StepPlan one = plan;
    one.gpus = 1;
    EventOptions o1 = opts;
    o1.straggler_rank = -1;
    EventResult r = Model(one, o1).run();
    return widen(std::move(r), opts, plan.gpus);
  }
  if (opts.record_timeline && opts.timeline_max_ranks > 0 && plan.gpus > opts.timeline_max_ranks) {
    // The slowest rank is known only at the end: find it with a run that records nothing (runs
    // are deterministic, so the second one is identical), then record only the ranks kept.
    EventOptions quiet = opts;
    quiet.record_timeline = false;
    quiet.observer = nullptr;
    const int slowest = Model(plan, quiet).run().slowest_rank;
    return Model(plan, opts, slowest).run();
  }
  return Model(plan, opts).run();
}

}  // namespace ddpsim::sim::event_detail
