// input_guards.hpp: checks in front of the engines (numeric safety). Inputs that are valid key
// by key but would make an engine produce NaN/inf, overflow its clock or run unbounded are
// refused as InputError (exit code 2) naming the key, before anything runs. The run API
// (simulator/run.hpp) makes them for every point it predicts.
//
//   check_has_work(s.file, s);
//   check_event_bounds(s.file, point, plan, analytic_step_s, &sweep_work);
#pragma once

#include <string>

#include "model/scenario/scenario.hpp"
#include "simulator/analytic/step_plan.hpp"

namespace ddpsim::sim {

/// A model with neither parameters nor FLOPs (every layer "params": 0, "fwd_flops_per_sample": 0)
/// has no step time: speed-ups and efficiencies would be 0/0. Throws InputError on /model.
void check_has_work(const std::string& file, const model::Scenario& s);

/// Limits of the event engine, checked per sweep point from the analytic step time and the plan:
///  - its clock counts int64 nanoseconds: the simulated span (steps x step time, with room for
///    jitter and a straggler) must stay below 9e9 s and a step must last at least 1 ns;
///  - work: simulation.steps x ranks simulated (cluster.gpus with jitter or a straggler, else 1)
///    x operations per step (micro-batches x (2 x layers + 1) + collectives) <= kEventWorkLimit;
///  - memory: simulation.steps x cluster.gpus per-rank step records <= kEventRecordLimit.
/// Throws InputError naming /simulation/steps (the knob that always helps) with the figures.
inline constexpr double kEventWorkLimit = 2e7;
/// `sweep_work` (optional) adds up the work over a sweep's points, held to the same limit.
inline constexpr double kEventRecordLimit = 6e7;
void check_event_bounds(const std::string& file, const model::Scenario& point, const StepPlan& plan,
                        double analytic_step_s, double* sweep_work = nullptr);

/// A recorded timeline (--trace, RunOptions::keep_timeline) holds every span of the ranks shown:
/// ~104 bytes each in memory and ~235 in the Chrome trace with its counter events (GPT-2 XL on
/// 1,024 DGX H100 GPUs, 65 ranks shown: 25,152 spans per step, 10 steps 58.8 MB; 2,000 steps
/// of an 8-GPU point wrote 1.5 GB, and the sweep's next points 3 and 6 GB). At most
/// kTimelineSpanLimit per point (~235 MB of trace) and kSweepTimelineSpanLimit over a sweep;
/// simulator/run.cpp counts a point's spans from one simulated step before any point runs.
inline constexpr double kTimelineSpanLimit = 1e6;
inline constexpr double kSweepTimelineSpanLimit = 5e6;

}  // namespace ddpsim::sim
