// detail/kineto_links.hpp: how the events of a Kineto trace hang together, computed once and
// shared by the layer attribution (kineto_import.cpp) and the communication analysis
// (trace_comm.cpp). Not part of the public API.
//
// - parent: per thread, events sorted by start (longer first on ties) nest like brackets; a
//   stack of open events gives each CPU event its innermost enclosing CPU event.
// - launcher: a GPU event (kernel, memcpy, memset) is launched by the runtime call with its
//   "correlation"; that call's enclosing op is found by nesting in time on its thread (what
//   Holistic Trace Analysis does), which works whatever the "External id"s say (in many traces
//   a kernel's External id is its correlation id, not an op's). Without such a runtime call, the
//   op whose External id the kernel names.
// - steps: the ProfilerStep#N spans, by start; without any, the whole trace as one step. A CPU
//   event belongs to the step its start falls in, a GPU event to its launcher's step (GPU work
//   may run after the CPU has left the step that launched it), else to the step its own start
//   falls in; -1 outside every step.
#pragma once

#include <string>
#include <vector>

#include "model/imports/kineto_events.hpp"

namespace ddpsim::model::detail {

struct StepWindow {
  std::string name;           ///< "ProfilerStep#N", or "whole trace"
  double begin = 0, end = 0;  ///< microseconds
};

struct TraceLinks {
  std::vector<int> parent;    ///< per event; -1 at the top of its thread or for GPU events
  std::vector<int> launcher;  ///< per GPU event; -1 when not linked (and for CPU events)
  std::vector<int> step;      ///< per event; index into steps, -1 outside every step
  std::vector<StepWindow> steps;
  bool profiler_steps = false;  ///< steps are ProfilerStep#N spans (else the whole trace)
  std::size_t by_correlation = 0, by_external_id = 0, unlinked = 0;  ///< GPU events
};

bool is_gpu(EventKind k);
bool is_cpu(EventKind k);

TraceLinks link_trace(const KinetoTrace& t);

}  // namespace ddpsim::model::detail
