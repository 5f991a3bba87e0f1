// kineto_import.hpp: a PyTorch profiler (Kineto) trace turned into a profile section.
//
// PyTorch profiler (Kineto) Chrome-trace JSON of one training step -> a "layer_times" section.
// The attribution rule (documented in calibrate/README.md):
//   1. Layer regions are "user_annotation" events (torch.profiler.record_function, e.g. one
//      per module) and "python_function" events named "nn.Module: X" (with_modules=True),
//      except ProfilerStep#N and Optimizer.* annotations; an op belongs to the innermost
//      region on its thread that contains it in time.
//   2. A forward op with a "Sequence number" in a layer marks that number as the layer's; the
//      backward op "autograd::engine::evaluate_function: XBackward0" with the same number (run
//      on the autograd thread) and every op nested in it are that layer's backward.
//   3. With GPU kernels in the trace (cat kernel, gpu_memcpy, gpu_memset), a layer's time is the
//      sum of the durations of the kernels whose "External id" is that of one of its ops (or of
//      the runtime launch with the same "correlation"); without kernels it is the sum of its
//      outermost CPU ops' durations. Kernels of no layer (optimizer, DDP) are "unattributed".
//   step_s is the ProfilerStep#N span (else the whole trace's span).
// The section: "source", "device" (cpu | gpu), "rule" (the attribution used, in words),
// "step_s", "unattributed_s" and "layers" [{name, forward_s, backward_s, forward_events,
// backward_events}], times in seconds; imported_profile (measurement_import.hpp) wraps it in a
// whole profile.
//
//   nlohmann::json l = import_kineto_file("trace.json");                  // {"layers": [...]}
//   nlohmann::json profile = imported_profile(nullptr, l, "ddpsim-calibrate import kineto ...");
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ddpsim::model {

/// Per-layer forward/backward times from a Kineto trace (see the rule above); `file` is named
/// in errors. Throws InputError when the document has no "traceEvents" array or no layer
/// region.
nlohmann::json import_kineto_trace(const nlohmann::json& trace, const std::string& file);
/// Reads `path` (strict JSON) and imports it.
nlohmann::json import_kineto_file(const std::string& path);

}  // namespace ddpsim::model
