// sharded_layout.hpp: how both engines lay out a sharded strategy's schedule
// (StepPlan::schedule, planned by sharded.hpp): every micro-batch's collectives in launch order
// (expand_schedule, which the event engine runs), the analytic layout of the step
// (sharded_timeline), and the bound on what one step may lay out (check_sharded_layout).
//
// Ops are numbered across the step: micro-batch m's op j is m x 2L + j; 2Lk is the optimizer;
// 2Lk + 1 is the end of the step. A collective launches once every rank has arrived at its gate
// op, in FIFO order per communicator, and the op it blocks waits for its end; compute that
// overlaps a busy communication stream runs StepPlan::interference times slower (interfered_s).
//
//   ShardedTimeline t = sharded_timeline(sp, 1.0);                // analytic layout
//   for (const ScheduleInstance& i : expand_schedule(sp)) { ... }  // event engine
#pragma once

#include <string>
#include <vector>

#include "simulator/analytic/step_plan.hpp"

namespace ddpsim::sim {

/// Communicators a schedule may use (ScheduledCollective::stream: 0, 1, 2).
inline constexpr int kCommStreams = 3;

/// One collective of the step as both engines lay it out. Ops are numbered across the step:
/// micro-batch m's op j is m x 2L + j; 2Lk is the optimizer; 2Lk + 1 is the end of the step.
struct ScheduleInstance {
  int index = 0;         ///< into StepPlan::schedule
  int micro_batch = -1;  ///< -1 for kAfterOptimizer
  int gate = 0;          ///< launch once every rank has arrived at this op
  int block = 0;         ///< this op waits for its end
  int stream = 0;        ///< ScheduledCollective::stream
  int after = -1;        ///< index into the instances of the one that must end first; -1: none
};
/// The step's collectives in launch order (gates non-decreasing, block >= gate; each stream
/// FIFO in this order; `after` points to an earlier instance).
std::vector<ScheduleInstance> expand_schedule(const StepPlan& sp);

/// The analytic layout of a sharded step with compute times scaled by `compute_factor`.
struct ShardedTimeline {
  std::vector<BucketTiming> collectives;  ///< every instance, FIFO order, times from step start
  double forward_s = 0;                   ///< compute only, all micro-batches
  double backward_s = 0;
  double optimizer_s = 0;
  double backward_end_s = 0;  ///< end of the last micro-batch's backward
  double step_s = 0;
  double comm_sum_s = 0;
  double exposed_comm_s() const { return step_s - forward_s - backward_s - optimizer_s; }
};
ShardedTimeline sharded_timeline(const StepPlan& sp, double compute_factor = 1.0);

/// What one step lays out (both engines): every micro-batch's collectives (expand_schedule) and
/// its compute slots. Both are held in memory and the collectives are reported one by one, so
/// they are bounded before anything is laid out: at most kMaxStepCollectives collective
/// launches (GPT-2 XL under ZeRO-3 launches ~146 per micro-batch: grad_accumulation up to
/// ~3,400) and kMaxStepComputeSlots compute slots (micro-batches x (2 x layers + 1)). Beyond,
/// an InputError on /training/grad_accumulation names the figures (a ZeRO-3 step of 1e6
/// micro-batches was an uncaught std::bad_alloc).
inline constexpr double kMaxStepCollectives = 5e5;
inline constexpr double kMaxStepComputeSlots = 2e7;
void check_sharded_layout(const std::string& file, const StepPlan& sp);

}  // namespace ddpsim::sim
