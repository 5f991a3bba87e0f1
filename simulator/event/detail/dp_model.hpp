// detail/dp_model.hpp: the event engine's model of DDP: per-rank compute and communication streams,
// buckets gated on their ready layer (dp_model.cpp). Not part of the public API: simulate_event
// (simulator/event/simulate.hpp) picks the model.
#pragma once

#include "simulator/event/simulate.hpp"

namespace ddpsim::sim::event_detail {

/// Simulates opts.steps steps of `plan` with this model (through run_model,
/// detail/model_common.hpp).
EventResult run_dp(const StepPlan& plan, const EventOptions& opts);

}  // namespace ddpsim::sim::event_detail
