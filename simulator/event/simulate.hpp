// event/simulate.hpp: data-parallel (DDP, ZeRO, FSDP) training on the discrete-event engine
// (simulator/event/engine.hpp).
//
// Input: the StepPlan of Predictor::plan (simulator/analytic/analytic.hpp), so both engines cost
// every piece identically and differ only in how they schedule it. Every rank has a compute stream
// and a communication stream:
//  - compute: per micro-batch, forward layer by layer then backward layer by layer in reverse;
//    each layer takes nominal x (1 + straggler_slowdown on the straggler rank) x a jitter
//    sample; the optimizer (same factors) runs after the rank's own backward and after every
//    collective of the step has ended; the rank's next step starts when its optimizer ends.
//  - communication: the buffer broadcast (when the plan has one) before every forward is a
//    collective of all ranks (ranks wait for the last one); in the last micro-batch each DDP
//    bucket becomes ready on a rank when its ready_layer's backward ends there (with
//    overlap=false: when the rank's whole backward ends), and its all-reduce starts on all
//    ranks once the LAST rank has it ready and the previous collective has ended; it lasts
//    PlannedBucket::duration_s(). find_unused_parameters' local_used_map all-reduce follows
//    the buckets. With include_first_iteration, step 1 reduces one bucket of every gradient
//    after the backward (plan.first_iteration_allreduce_s), as DDP's first iteration does.
// Sharded strategies (plan.strategy != ddp; StepPlan::schedule, simulator/analytic/sharded.hpp) run
// a second model with the same ranks, streams, jitter and straggler rules: per rank the compute ops
// of the step in order (per micro-batch the forward layers, then the backward layers in reverse;
// then the optimizer), op g starting once op g-1 has ended on that rank and every collective
// blocking g (expand_schedule's `block`) has ended; the collectives (every micro-batch's, then the
// post-optimizer ones) launch FIFO on the communication stream once every rank has arrived at their
// gate op and the previous one has ended; a rank's step ends when its optimizer and the collectives
// blocking the step end have ended. EventResult::buckets then lists every collective of the last
// step, exposed_comm_s is the slowest rank's step time minus its own compute, and the trace shows
// each collective by its ScheduledCollective::name. Without jitter it reproduces sharded_timeline
// (the analytic layout) to within 1 ns per event. Relaxed synchronisation (DDP plans; a third
// model, selected by local_sgd_period > 1 or staleness > 0; the convergence penalty of both is NOT
// modelled: see target_steps_multiplier):
//  - local SGD, period H (Lin et al. 2020, "Don't Use Large Mini-Batches, Use Local SGD", ICLR):
//    steps without a sync run forward, backward and optimizer with no collective at all; on
//    every H-th step (steps H-1, 2H-1, ... 0-based) the ranks average their parameters after the
//    optimizer (PyTorch's PeriodicModelAverager): one all-reduce that starts when the last rank's
//    optimizer ends and lasts the sum of the plan's bucket durations (DDP buckets hold every
//    gradient, i.e. as many elements as the parameters, in the same wire dtype); the step ends
//    on every rank when it ends. Buffer broadcasts stay a collective before every forward.
//    No jitter: mean step time over H steps = compute x (1 + slowdown) + allreduce / H.
//  - stale-synchronous parallel, staleness s (Ho et al. 2013, "More Effective Distributed ML
//    via a Stale Synchronous Parallel Parameter Server", NIPS): after its backward a rank sends
//    its gradients on its own communication stream (FIFO, same duration as above: the
//    parameter-server push/pull moves the same bytes) and runs its optimizer at once; it may
//    start step k only when every rank's exchange of step k-s-1 has ended, so the fastest rank
//    is at most s steps ahead of the slowest. No buffer broadcast (the ranks read the server's
//    state). step_time_s[k] = the last rank's end of step k minus that of step k-1.
// Link contention (simulation.network "flow"): before any model runs, every collective's
// closed-form time is multiplied by the slowdown its flows meet on the cluster graph against the
// competing traffic (other jobs in lockstep, background traffic; simulator/event/contention.hpp),
// and each bucket reports it as contention_slowdown. Without competing traffic the slowdown is 1
// and the run is the closed-form one exactly. Contention: DDP plans share the machine between
// compute and collectives by processor sharing (ddp_timeline.hpp, the analytic timeline's rule
// too): a compute kernel (one layer's forward or backward, or the optimizer; not the Reducer's
// copies) runs the largest compute_slowdown of the collectives in flight slower
// (StepPlan::interference unless a bucket has its own), each collective runs at collective_rate
// (its collective_slowdown while any rank computes, the pair rate while StepPlan::comm_lanes let
// two run at once); when a rate changes the work done is settled and the end rescheduled. Sharded
// plans slow a kernel for as long as their stream stays busy after it starts (interfered_s) and
// relaxed plans one that starts while a collective is in flight by the whole factor; their
// collectives are not slowed. Jitter: one std::mt19937_64 per rank seeded from (seed, rank), so a
// rank's samples do not depend on the rank count or the event order; the same options give
// bit-identical results (with the same standard library). Each layer duration is rounded to integer
// nanoseconds, so with jitter 0 the step time equals the analytic one within 1 ns per event on the
// path. Symmetric runs (no jitter, no straggler) simulate one rank, which stands for all of them
// (the collectives are costed for plan.gpus ranks), so their cost does not grow with the ranks.
// Cost: O(1) work per event, events ~ steps x ranks x (2 x layers x k + 1); a 1,024-rank,
// 5-step gpt2-xl run takes tens of milliseconds. Memory: O(steps x ranks) for compute_end_s,
// plus the timeline when record_timeline is set.
//
//   StepPlan plan = Predictor(scenario).plan(scenario.cluster, scenario.training,
//                                            scenario.parallelism);
//   EventOptions o;
//   o.steps = 5;
//   o.jitter_cv = 0.05;
//   EventResult r = simulate_event(plan, o);   // r.mean_step_time_s, r.buckets, r.timeline
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "model/units.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/event/contention.hpp"
#include "simulator/event/engine.hpp"

namespace ddpsim::sim {

struct EventOptions {
  int steps = 1;         ///< >= 1
  double jitter_cv = 0;  ///< per-rank, per-layer compute noise (coefficient of variation), >= 0
  model::JitterDistribution jitter_distribution = model::JitterDistribution::kNormal;
  std::uint64_t seed = 1;
  int straggler_rank = -1;               ///< -1 or out of range: no straggler
  double straggler_slowdown = 0;         ///< >= 0; 0.10 = that rank's compute is 10% slower
  bool include_first_iteration = false;  ///< step 1 runs DDP's single-bucket first iteration
  bool record_timeline = false;          ///< fill EventResult::timeline (for --trace)
  /// With record_timeline: keep ranks [0, timeline_max_ranks) plus the slowest rank of the last
  /// step; 0 keeps every rank.
  int timeline_max_ranks = 64;
  EngineObserver* observer = nullptr;  ///< not owned; gets on_progress once per finished step
  /// Local SGD (Lin et al. 2020), DDP plans only: > 1 averages the parameters every
  /// local_sgd_period steps (see "Relaxed synchronisation" above); 1 = synchronous DDP.
  int local_sgd_period = 1;
  /// Stale-synchronous parallel (Ho et al. 2013), DDP plans only: > 0 lets a rank start step k
  /// once every rank's gradient exchange of step k - staleness - 1 has ended; 0 = synchronous.
  int staleness = 0;
  /// training.target.steps_multiplier: with local_sgd_period > 1 or staleness > 0,
  /// apply_event_result scales the time to train by it; without it that time is dropped.
  std::optional<double> target_steps_multiplier;
  /// simulation.network "flow": every collective's closed-form time is stretched by the link
  /// contention its flows meet on the cluster graph (simulator/event/contention.hpp), against
  /// `contention`'s competing traffic; needs `hardware` (not owned, outlives the call).
  bool network_flow = false;
  ContentionOptions contention;
  const model::HardwareSpec* hardware = nullptr;
};

enum class Stream { kCompute = 1, kComm = 2 };  ///< the Chrome-trace tid of each stream

/// One busy interval of one stream of one rank.
struct Span {
  int rank = 0;
  Stream stream = Stream::kCompute;
  int step = 0;             ///< 0-based
  std::string name;         ///< "fwd h.3", "bwd h.3", "optimizer", "allreduce bucket 2", ...
  std::string layer;        ///< the layer's name for compute spans, else empty
  std::int64_t bytes = -1;  ///< bytes on the wire for collectives, else -1
  SimTime start{0};         ///< from the start of the simulation
  SimTime end{0};
};

struct EventResult {
  int ranks = 1;
  std::vector<double> step_time_s;  ///< per step: end of its last optimizer - end of the previous
  /// [step][rank]: when the rank's backward of that step ended, seconds from the step's start
  /// (the previous step's end).
  std::vector<std::vector<double>> compute_end_s;
  /// The last step's DDP buckets, or every collective of a sharded step (times from its
  /// start): ready = max over ranks, start, end.
  std::vector<BucketTiming> buckets;
  double mean_step_time_s = 0;
  double p50_step_time_s = 0;  ///< nearest-rank percentiles over the steps: with fewer than
  double p99_step_time_s = 0;  ///< 100 steps, p99 is the slowest step
  double p95_step_time_s = 0;  ///< (p95 likewise with fewer than 20)
  // The last step, seen from its slowest rank (latest backward end):
  int slowest_rank = 0;
  double forward_time_s = 0;   ///< all micro-batches, incl. buffer broadcasts
  double backward_time_s = 0;  ///< all micro-batches
  double optimizer_time_s = 0;
  double comm_time_s = 0;  ///< sum of the step's gradient collectives' durations
  /// DDP: last collective's end - latest backward end (>= 0); sharded: the slowest rank's
  /// last step minus its forward, backward and optimizer compute.
  double exposed_comm_s = 0;
  std::uint64_t events_processed = 0;
  SimTime end_time{0};         ///< end of the simulation
  std::vector<Span> timeline;  ///< only with EventOptions::record_timeline
  /// With EventOptions::network_flow: what contention did (buckets carry contention_slowdown).
  std::optional<ContentionSummary> contention;
};

/// Simulates opts.steps steps of `plan`. Preconditions (DDPSIM_ASSERT): steps >= 1,
/// jitter_cv >= 0, straggler_slowdown >= 0, plan.gpus >= 1, layer vectors of equal size.
EventResult simulate_event(const StepPlan& plan, const EventOptions& opts);

/// Replaces the timing keys of an analytic Prediction (step time = mean over steps; p50/p99
/// and the interval when steps > 1 or jitter > 0; forward/backward/optimizer/comm/exposed and
/// buckets of the last step) and rescales what derives from the step time (throughput,
/// scaling efficiencies, time to train, GPU-hours, cost). Adds a warning naming the engine, and
/// one naming `plan`'s interference when the calibration profile measured it.
void apply_event_result(Prediction& p, const EventResult& r, const EventOptions& opts,
                        const StepPlan& plan);

}  // namespace ddpsim::sim
