// ddp_timeline.hpp: the analytic model's layout of a DDP step plan (StepPlan with buckets,
// step_plan.hpp), the closed-form counterpart of the event engine's DDP model: k - 1 micro-
// batches of forward and backward without sync, then the last backward layer by layer in
// reverse, each layer's gradients copied into their buckets as they are produced (on the compute
// stream), each bucket's collective launched in bucket order once its last gradient is in
// (with overlap; else all after the backward) and started when one of the communication
// stream's StepPlan::comm_lanes is free; finalize_backward copies every bucket back into .grad
// after its collective. sharded.hpp's sharded_timeline is the same for ZeRO / FSDP schedules.
//
// Contention, the one mechanism for compute and communication sharing a machine (a GPU's SMs
// and HBM with NCCL's kernels, a CPU's cores with gloo's threads): processor sharing. While
// collectives are in flight the backward computes at 1 / (the largest of their
// compute_slowdown) of its speed; while the backward computes each collective progresses at
// collective_rate (its collective_slowdown, and the pair rate when two are in flight). Between
// two events (a layer or a collective ending) every rate is constant, so the layout steps from
// event to event; with collective_slowdown 1 and one lane a layer takes
// interfered_s(work, busy, factor) as before. E.g. one layer of 10 ms and one bucket of 4 ms
// launched with it, both slowdowns 2: both at half speed until the bucket ends at 8 ms (4 ms
// of the layer done), the layer's last 6 ms alone: 14 ms.
//
//   DdpTimeline t = ddp_timeline(plan, 1.0, plan.buckets);
//   double step = t.sync_end() + plan.optimizer_s;
#pragma once

#include <algorithm>
#include <vector>

#include "simulator/analytic/step_plan.hpp"

namespace ddpsim::sim {

/// One DDP step laid out; times in seconds from the step's start.
struct DdpTimeline {
  std::vector<BucketTiming> buckets;
  double fwd_mb = 0, bwd_mb = 0, bwd_end = 0, comm_free = 0, comm_sum = 0;
  /// The Reducer's gradient copies on the compute stream: into the buckets during the last
  /// backward (inside bwd_end), and back into .grad in finalize_backward, which ends at
  /// finalize_end (>= bwd_end).
  double copy_in = 0, copy_out = 0, finalize_end = 0;
  /// Extra backward time of the last micro-batch from the contention (inside bwd_end).
  double slowed = 0;
  /// When the optimizer may start: every collective ended and every copy back done.
  double sync_end() const { return std::max(finalize_end, comm_free); }
  /// Time the compute stream idles waiting for communication (the exposed communication):
  /// sync_end = bwd_end + copy_out + exposed.
  double exposed() const { return std::max(0.0, sync_end() - bwd_end - copy_out); }
};

/// The DDP timeline of one step of `sp` when every rank's compute takes `f` times its nominal
/// time, with `buckets` as the collectives (sp.buckets, or sp.warmup_buckets for PowerSGD's
/// plain all-reduce phase).
DdpTimeline ddp_timeline(const StepPlan& sp, double f, const std::vector<PlannedBucket>& buckets);

}  // namespace ddpsim::sim
