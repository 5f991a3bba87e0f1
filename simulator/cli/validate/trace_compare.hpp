// trace_compare.hpp: `ddpsim validate SCENARIO --trace rank0.pt.trace.json.gz [--trace ...]`:
// a scenario's prediction against the PyTorch profiler traces of the job it describes, with no
// run of ours (the measurement is the user's).
//
// Each trace is imported (model/kineto_import.hpp: per-step means over its ProfilerSteps) and
// the ranks are averaged: step, forward, backward and optimizer (the phases of GPU kernel time,
// or of CPU op time on a CPU trace), summed and exposed communication (model/trace_comm.hpp).
// Every sweep point of the scenario is predicted by both engines and compared row by row
// (report.hpp's rows: predicted - measured, relative errors); the DDP buckets are compared as
// sizes: the predicted buckets' bytes against the traced all-reduces of the first step of the
// first trace, in launch order. The scenario is the user's: nothing is drafted from the trace
// and the measured times do not replace the model's (the simulator does not read imported
// layer times yet).
//
// Output: the table on stdout and, with --out, a JSON document {context, traces[{file, steps,
// world_size, measured{...}}], points[{point, gpus, rows[], buckets{predicted_bytes,
// measured_bytes}}]}.
#pragma once

#include <string>
#include <vector>

namespace ddpsim::validate {

/// Runs the comparison; returns the exit code (0). Bad input throws InputError (exit 2).
int run_trace_comparison(const std::string& scenario, const std::vector<std::string>& traces,
                         const std::string& out);

}  // namespace ddpsim::validate
