// trace_compare.hpp: `ddpsim validate SCENARIO --trace rank0.pt.trace.json.gz [--trace ...]`:
// a scenario's prediction against the PyTorch profiler traces of the job it describes, with no
// run of ours (the measurement is the user's).
//
// Each trace is imported (model/imports/kineto_import.hpp: per-step means over its ProfilerSteps)
// and the ranks are averaged (simulator/measured/trace_replay.hpp TracedJob): step, forward,
// backward and optimizer (the phases of GPU kernel time, or of CPU op time on a CPU trace), summed
// and exposed communication (model/imports/trace_comm.hpp). Every sweep point of the scenario is
// predicted by both engines and by the replay, and compared row by row (report.hpp's rows:
// predicted - measured, relative errors); the DDP buckets are compared as sizes: the predicted
// buckets' bytes against the traced all-reduces of the first step of the first trace, in launch
// order.
//
// The replay (column "replay", at the points with the traced world size, DDP only) is the
// analytic layout of the scenario's plan with the trace's measured costs in place of the
// model's, through the run API (RunOptions::measured; trace_replay.hpp measured_costs): traced
// forward and backward (per layer where every model layer is a traced module, else the whole
// model spread like the model's own per-layer estimate), traced optimizer, and each bucket's
// traced all-reduce duration (when the trace has one all-reduce per predicted bucket; else the
// model's collectives, with a note). Its exposed-communication error is also printed as a
// fraction of the traced step ("replay exposed comm ... % of the traced step").
//
// --extrapolate also predicts every sweep point (other cluster.gpus, bucket caps, networks) with
// the traced compute and optimizer in place and the collectives from the model (compute per
// sample does not change with N under DDP): a table after the comparison. The sweep must keep
// the model, per_gpu_batch, grad_accumulation and precision of the trace (else exit 2).
//
// Output: the tables on stdout, then "note:" lines (how the compute was mapped, points not
// replayed), and with --out a JSON document {context, traces[{file}], traced{...}, notes,
// points[{point, gpus, rows[], buckets{predicted_bytes, measured_bytes, measured_s},
// replay_exposed_error_of_step, extrapolated{...}}]}, written atomically.
#pragma once

#include <string>
#include <vector>

namespace ddpsim::validate {

/// Runs the comparison; returns the exit code (0). Bad input throws InputError (exit 2).
int run_trace_comparison(const std::string& scenario, const std::vector<std::string>& traces,
                         const std::string& out, bool extrapolate = false);

}  // namespace ddpsim::validate
