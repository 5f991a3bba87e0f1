#include "simulator/event/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "model/error.hpp"
#include "simulator/event/contention.hpp"
#include "simulator/event/detail/dp_model.hpp"
#include "simulator/event/detail/relaxed_model.hpp"
#include "simulator/event/detail/sharded_model.hpp"

namespace ddpsim::sim {

EventResult simulate_event(const StepPlan& plan, const EventOptions& opts) {
  if (opts.network_flow) {
    DDPSIM_ASSERT(opts.hardware != nullptr, "network flow without the hardware");
    ContentionModel cm(*opts.hardware, plan.gpus, opts.contention);
    ContentionSummary sum;
    const StepPlan slowed = apply_contention(plan, cm, &sum);
    EventOptions o = opts;
    o.network_flow = false;
    EventResult r = simulate_event(slowed, o);
    r.contention = sum;
    return r;
  }
  if (opts.local_sgd_period > 1 || opts.staleness > 0) return event_detail::run_relaxed(plan, opts);
  return model::is_sharded(plan.strategy) ? event_detail::run_sharded(plan, opts)
                                          : event_detail::run_dp(plan, opts);
}

void apply_event_result(Prediction& p, const EventResult& r, const EventOptions& opts,
                        const StepPlan& plan) {
  DDPSIM_ASSERT(r.mean_step_time_s > 0, "an event result without a step time");
  const double analytic_step = p.step_time_s;
  p.step_time_s = r.mean_step_time_s;
  if (opts.steps > 1 || opts.jitter_cv > 0) {
    p.p50_step_time_s = r.p50_step_time_s;
    p.p99_step_time_s = r.p99_step_time_s;
    p.p95_step_time_s = r.p95_step_time_s;
  } else {
    p.p50_step_time_s.reset();
    p.p99_step_time_s.reset();
    p.p95_step_time_s.reset();
  }
  p.forward_time_s = r.forward_time_s;
  p.backward_time_s = r.backward_time_s;
  p.optimizer_time_s = r.optimizer_time_s;
  p.comm_time_s = r.comm_time_s;
  p.exposed_comm_s = r.exposed_comm_s;
  p.buckets = r.buckets;
  // The input pipeline holds the event engine's steps as it held the analytic ones.
  apply_input_floor(plan.input_floor_s, p);
  const double ratio = analytic_step / p.step_time_s;  // analytic / event
  // Everything below is (something fixed) / step time or x step time.
  p.throughput_samples_per_s = static_cast<double>(p.global_batch) / p.step_time_s;
  p.weak_scaling_efficiency *= ratio;
  p.strong_scaling_efficiency *= ratio;
  if (p.time_to_train_s) *p.time_to_train_s /= ratio;
  if (p.gpu_hours) *p.gpu_hours /= ratio;
  if (p.cost_usd) *p.cost_usd /= ratio;
  std::string w = "engine event: step timings from the event-driven simulator (" +
                  std::to_string(opts.steps) + " steps, " + std::to_string(r.ranks) + " ranks, " +
                  std::to_string(r.events_processed) +
                  " events); memory, lr and first_step_time_s from the analytic model";
  p.warnings.push_back(std::move(w));
  if (plan.interference_source == "profile") {
    // The JSON says where the factor came from: a warning line, and a note in "measured".
    const std::string note = fmt::format(
        "interference {} (compute slowdown while a collective runs) measured by the "
        "calibration profile",
        plan.interference);
    // The analytic prediction this one starts from may have said it already (DDP).
    if (std::find(p.warnings.begin(), p.warnings.end(), note) == p.warnings.end()) {
      p.warnings.push_back(note);
    }
    if (p.measured && std::find(p.measured->notes.begin(), p.measured->notes.end(), note) ==
                          p.measured->notes.end()) {
      p.measured->notes.push_back(note);
    }
  }
  if (r.contention) {
    p.contention = r.contention;
    const ContentionSummary& c = *r.contention;
    p.warnings.push_back(fmt::format(
        "network flow: {} of {} collectives slowed by link contention (at most x{:.3f}; "
        "background_traffic {}, concurrent_jobs {}): communication {:.6g} s per step instead of "
        "{:.6g} s",
        c.collectives_slowed, c.collectives, c.max_slowdown, c.background_traffic,
        c.concurrent_jobs, c.comm_time_s, c.comm_time_uncontended_s));
  }
  if (opts.local_sgd_period > 1 || opts.staleness > 0) {
    // The step time is simulated; how many more steps the relaxed synchronisation needs to
    // reach the same quality is not (Lin et al. 2020 and Ho et al. 2013 measure it per task).
    const std::string mode =
        opts.local_sgd_period > 1
            ? "local SGD (period " + std::to_string(opts.local_sgd_period) + ")"
            : "stale-synchronous (staleness " + std::to_string(opts.staleness) + ")";
    if (opts.target_steps_multiplier) {
      const double m = *opts.target_steps_multiplier;
      if (p.time_to_train_s) *p.time_to_train_s *= m;
      if (p.gpu_hours) *p.gpu_hours *= m;
      if (p.cost_usd) *p.cost_usd *= m;
      p.warnings.push_back(mode + ": time to train uses training.target.steps_multiplier " +
                           fmt::format("{}", m) + " (user-given)");
    } else {
      p.time_to_train_s.reset();
      p.gpu_hours.reset();
      p.cost_usd.reset();
      p.warnings.push_back(mode +
                           ": step time only; its convergence penalty is not modelled "
                           "(give training.target.steps_multiplier for a time to train)");
    }
    if (opts.local_sgd_period > 1 && opts.steps % opts.local_sgd_period != 0) {
      p.warnings.push_back(
          "simulation.steps is not a multiple of local_sgd_period: the mean "
          "step time over-weights steps without the parameter average");
    }
  }
}

}  // namespace ddpsim::sim
