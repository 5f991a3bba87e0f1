// trace_comm.hpp: the collectives of a PyTorch profiler trace, per profiled step.
//
// Collectives are the GPU kernels NCCL launches (names starting "nccl": ncclKernel_AllReduce_*,
// ncclDevKernel_*) and, on CPU ranks, the "gloo:*" annotations Gloo's worker threads record.
// The op comes from the "Collective name" argument (PyTorch >= 2.1 puts it on NCCL kernels and
// on the record_param_comms op that launches them), else from the kernel or annotation name;
// the size in bytes is "In msg nelems" (else the first Input Dims) times the size of "dtype"
// (else the first Input type), looked up on the kernel and then on its launching op and that
// op's ancestors. The world size is distributedInfo's, else the "Group size" argument.
//
// Per step (kineto_links.hpp's steps): each collective's op, bytes, start and end (seconds from
// the step's start, in launch order), communication time (the sum of the collectives'
// durations) and exposed communication: the time at least one collective runs while no
// compute runs, i.e. the length of (union of collective intervals) minus (union of compute
// intervals). Compute is every other GPU kernel, memcpy and memset of the step on a GPU trace;
// on a CPU trace, the outermost CPU ops of the threads that run no collective. The section:
//   {"backend", "world_size", "rank", "steps", "collectives_per_step", "comm_s", "exposed_s",
//    "ops": {OP: {"count", "bytes"}} per step, "per_step": [{"step", "comm_s", "exposed_s",
//    "collectives": [{"op", "bytes", "dtype", "start_s", "end_s"}]}]}
// Times are means over the steps; "dtype" is the element type as the trace names it ("Float",
// "BFloat16"); no "bytes" or "dtype" where the trace gives no size or type, no world_size
// or rank where it does not say.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "model/imports/detail/kineto_links.hpp"
#include "model/imports/kineto_events.hpp"

namespace ddpsim::model {

/// Whether an event is a collective's own timing: an NCCL kernel or a gloo:* annotation.
bool is_collective_event(const KinetoTrace& t, const TraceEvent& e);

/// The communication section, or nullopt when the trace holds no collective.
std::optional<nlohmann::json> trace_communication(const KinetoTrace& t,
                                                  const detail::TraceLinks& links);

}  // namespace ddpsim::model
