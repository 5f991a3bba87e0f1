// detail/relaxed_model.hpp: the event engine's model of local SGD and stale-synchronous DDP
// (relaxed_model.cpp). Not part of the public API: simulate_event (simulator/event/simulate.hpp)
// picks the model.
#pragma once

#include "simulator/event/simulate.hpp"

namespace ddpsim::sim::event_detail {

/// Simulates opts.steps steps of `plan` with this model (through run_model,
/// detail/model_common.hpp).
EventResult run_relaxed(const StepPlan& plan, const EventOptions& opts);

}  // namespace ddpsim::sim::event_detail
