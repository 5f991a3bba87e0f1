// analytic.hpp: the closed-form data-parallel step model (microseconds per configuration).
//
// One step with gradient accumulation k = (k-1) x (forward + backward without sync)
//   + forward + backward, during which DDP buckets (model/bucketing.hpp) are all-reduced on one
//   communication stream in bucket order, each as soon as its last gradient is ready and the
//   previous bucket has been launched (overlap), or all after the backward (overlap=false)
//   + the exposed tail of communication + the optimizer step (a memory-bound pass).
// Sharded strategies (ZeRO-1/2/3, FSDP) are planned by simulator/sharded.hpp into
// StepPlan::schedule and laid out by sharded_timeline(): gated collectives on one FIFO stream,
// compute ops that wait for the all-gathers they need. training.activation_checkpointing adds
// each transformer block's forward to its backward (recomputation), for every strategy.
// Compute: every GEMM at its real shape, roofline max(FLOPs / (peak x efficiency), bytes /
// (HBM x efficiency)); element-wise ops memory-bound; or a measured single_gpu_step_s split
// across layers by FLOPs. Collectives: simulator/collective.hpp on bandwidths derived from the
// cluster graph (model/cluster.hpp).
// With a calibration profile (HardwareSpec::profile, model/profile.hpp) the measured numbers
// replace the model's where the profile has them: every GEMM whose family it timed
// (Profile::gemm_time_s at the GEMM's shape, dtype and micro-batch; the others stay on the
// roofline of the profile's best GEMM rate), every collective whose op it swept at the
// scenario's rank count (Profile::collective_time_s at nccl-tests' size; another rank count
// keeps the alpha-beta model, with a warning), and the optimizer from the measured Adam kernel
// (else from the measured memory bandwidth). Prediction::measured says which came from where;
// Prediction::step_time_low_s/high_s lay the same step out on the low and high ends of every
// measured interval (p10/p90 GEMMs, min/max collectives and kernels).
//
//   Predictor p(scenario);                 // caches buckets, per-batch layer times, topologies
//   Prediction r = p.predict(scenario.cluster, scenario.training, scenario.parallelism);
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "model/bucketing.hpp"
#include "model/cluster.hpp"
#include "model/profile.hpp"
#include "model/scenario.hpp"
#include "simulator/collective.hpp"
#include "simulator/memory.hpp"

namespace ddpsim::sim {

/// The collective a planned communication runs (nccl-tests' names; kReduce is DeepSpeed's
/// per-owner dist.reduce of a bucket slice).
enum class CommKind { kAllReduce, kReduceScatter, kAllGather, kReduce };
/// "all_reduce", "reduce_scatter", "all_gather", "reduce".
const char* comm_kind_name(CommKind k);
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
  CommKind kind = CommKind::kAllReduce;
  CommPhase phase = CommPhase::kBackward;
  /// NCCL calls it is made of: 1, or DeepSpeed ZeRO-1/2's one reduce per owning rank.
  int calls = 1;
  int layer = -1;        ///< the FSDP/ZeRO-3 unit (workload layer) it serves; -1 for buckets
  int micro_batch = -1;  ///< 0-based micro-batch of the step; -1 after the optimizer or DDP
  /// Event engine with simulation.network "flow" (simulator/contention.hpp): the factor link
  /// contention stretched the collective by (1 = not slowed); unset otherwise.
  std::optional<double> contention_slowdown;
};

/// What link contention did to one plan (simulation.network "flow", simulator/contention.hpp;
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
  MemoryEstimate memory;  ///< per GPU (simulator/memory.hpp)
  bool fits_in_memory = true;
  std::optional<double> lr;
  std::optional<double> steps_to_target;
  std::optional<double> time_to_train_s;
  std::optional<double> gpu_hours;
  std::optional<double> cost_usd;
  double grad_bytes_total = 0;      ///< gradient bytes reduced per step
  double model_flops_per_step = 0;  ///< forward+backward FLOPs per GPU per step
  /// PowerSGD only: the step time while the hook still runs plain all-reduce (iterations before
  /// start_powerSGD_iter); step_time_s is the steady state after it.
  std::optional<double> warmup_step_time_s;
  std::vector<std::string> warnings;
};

/// One bucket as planned: its collective cost, how long it occupies the communication stream,
/// and the layer whose backward makes it ready.
struct PlannedBucket {
  BucketTiming cost;        ///< bytes (all collectives), grad_bytes, tensors, algorithm, busbw
  double collective_s = 0;  ///< the collective(s) alone (PowerSGD: the sum of its three)
  /// Compression-hook compute around the collectives (fp16/bf16 casts, PowerSGD's GEMMs,
  /// orthogonalisation and error feedback, top-k selection and scatter-add); 0 without a hook.
  double overhead_s = 0;
  int ready_layer = 0;  ///< ready when this layer's backward finishes
  /// PyTorch's Reducer::finalize_backward copies the reduced bucket back into the parameters'
  /// .grad (copy_bucket_to_grad: read + write of the bucket's gradient bytes at memory
  /// bandwidth) on the compute stream, after waiting for this bucket's collective and after the
  /// previous bucket's copy. 0 with gradient_as_bucket_view (the gradients are the bucket) and
  /// on one GPU.
  double copy_out_s = 0;
  double duration_s() const { return collective_s + overhead_s; }
};

/// PowerSGD's state as PyTorch's powerSGD_hook.PowerSGDState defaults it (ecosystem.md 1.4):
/// matrix_approximation_rank is the scenario's r, the rest are the defaults.
inline constexpr double kPowerSgdMinCompressionRate = 2;  ///< min_compression_rate
inline constexpr int kPowerSgdStartIter = 1000;           ///< start_powerSGD_iter

/// One bucket as powerSGD_hook splits it (torch/distributed/algorithms/ddp_comm_hooks/
/// powerSGD_hook.py): every gradient is viewed as tensor.view(shape[0], -1), an n x m matrix
/// (1-D tensors: never compressed); with r' = min(n, m, r) it is compressed iff
/// (n + m) * r' * min_compression_rate < n * m (_should_compress).
struct PowerSgdMatrix {
  std::int64_t n = 0, m = 0;
  int rank = 0;  ///< r' = min(n, m, r)
};
struct PowerSgdBucket {
  std::int64_t elements = 0;               ///< the whole bucket (error feedback covers it all)
  std::int64_t uncompressed_elements = 0;  ///< all-reduce (1): the uncompressed tensors, together
  std::int64_t p_elements = 0;             ///< all-reduce (2): sum of n * r' over compressed
  std::int64_t q_elements = 0;             ///< all-reduce (3): sum of m * r'
  std::vector<PowerSgdMatrix> compressed;
};
/// The exact PyTorch rule _should_compress(n, m, r', min_compression_rate).
bool powersgd_compresses(std::int64_t n, std::int64_t m, int rank,
                         double min_compression_rate = kPowerSgdMinCompressionRate);
PowerSgdBucket powersgd_bucket(const model::Workload& w, const model::Bucket& b, int rank);

/// top-k with fraction F: k = ceil(F * elements) per bucket and rank (at least 1).
std::int64_t topk_count(std::int64_t elements, double fraction);
/// Index bytes per selected element: torch.topk returns int64 indices (torch.return_types.topk
/// (values, indices), indices a LongTensor), which PyTorch-style top-k hooks all-gather as is.
inline constexpr int kTopKIndexBytes = 8;
/// The all-gather's total size (nccl-tests' S for AllGather): every rank contributes k values
/// and k indices, S = ranks * k * (value_bytes + 8).
inline double topk_gather_bytes(int ranks, std::int64_t k, int value_bytes) {
  return static_cast<double>(ranks) * static_cast<double>(k) * (value_bytes + kTopKIndexBytes);
}

/// Time on a GPU's roofline: max(FLOPs / (peak x efficiency), bytes / (HBM x efficiency)).
struct Roofline {
  double flops_per_s = 0;
  double bytes_per_s = 0;
  double time_s(double flops, double bytes) const {
    const double c = flops_per_s > 0 ? flops / flops_per_s : 0.0;
    return c > bytes / bytes_per_s ? c : bytes / bytes_per_s;
  }
};

/// When a collective of a sharded schedule (StepPlan::schedule) occurs in a step.
enum class CommScope {
  kEveryMicroBatch,  ///< in each of the k micro-batches (ZeRO-2/3, FSDP)
  kLastMicroBatch,   ///< in the last micro-batch only (ZeRO-1: at the accumulation boundary)
  kAfterOptimizer,   ///< once, after the optimizer step; the step ends when it ends
};

/// Compute operations of one micro-batch are numbered 0 .. 2L-1 for L layers: forward of layer
/// l is op l, backward of layer l is op 2L-1-l; op 2L stands for "after this micro-batch's
/// backward" (the next micro-batch's first forward, or the optimizer). "Arriving" at op j means
/// op j-1 has finished on that rank (op 0: the micro-batch has begun).
inline int forward_op(int layer) { return layer; }
inline int backward_op(int layer, int layers) { return 2 * layers - 1 - layer; }
inline int micro_batch_end_op(int layers) { return 2 * layers; }

/// One collective of a sharded strategy's step, as both engines schedule it: it launches on the
/// single communication stream (FIFO, in StepPlan::schedule order, micro-batch by micro-batch)
/// once every rank has arrived at `gate_op` and the previous collective has ended; compute op
/// `block_op` cannot start on a rank before it has ended. kAfterOptimizer collectives ignore
/// both: they launch after the optimizer and the step ends when they end.
struct ScheduledCollective {
  BucketTiming cost;        ///< bytes, grad_bytes, tensors, kind, phase, calls, layer, busbw
  double collective_s = 0;  ///< the collective(s) alone
  double overhead_s = 0;    ///< cast kernels of an fp16/bf16 reduce dtype, 0 otherwise
  CommScope scope = CommScope::kEveryMicroBatch;
  int gate_op = 0;   ///< [0, 2L]
  int block_op = 0;  ///< [gate_op, 2L]; 2L = before the next micro-batch / the optimizer
  std::string name;  ///< "all_gather fwd h.3", "reduce_scatter bucket 2", ...
  double duration_s() const { return collective_s + overhead_s; }
};

/// Everything one data-parallel step is made of before any timeline is laid out: the input of
/// the analytic timeline (Predictor::predict) and of the event-driven simulator, so that the two
/// engines cost every piece identically and differ only in how they schedule it.
struct StepPlan {
  int gpus = 1;
  int grad_accumulation = 1;
  bool overlap = true;
  model::CollectiveBandwidths bandwidths;
  std::vector<double> layer_fwd_s;  ///< per layer, one micro-batch, nominal (no jitter)
  std::vector<double> layer_bwd_s;
  /// DDP only, per layer: the Reducer's copy of the layer's gradients into their buckets as
  /// autograd produces them (mark_variable_ready_dense: at::mul_out(bucket_view, grad, 1/N),
  /// read + write of the gradient bytes at memory bandwidth; with gradient_as_bucket_view the
  /// in-place bucket_view.div_(N) instead, the same bytes; nothing with a view and a comm hook).
  /// On the compute stream, in the backward of the last micro-batch only (no_sync micro-batches
  /// accumulate into .grad without the Reducer). Empty on one GPU and for sharded strategies.
  std::vector<double> layer_grad_copy_s;
  /// The workload the plan was made for (layer names for traces).
  std::shared_ptr<const model::Workload> workload;
  double buffer_broadcast_s = 0;  ///< broadcast_buffers, before every forward
  double optimizer_s = 0;
  std::vector<PlannedBucket> buckets;      ///< in launch order
  double used_map_allreduce_s = 0;         ///< find_unused_parameters' local_used_map all-reduce
  double first_iteration_allreduce_s = 0;  ///< iteration 1: one bucket of every gradient
  double grad_bytes_total = 0;
  double wire_scale = 1;  ///< bytes on the wire per gradient byte
  /// PowerSGD: the buckets as plain all-reduces, which the hook runs for the first
  /// start_powerSGD_iter iterations (empty for every other hook). `buckets` is the steady state.
  std::vector<PlannedBucket> warmup_buckets;
  /// Persistent memory of the hook per GPU (PowerSGD: error_dict + p/q_memory_dict + the
  /// transient copy of one bucket; top-k: the gathered buffer of the largest bucket).
  double hook_memory_bytes = 0;
  std::vector<std::string> warnings;
  /// Sharded strategies (every strategy but ddp; simulator/sharded.hpp plans them): the step's
  /// collectives in launch (FIFO) order, micro-batch template first, kAfterOptimizer last.
  /// Empty for ddp, whose gradient collectives are `buckets`, and on one GPU. When the strategy
  /// is sharded, buckets, warmup_buckets, buffer_broadcast_s, used_map_allreduce_s and
  /// first_iteration_allreduce_s are empty / 0.
  model::Strategy strategy = model::Strategy::kDdp;
  std::vector<ScheduledCollective> schedule;
  int shard_group = 1;  ///< ranks each parameter/gradient/state is sharded over (1 for ddp)
  /// Set when the hardware carries a calibration profile: which costs above were measured.
  std::optional<MeasuredSources> measured;
  /// DDP: backward compute runs this factor slower while one of the step's collectives is in
  /// flight (interfered_s; the analytic timeline, the event engine has
  /// EventOptions::interference with the same rule). From resolve_interference:
  /// simulation.interference, else the profile's measured factor, else 1.
  double interference = 1.0;
  std::string interference_source = "default";  ///< "scenario", "profile" or "default"
};

/// How long `work_s` of compute takes when it starts with a collective in flight for another
/// `busy_s` seconds and runs `factor` (>= 1) times slower while it is: at rate 1/factor for
/// min(busy_s, work_s * factor), at full rate after. Both engines use it (the Reducer's copies
/// are not slowed). E.g. 2 ms of work, 40 us busy, factor 1.5: 40 us do 26.67 us of work, the
/// other 1.97333 ms run at full rate: 2.01333 ms.
inline double interfered_s(double work_s, double busy_s, double factor) {
  if (factor <= 1.0 || busy_s <= 0.0) return work_s;
  if (work_s * factor <= busy_s) return work_s * factor;
  return busy_s + (work_s - busy_s / factor);
}

/// simulation.interference when given; else the calibration profile's measured factor
/// (model::Profile::interference_factor) when the hardware has a profile that measured it;
/// else 1. `source` (optional) receives "scenario", "profile" or "default".
double resolve_interference(const model::Scenario& s, std::string* source = nullptr);

class Predictor {
 public:
  /// `file` names the scenario in errors (e.g. a single_gpu_step_s below the optimizer time).
  Predictor(std::shared_ptr<const model::Workload> workload, model::HardwareSpec hardware,
            std::string file = {});
  explicit Predictor(const model::Scenario& s);
  /// Overrides the compute slowdown while a collective runs (StepPlan::interference; from the
  /// scenario or its profile when built from one, else 1).
  void set_interference(double factor, std::string source = "scenario") {
    interference_ = factor;
    interference_source_ = std::move(source);
  }

  Prediction predict(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                     const model::ParallelismConfig& parallelism,
                     std::optional<double> gpu_hour_usd = std::nullopt, double jitter_cv = 0) const;

  /// The costed pieces of one step (what predict() lays out on a timeline).
  StepPlan plan(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                const model::ParallelismConfig& parallelism) const;

  /// Which end of a profile's measured interval a plan is costed at.
  enum class Bound { kMedian, kLow, kHigh };
  /// plan() at one end of the profile's intervals (kMedian is plan(); without a profile the
  /// three are equal).
  StepPlan plan(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                const model::ParallelismConfig& parallelism, Bound bound) const;

  const model::Workload& workload() const { return *workload_; }
  const model::HardwareSpec& hardware() const { return hw_; }

 private:
  struct LayerTimes {
    std::vector<double> fwd;  ///< per layer, seconds, one micro-batch
    std::vector<double> bwd;
    double fwd_total = 0;
    double bwd_total = 0;
    int gemms_measured = 0;  ///< GEMMs timed by the profile (of gemms_total)
    int gemms_total = 0;
    std::vector<std::string> notes;  ///< extrapolated GEMM lookups
  };
  const LayerTimes& layer_times(std::int64_t batch, const model::TrainingConfig& t,
                                Bound bound = Bound::kMedian) const;
  /// The profile's time for collective `op` of nccl-tests size `bytes` on `gpus` ranks at
  /// `bound`; nullopt (and a note in `m`) when there is no profile, no table for `op`, or the
  /// table was measured on another rank count.
  std::optional<double> profile_collective_s(model::CollectiveOp op, double bytes, int gpus,
                                             Bound bound, MeasuredSources* m) const;
  /// plan() without the profile's collective and optimizer replacements (GEMMs at `bound`).
  StepPlan plan_model(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                      const model::ParallelismConfig& parallelism, Bound bound) const;
  /// The optimizer step from the profile's adam_fp32 kernel (Adam/AdamW in fp32 only).
  std::optional<double> profile_optimizer_s(const model::TrainingConfig& t, Bound bound) const;
  /// The roofline for kernels computing in `dt` (falls back to HBM-bound only when the GPU
  /// lists no peak for `dt`).
  Roofline roofline(model::DType dt) const;
  /// A bucket plan with its distinct bucket sizes, so each size is costed once per plan.
  struct CachedPlan {
    model::BucketPlan plan;
    std::vector<std::int64_t> distinct_bytes;  ///< distinct Bucket::bytes values
    std::vector<int> size_index;               ///< per bucket, its index in distinct_bytes
  };
  const CachedPlan& buckets(const model::BucketOptions& o) const;
  const model::CollectiveBandwidths& bandwidths(int gpus) const;
  /// The steady-state PowerSGD / top-k buckets of `plan` in dtype `dt` (the .cpp derives each
  /// term); `hook_memory_bytes` receives the hook's memory per GPU.
  std::vector<PlannedBucket> powersgd_buckets(const model::BucketPlan& plan,
                                              const model::CollectiveBandwidths& bw,
                                              model::DType dt, int gpus,
                                              const model::ParallelismConfig& par,
                                              double& hook_memory_bytes) const;
  std::vector<PlannedBucket> topk_buckets(const model::BucketPlan& plan,
                                          const model::CollectiveBandwidths& bw, model::DType dt,
                                          int gpus, const model::ParallelismConfig& par,
                                          double& hook_memory_bytes) const;
  double optimizer_time(const model::TrainingConfig& t) const;
  /// The steady step time of a plan with compute scaled by `f` (both layouts of predict()).
  double steady_step_s(const StepPlan& sp, double f) const;
  /// Step time on one GPU for `micro_batches` micro-batches of `batch` (no communication).
  double single_gpu_time(std::int64_t batch, int micro_batches,
                         const model::TrainingConfig& t) const;

  std::shared_ptr<const model::Workload> workload_;
  model::HardwareSpec hw_;
  std::string file_;
  double interference_ = 1.0;  ///< resolve_interference of the scenario (1 without one)
  std::string interference_source_ = "default";
  std::vector<double> layer_fwd_flops_;
  std::vector<double> layer_bwd_flops_;
  double total_flops_per_sample_ = 0;
  mutable std::map<std::tuple<std::int64_t, int, double, int, int, int>, LayerTimes> layer_cache_;
  mutable std::map<std::tuple<int, std::int64_t, bool, bool, bool, bool>, CachedPlan> bucket_cache_;
  mutable std::map<int, model::CollectiveBandwidths> bw_cache_;     ///< by GPU count
  mutable std::map<int, model::CollectiveBandwidths> shape_cache_;  ///< by topology_shape_key
  /// Keyed by every MemoryInputs field predict() sets (the last: the comm hook's state bytes).
  mutable std::map<
      std::tuple<int, int, int, int, int, std::int64_t, bool, double, bool, double, double>,
      MemoryEstimate>
      memory_cache_;
  // Workload constants used on every prediction (param_count() walks every tensor).
  double param_count_ = 0;
  double buffer_bytes_ = 0;
  double activation_bytes_per_sample_ = 0;
};

/// Expected maximum of n independent standard normal variables (E[max]), by numerical
/// integration: 1.4236 for n = 8, 2.3437 for 64, 3.2482 for 1024. Used for stragglers.
double expected_max_std_normal(int n);

}  // namespace ddpsim::sim
