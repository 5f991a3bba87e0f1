// prediction.hpp: what a prediction of one data-parallel step holds (the result of both engines,
// simulator/analytic/analytic.hpp and simulator/event/simulate.hpp; report.hpp turns it into the
// JSON contract of docs/DESIGN.md). Times in seconds, sizes in bytes.
//
//   Prediction p = sim::predict_point(scenario);   // simulator/run.hpp
//   for (const BucketTiming& b : p.buckets) use(b.start_s, b.end_s);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/collective_op.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/prediction/goodput.hpp"
#include "simulator/prediction/memory.hpp"

namespace ddpsim::sim {

/// The part of the step a collective belongs to.
enum class CommPhase { kForward, kBackward, kOptimizer };
/// "forward", "backward", "optimizer".
const char* comm_phase_name(CommPhase p);

struct BucketTiming {
  std::int64_t bytes = 0;       ///< bytes on the wire
  std::int64_t grad_bytes = 0;  ///< bytes of the gradients in the bucket (bucket cap counts these)
  int tensors = 0;
  double ready_s = 0;  ///< from the start of the step
  double start_s = 0;
  double end_s = 0;
  double busbw_gbytes_per_s = 0;
  model::CollectiveAlgorithm algorithm = model::CollectiveAlgorithm::kRing;
  model::CollectiveProtocol protocol = model::CollectiveProtocol::kSimple;  ///< NCCL's protocol
  int channels = 1;  ///< channels the collective runs on
  model::CollectiveOp kind = model::CollectiveOp::kAllReduce;
  CommPhase phase = CommPhase::kBackward;
  /// NCCL calls it is made of: 1, or DeepSpeed ZeRO-1/2's one reduce per owning rank.
  int calls = 1;
  int layer = -1;        ///< the FSDP/ZeRO-3 unit (workload layer) it serves; -1 for buckets
  int micro_batch = -1;  ///< 0-based micro-batch of the step; -1 after the optimizer or DDP
  /// Event engine with simulation.network "flow" (simulator/event/contention.hpp): the factor link
  /// contention stretched the collective by (1 = not slowed); unset otherwise.
  std::optional<double> contention_slowdown;
};

/// What link contention did to one plan (simulation.network "flow", simulator/event/contention.hpp;
/// the result JSON's "contention").
struct ContentionSummary {
  double background_traffic = 0;
  int concurrent_jobs = 1;
  int collectives = 0;         ///< planned collectives (DDP buckets or schedule entries)
  int collectives_slowed = 0;  ///< of them, slowed by more than 0.1%
  double max_slowdown = 1;
  /// Per step (sharded: every micro-batch's collectives): sum of the collectives' durations
  /// without and with contention.
  double comm_time_uncontended_s = 0;
  double comm_time_s = 0;
};

/// Which numbers of a prediction came from the calibration profile.
struct MeasuredSources {
  std::string profile;     ///< the profile file
  int gemms_measured = 0;  ///< GEMMs of one micro-batch timed by the profile
  int gemms_total = 0;     ///< all GEMMs of one micro-batch
  /// "profile" (every collective looked up), "partial", "model", or "none" (one GPU)
  std::string collectives;
  int collectives_measured = 0;
  int collectives_total = 0;       ///< distinct collective sizes costed in the plan
  std::string optimizer;           ///< "profile_kernel" (adam_fp32), "profile_bandwidth" or "model"
  bool extrapolated = false;       ///< a lookup left the measured range (batch or size)
  std::vector<std::string> notes;  ///< why (deduplicated)
};

struct Prediction {
  int gpus = 1;
  int nodes = 1;
  std::int64_t per_gpu_batch = 1;
  std::int64_t global_batch = 1;
  int grad_accumulation = 1;
  model::Strategy strategy = model::Strategy::kDdp;
  double step_time_s = 0;
  double first_step_time_s = 0;  ///< iteration 1, which DDP runs with one single bucket
  double forward_time_s = 0;     ///< all micro-batches of the step, incl. buffer broadcasts
  double backward_time_s = 0;    ///< compute stream, all micro-batches (DDP: incl. the copies)
  /// DDP: the Reducer's gradient copies into the buckets and back into .grad (part of
  /// backward_time_s); 0 for sharded strategies and on one GPU.
  double grad_copy_time_s = 0;
  double optimizer_time_s = 0;
  double comm_time_s = 0;     ///< sum of the collectives' durations
  double exposed_comm_s = 0;  ///< time the compute stream waits for communication
  /// With jitter (simulation.jitter_cv > 0): median and 99th percentile of the step time.
  std::optional<double> p50_step_time_s;
  std::optional<double> p99_step_time_s;
  /// Event engine only (from its simulated steps): the 95th percentile.
  std::optional<double> p95_step_time_s;
  /// With a calibration profile: the step laid out at the low / high end of every measured
  /// interval (the profile's spread, not a distribution of the step).
  std::optional<double> step_time_low_s;
  std::optional<double> step_time_high_s;
  /// Set when the hardware carries a calibration profile.
  std::optional<MeasuredSources> measured;
  /// Event engine with simulation.network "flow" only.
  std::optional<ContentionSummary> contention;
  std::vector<BucketTiming> buckets;
  double throughput_samples_per_s = 0;
  double weak_scaling_efficiency = 1;
  double strong_scaling_efficiency = 1;
  MemoryEstimate memory;  ///< per GPU (simulator/prediction/memory.hpp)
  bool fits_in_memory = true;
  std::optional<double> lr;
  std::optional<double> steps_to_target;
  std::optional<double> time_to_train_s;
  std::optional<double> gpu_hours;
  std::optional<double> cost_usd;
  /// With a "reliability" section (simulator/prediction/goodput.hpp): ETTR, checkpoint and restart
  /// costs, and the time to train, GPU-hours and cost with failures (the fields above exclude
  /// them).
  std::optional<Goodput> goodput;
  double grad_bytes_total = 0;  ///< gradient bytes reduced per step
  /// Model FLOPs per GPU per step: every GEMM of the forward and backward at its model shape,
  /// attention dense (no causal halving), no recomputation: the FLOPs MFU counts (Megatron-LM,
  /// llm-foundry: 6N + 12 L h s per token for a transformer).
  double model_flops_per_step = 0;
  /// model_flops_per_step plus what activation checkpointing recomputes (one more forward of
  /// each checkpointed block): the FLOPs HFU counts.
  double hardware_flops_per_step = 0;
  double peak_flops_per_gpu = 0;       ///< dense peak in the compute dtype (MFU's denominator)
  std::int64_t tokens_per_sample = 1;  ///< sequence length (1 for non-sequence models)
  /// PowerSGD only: the step time while the hook still runs plain all-reduce (iterations before
  /// start_powerSGD_iter); step_time_s is the steady state after it.
  std::optional<double> warmup_step_time_s;
  std::vector<std::string> warnings;
};

/// What users compare against, from the step time of whichever engine filled `p`:
/// model TFLOP/s per GPU = model_flops_per_step / step_time_s / 1e12;
/// MFU = model FLOP/s per GPU / peak; HFU the same with hardware_flops_per_step;
/// tokens/s per GPU = samples/s x tokens_per_sample / gpus. 0 when the peak or step is unknown.
double model_tflops_per_gpu(const Prediction& p);
double mfu(const Prediction& p);
double hfu(const Prediction& p);
double tokens_per_s_per_gpu(const Prediction& p);

}  // namespace ddpsim::sim
