// analytic.hpp: the closed-form data-parallel step model (microseconds per configuration).
//
// One step with gradient accumulation k = (k-1) x (forward + backward without sync)
//   + forward + backward, during which DDP buckets (model/workload/bucketing.hpp) are all-reduced
//   on one communication stream in bucket order, each as soon as its last gradient is ready and the
//   previous bucket has been launched (overlap), or all after the backward (overlap=false)
//   + the exposed tail of communication + the optimizer step (a memory-bound pass).
// The Predictor makes a StepPlan (simulator/analytic/step_plan.hpp) and lays it out into a
// Prediction (simulator/prediction/prediction.hpp); communication hooks are costed by
// simulator/analytic/comm_hooks.hpp. Front-ends do not call it directly: simulator/run.hpp is the
// one way a scenario is predicted. Sharded strategies (ZeRO-1/2/3, FSDP) are planned by
// simulator/analytic/sharded.hpp into StepPlan::schedule and laid out by sharded_timeline(): gated
// collectives on one FIFO stream, compute ops that wait for the all-gathers they need.
// training.activation_checkpointing adds each transformer block's forward to its backward
// (recomputation), for every strategy. Compute: every GEMM at its real shape, roofline max(FLOPs /
// (peak x efficiency), bytes / (HBM x efficiency)); element-wise ops memory-bound; or a measured
// single_gpu_step_s split across layers by FLOPs. Collectives: simulator/collectives/collective.hpp
// on bandwidths derived from the cluster graph (model/hardware/cluster.hpp). With a calibration
// profile (HardwareSpec::profile, model/profile/profile.hpp) the measured numbers replace the
// model's where the profile has them: every GEMM whose family it timed (Profile::gemm_time_s at the
// GEMM's shape, dtype and micro-batch; the others stay on the roofline of the profile's best GEMM
// rate), every collective whose op it swept at the scenario's rank count
// (Profile::collective_time_s at nccl-tests' size; another rank count keeps the alpha-beta model,
// with a warning), and the optimizer from the measured Adam kernel (else from the measured memory
// bandwidth). Prediction::measured says which came from where; Prediction::step_time_low_s/high_s
// lay the same step out on the low and high ends of every measured interval (p10/p90 GEMMs, min/max
// collectives and kernels).
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

#include "model/hardware/cluster.hpp"
#include "model/profile/profile.hpp"
#include "model/scenario/scenario.hpp"
#include "model/workload/bucketing.hpp"
#include "simulator/analytic/comm_hooks.hpp"
#include "simulator/analytic/sharded_context.hpp"
#include "simulator/analytic/step_plan.hpp"
#include "simulator/analytic/torch_profile.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/collectives/fabric_fit.hpp"
#include "simulator/prediction/memory.hpp"
#include "simulator/prediction/prediction.hpp"

namespace ddpsim::sim {

/// Time on a GPU's roofline: max(FLOPs / (peak x efficiency), bytes / (HBM x efficiency)).
struct Roofline {
  double flops_per_s = 0;
  double bytes_per_s = 0;
  double time_s(double flops, double bytes) const {
    const double c = flops_per_s > 0 ? flops / flops_per_s : 0.0;
    return c > bytes / bytes_per_s ? c : bytes / bytes_per_s;
  }
};

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
  /// Measured costs that replace the model's in every plan this Predictor makes (and in the
  /// one-GPU step of the scaling efficiencies): apply_measured_costs, step_plan.hpp. nullptr:
  /// none (the default; RunOptions::measured sets it per point).
  void set_measured(std::shared_ptr<const MeasuredCosts> m) { measured_ = std::move(m); }

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
  /// The hardware the predictions use: the scenario's, with the NIC fitted to a multi-node
  /// collectives profile when it has one (fabric_fit.hpp).
  const model::HardwareSpec& hardware() const { return hw_; }
  const std::optional<FabricFit>& fabric_fit() const { return fabric_fit_; }

  /// A lower bound on predict(cluster, training, parallelism).step_time_s that plans no
  /// collective (the planner's pruning, simulator/plan_search.hpp): grad_accumulation
  /// micro-batches of the layers' nominal forward and backward, with the checkpointed blocks'
  /// recomputation as plan_model adds it, plus the optimizer under DDP. Both layouts run every op
  /// for at least its nominal time (interfered_s and jitter only slow it, the sharded schedules
  /// only add copies to the layers, the input floor only lengthens the step), so no step is
  /// shorter. nullopt where plan() replaces the model's compute: a profile as the hardware,
  /// measured costs, a torch calibration. analytic_bounds.cpp.
  std::optional<double> step_time_floor_s(const model::TrainingConfig& training,
                                          const model::ParallelismConfig& parallelism) const;
  /// predict(cluster, training, parallelism, _, jitter_cv).step_time_s alone, computed the same
  /// way (the plan laid out at the jitter's mean factor, then the input floor), none of the rest:
  /// what the planner needs of a candidate it already knows is dominated.
  double step_time_s(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                     const model::ParallelismConfig& parallelism, double jitter_cv = 0) const;
  /// predict()'s memory per GPU where it needs no plan: every comm hook but PowerSGD and top-k,
  /// whose state the plan sizes (nullptr for those). Valid until the next prediction.
  const MemoryEstimate* unplanned_memory(const model::ClusterConfig& cluster,
                                         const model::TrainingConfig& training,
                                         const model::ParallelismConfig& parallelism) const;
  /// Whether predict() reads parallelism.bucket_cap_mb under `strategy`: only DDP's bucket
  /// assignment does (plan_ddp_model); the sharded schedules have their own units and buckets.
  static bool reads_bucket_cap(model::Strategy strategy) { return !model::is_sharded(strategy); }

 private:
  /// The estimate at `b`: the profile interval's low or high end, or its median.
  static double pick(const model::Estimate& e, Bound b) {
    return b == Bound::kLow ? e.low_s : b == Bound::kHigh ? e.high_s : e.time_s;
  }
  struct LayerTimes {
    std::vector<double> fwd;  ///< per layer, seconds, one micro-batch
    std::vector<double> bwd;
    /// Per layer: the part of fwd that torchtitan's op-level selective checkpointing runs again
    /// in backward (element-wise ops, weight casts, every second mm: model::op_policy).
    std::vector<double> fwd_op_recompute;
    double fwd_total = 0;
    double bwd_total = 0;
    /// The memory-bound part of bwd_total: element-wise kernels, casts, layout copies, split-K
    /// reductions (what HBM bandwidth, not the SMs, sets); 0 with a measured step.
    double bwd_memory_total = 0;
    int gemms_measured = 0;  ///< GEMMs timed by the profile (of gemms_total)
    int gemms_total = 0;
    std::vector<std::string> notes;  ///< extrapolated GEMM lookups
    /// Fraction of the model FLOPs costed as TF32 (runs_tf32); 0 with a measured step.
    double tf32_flop_share = 0;
  };
  /// `weights_cast` false: the GEMMs' weights arrive in the compute dtype (FSDP2 with a
  /// param_dtype all-gathers them cast), so autocast casts none of them.
  const LayerTimes& layer_times(std::int64_t batch, const model::TrainingConfig& t,
                                Bound bound = Bound::kMedian, bool weights_cast = true) const;
  /// The profile's time for collective `op` of nccl-tests size `bytes` on `gpus` ranks at
  /// `bound`; nullopt (and a note in `m`) when there is no profile, no table for `op`, or the
  /// table was measured on another rank count.
  std::optional<double> profile_collective_s(model::CollectiveOp op, double bytes, int gpus,
                                             Bound bound, MeasuredSources* m) const;
  /// plan() without the measured costs (set_measured): the model's plan with the profile's
  /// replacements.
  StepPlan plan_profiled(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                         const model::ParallelismConfig& parallelism, Bound bound) const;
  /// plan() without the profile's collective and optimizer replacements (GEMMs at `bound`):
  /// the layers, the optimizer, then plan_sharded_model or plan_ddp_model (analytic_plan.cpp).
  StepPlan plan_model(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                      const model::ParallelismConfig& parallelism, Bound bound) const;
  /// The sharded strategies' schedule of `sp` (simulator/analytic/sharded.hpp).
  void plan_sharded_model(StepPlan& sp, const model::ClusterConfig& cluster,
                          const model::TrainingConfig& training,
                          const model::ParallelismConfig& parallelism) const;
  /// DDP's buckets with their collectives, hooks, the Reducer's copies and the first iteration.
  void plan_ddp_model(StepPlan& sp, const model::ClusterConfig& cluster,
                      const model::TrainingConfig& training,
                      const model::ParallelismConfig& parallelism) const;
  struct CachedPlan;
  /// The Reducer's copies of the gradients into the buckets and back (more than one GPU).
  void add_reducer_copies(StepPlan& sp, const CachedPlan& cached, model::DType grad_dtype,
                          double mem_rate, const model::ParallelismConfig& parallelism) const;
  /// predict()'s model FLOPs, hardware FLOPs, the peak MFU is quoted against and the scaling
  /// efficiencies (analytic_predict.cpp).
  void add_flops_and_scaling(const model::ClusterConfig& cluster,
                             const model::TrainingConfig& training,
                             const model::ParallelismConfig& parallelism, Prediction& r) const;
  /// The memory per GPU of `sp`'s point (cached over the inputs that matter).
  const MemoryEstimate& memory_estimate(double hook_memory_bytes,
                                        const model::ClusterConfig& cluster,
                                        const model::TrainingConfig& training,
                                        const model::ParallelismConfig& parallelism) const;
  /// The optimizer step from the profile's adam_fp32 kernel (Adam/AdamW in fp32 only).
  std::optional<double> profile_optimizer_s(const model::TrainingConfig& t,
                                            model::OptimizerImpl impl, Bound bound) const;
  /// The roofline for kernels computing in `dt` (falls back to HBM-bound only when the GPU
  /// lists no peak for `dt`).
  Roofline roofline(model::DType dt) const;
  /// A bucket plan with its distinct bucket sizes, so each size is costed once per plan.
  struct CachedPlan {
    model::BucketPlan plan;
    std::vector<std::int64_t> distinct_bytes;  ///< distinct Bucket::bytes values
    std::vector<int> size_index;               ///< per bucket, its index in distinct_bytes
    /// reducer_copy_in_s of this plan per gradient dtype (the same at every GPU count).
    mutable std::map<model::DType, std::vector<double>> copy_in_s;
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
  /// The optimizer step of every parameter on one GPU, run as `impl`.
  double optimizer_time(const model::TrainingConfig& t, model::OptimizerImpl impl) const;
  /// The steady step time of a plan with compute scaled by `f` (both layouts of predict()).
  double steady_step_s(const StepPlan& sp, double f) const;
  /// Step time on one GPU for `micro_batches` micro-batches of `batch` (no communication).
  double single_gpu_time(std::int64_t batch, int micro_batches, const model::TrainingConfig& t,
                         model::Strategy s) const;
  /// The measured compute and optimizer of a plan for `t`: set_measured's, else the profile's
  /// torch calibration entry for the workload at t's batch and optimizer (`why` receives why
  /// there is none when the profile has a torch section), else nullptr.
  const MeasuredCosts* measured_compute(const model::TrainingConfig& t,
                                        std::string* why = nullptr) const;

  std::shared_ptr<const model::Workload> workload_;
  model::HardwareSpec hw_;
  std::string file_;
  double interference_ = 1.0;  ///< resolve_interference of the scenario (1 without one)
  std::string interference_source_ = "default";
  std::shared_ptr<const MeasuredCosts> measured_;
  /// The hardware profile's "torch" section, when it has one (torch_profile.hpp).
  std::optional<TorchCalibration> torch_;
  /// How collectives without a matching profile table are costed, for notes.
  std::string collective_model_name() const;
  /// The NIC fitted to the profile's multi-node collective tables (applied to hw_), if any.
  std::optional<FabricFit> fabric_fit_;
  std::vector<double> layer_fwd_flops_;
  /// Per layer, model::op_policy of its transformer blocks (empty policies for other layers).
  std::vector<model::OpCheckpointPolicy> op_policies_;
  /// model::recomputed_flops_per_sample, once per checkpointing mode (a sweep asks per point).
  double recomputed_flops_per_sample(const model::ActivationCheckpointing& ac) const;
  mutable std::map<int, double> recompute_flops_cache_;  ///< by model::checkpointing_key
  std::vector<double> layer_bwd_flops_;
  double total_flops_per_sample_ = 0;
  mutable std::map<std::tuple<std::int64_t, int, double, int, int, int, int>, LayerTimes>
      layer_cache_;
  /// The float8 configurations seen, their position + 1 a layer_cache_ key (0: none).
  mutable std::vector<model::Float8Config> float8_configs_;
  int float8_key(const std::optional<model::Float8Config>& c) const;
  mutable std::map<std::tuple<int, std::int64_t, bool, std::int64_t, bool, bool, bool>, CachedPlan>
      bucket_cache_;
  mutable std::map<int, model::CollectiveBandwidths> bw_cache_;     ///< by GPU count
  mutable std::map<int, model::CollectiveBandwidths> shape_cache_;  ///< by topology_shape_key
  /// Keyed by every MemoryInputs field predict() sets (the last: the comm hook's state bytes).
  mutable std::map<
      std::tuple<int, int, int, int, int, std::int64_t, bool, double, int, double, double>,
      MemoryEstimate>
      memory_cache_;
  // Workload constants used on every prediction (param_count() walks every tensor).
  double param_count_ = 0;
  double buffer_bytes_ = 0;
  double activation_bytes_per_sample_ = 0;
  ParamCounts param_counts_;  ///< what every sharded plan reads (sharded_context.hpp)
};

}  // namespace ddpsim::sim
