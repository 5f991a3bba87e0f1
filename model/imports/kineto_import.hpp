// kineto_import.hpp: a PyTorch profiler (Kineto) trace turned into a profile section.
//
// A trace as torch.profiler writes it (plain or gzip-compressed `.pt.trace.json.gz`, any
// Kineto version from torch 1.8; read in one streaming pass, kineto_events.hpp) -> a
// "layer_times" section of per-step layer times and the step's collectives. The rule
// (documented in calibrate/README.md):
//   1. Steps are the ProfilerStep#N spans; with several, every time is the mean per step and
//      "steps" says how many (without any, the whole trace is one step). Work outside every
//      step (warm-up, the profiler's own start and stop) is left out.
//   2. Layer regions are "user_annotation" events (torch.profiler.record_function, e.g. one per
//      module) and "python_function" events named "nn.Module: X" (with_modules=True). Not
//      layers, and reported under "excluded" with their kind, count and time per step:
//      ProfilerStep#N, Optimizer.* (optimizer), nccl:*/gloo:*/c10d::* (communication),
//      DistributedDataParallel.* and nn.Module: DistributedDataParallel (DDP wrapper), anything
//      naming DataLoader (data loader), "## ... ##" and "[param|...]" (benchmark harnesses).
//      An op belongs to the innermost region on its thread that contains it in time.
//   3. A forward op with a "Sequence number" in a layer marks that number as the layer's; the
//      backward op "autograd::engine::evaluate_function: XBackward0" with the same number (run
//      on the autograd thread) and every op nested in it are that layer's backward.
//   4. With GPU events in the trace (kernels, memcpy, memset), a layer's time is the sum of the
//      durations of the GPU events launched in it: by the runtime call with the kernel's
//      correlation id, whose enclosing op is found by nesting in time on its thread, else by
//      the op with the kernel's External id (detail/kineto_links.hpp). NCCL kernels are
//      communication, never a layer's (trace_comm.hpp). Without GPU events a layer's time is
//      the sum of its outermost CPU ops' durations.
//   5. No layer region inside the steps: one layer "model" (whole_model true) whose forward is
//      every op outside the backward, the optimizer, data loading and communication.
// The legacy autograd profiler's format (a bare JSON array without categories or arguments: a
// torch build without Kineto, e.g. Debian's python3-torch) is imported with its regions told by
// name (ProfilerStep#N, gloo:* / nccl:*, DistributedDataParallel.*, Optimizer.*; everything else
// an op), so the whole model is one layer and collectives have no size; "format" says so.
// Refused (InputError, exit code 2, one line naming the file and what was found): a document
// without traceEvents, an empty trace, a GPU trace with runtime calls but no kernel events
// (recorded without ProfilerActivity.CUDA), and a trace with no forward/backward work inside its
// steps (e.g. a CPU-only rank that recorded only gloo:* annotations). Nothing is imported as zeros.
//
// The section: "source", "device" (cpu | gpu), "rule", "steps", "step_s" (the mean step: the
// longer of "cpu_step_s", the mean ProfilerStep span, and "gpu_step_s", the span of the steps'
// GPU work over their count: a GPU-bound job's CPU runs ahead), "step_min_s", "step_max_s",
// "unattributed_s", "phases" {forward_s, backward_s, optimizer_s, data_loader_s,
// communication_launch_s}, "linkage" (GPU: how many GPU events linked by correlation, by External
// id, not at all), "excluded" [{name, kind, count, per_step_s}], "layers" [{name, forward_s,
// backward_s, forward_events, backward_events}], "whole_model", "warnings", and "communication"
// (trace_comm.hpp) when the trace has collectives; times in seconds per step. imported_profile
// (measurement_import.hpp) wraps it in a whole profile.
//
//   nlohmann::json l = import_kineto_file("rank0.pt.trace.json.gz");     // {"layers": [...]}
//   nlohmann::json profile = imported_profile(nullptr, l, "ddpsim-calibrate import kineto ...");
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/imports/kineto_events.hpp"

namespace ddpsim::model {

/// The section from events already read; `file` is named in errors (see the refusals above).
nlohmann::json import_kineto_trace(const KinetoTrace& trace, const std::string& file);
/// The same from a document in memory (tests, small traces).
nlohmann::json import_kineto_trace(const nlohmann::json& trace, const std::string& file);
/// Reads `path` (a regular file, gzip by magic bytes; streaming) and imports it.
nlohmann::json import_kineto_file(const std::string& path);

}  // namespace ddpsim::model
