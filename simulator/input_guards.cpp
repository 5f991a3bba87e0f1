#include "simulator/input_guards.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "model/error.hpp"

namespace ddpsim::sim {

void check_has_work(const std::string& file, const model::Scenario& s) {
  const model::Workload& w = *s.workload;
  if (w.param_count() == 0 && !(w.fwd_flops_per_sample() > 0)) {
    throw InputError(file, "/model",
                     "a model with parameters or FLOPs (a step with neither has no duration)",
                     "0 parameters and 0 FLOPs per sample");
  }
}

void check_event_bounds(const std::string& file, const model::Scenario& point, const StepPlan& plan,
                        double analytic_step_s, double* sweep_work) {
  const model::SimulationConfig& sim = point.simulation;
  const std::string where =
      point.point.empty() ? std::string() : " at sweep point " + point.point.dump();
  const double steps = static_cast<double>(sim.steps);
  if (!(analytic_step_s >= 1e-9)) {
    throw InputError(file, "/model",
                     "a step of at least 1 ns for the event engine (its clock counts whole "
                     "nanoseconds; use --engine analytic)" +
                         where,
                     fmt::format("a step of {:.3g} s", analytic_step_s));
  }
  const double room = (1 + std::max(0.0, sim.straggler_slowdown)) * (1 + 1000 * sim.jitter_cv);
  const double span_s = analytic_step_s * steps * room;
  if (!(span_s <= 9e9)) {
    throw InputError(
        file, "/simulation/steps",
        "simulated time the event engine's int64-nanosecond clock can hold: steps x step time "
        "(x " +
            fmt::format("{:.3g}", room) +
            " for jitter and straggler) below 9e9 s; lower simulation.steps or use --engine "
            "analytic" +
            where,
        fmt::format("{} steps x {:.3g} s", sim.steps, analytic_step_s));
  }
  const bool straggler = sim.straggler_rank >= 0 && sim.straggler_rank < point.cluster.gpus &&
                         sim.straggler_slowdown > 0;
  const double ranks = sim.jitter_cv == 0 && !straggler ? 1.0 : point.cluster.gpus;
  const double ops = static_cast<double>(point.training.grad_accumulation) *
                         (2.0 * static_cast<double>(plan.layer_fwd_s.size()) + 1) +
                     static_cast<double>(plan.buckets.size() + plan.schedule.size()) + 4;
  const double work = steps * ranks * ops;
  if (!(work <= kEventWorkLimit)) {
    throw InputError(
        file, "/simulation/steps",
        fmt::format("an event simulation of at most {:.0e} rank-operations (simulation.steps x "
                    "ranks simulated x operations per step; all cluster.gpus ranks are simulated "
                    "with jitter or a straggler, else one); lower simulation.steps, cluster.gpus, "
                    "training.grad_accumulation or jitter_cv, or use --engine analytic{}",
                    kEventWorkLimit, where),
        fmt::format("{} steps x {:.0f} ranks x {:.0f} operations = {:.3g}", sim.steps, ranks, ops,
                    work));
  }
  if (sweep_work != nullptr) {
    *sweep_work += work;
    if (*sweep_work > kEventWorkLimit) {
      throw InputError(file, "/sweep",
                       fmt::format("an event simulation of at most {:.0e} rank-operations over "
                                   "all sweep points; sweep fewer points, lower simulation.steps "
                                   "or use --engine analytic",
                                   kEventWorkLimit),
                       fmt::format("{:.3g} by{}", *sweep_work, where));
    }
  }
  const double records = steps * point.cluster.gpus;
  if (!(records <= kEventRecordLimit)) {
    throw InputError(
        file, "/simulation/steps",
        fmt::format("at most {:.0e} per-rank step records (simulation.steps x "
                    "cluster.gpus, 8 bytes each); lower simulation.steps or use "
                    "--engine analytic{}",
                    kEventRecordLimit, where),
        fmt::format("{} steps x {} GPUs = {:.3g}", sim.steps, point.cluster.gpus, records));
  }
}

}  // namespace ddpsim::sim
