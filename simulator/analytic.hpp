// analytic.hpp: the closed-form data-parallel step model (microseconds per configuration).
//
// One step with gradient accumulation k = (k-1) x (forward + backward without sync)
//   + forward + backward, during which DDP buckets (model/bucketing.hpp) are all-reduced on one
//   communication stream in bucket order, each as soon as its last gradient is ready and the
//   previous bucket has been launched (overlap), or all after the backward (overlap=false)
//   + the exposed tail of communication + the optimizer step (a memory-bound pass).
// Compute: every GEMM at its real shape, roofline max(FLOPs / (peak x efficiency), bytes /
// (HBM x efficiency)); element-wise ops memory-bound; or a measured single_gpu_step_s split
// across layers by FLOPs. Collectives: simulator/collective.hpp on bandwidths derived from the
// cluster graph (model/cluster.hpp).
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
#include "model/scenario.hpp"
#include "simulator/collective.hpp"
#include "simulator/memory.hpp"

namespace ddpsim::sim {

struct BucketTiming {
  std::int64_t bytes = 0;       ///< bytes on the wire
  std::int64_t grad_bytes = 0;  ///< bytes of the gradients in the bucket (bucket cap counts these)
  int tensors = 0;
  double ready_s = 0;  ///< from the start of the step
  double start_s = 0;
  double end_s = 0;
  double busbw_gbytes_per_s = 0;
  model::CollectiveAlgorithm algorithm = model::CollectiveAlgorithm::kRing;
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
  double backward_time_s = 0;    ///< compute only, all micro-batches
  double optimizer_time_s = 0;
  double comm_time_s = 0;     ///< sum of the collectives' durations
  double exposed_comm_s = 0;  ///< communication not hidden behind the backward
  /// With jitter (simulation.jitter_cv > 0): median and 99th percentile of the step time.
  std::optional<double> p50_step_time_s;
  std::optional<double> p99_step_time_s;
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
  std::vector<std::string> warnings;
};

/// One bucket as planned: its collective cost, how long it occupies the communication stream,
/// and the layer whose backward makes it ready.
struct PlannedBucket {
  BucketTiming cost;        ///< bytes, grad_bytes, tensors, algorithm, busbw (no times yet)
  double collective_s = 0;  ///< the all-reduce alone
  double cast_s = 0;        ///< compression-hook casts around it (0 without a hook)
  int ready_layer = 0;      ///< ready when this layer's backward finishes
  double duration_s() const { return collective_s + cast_s; }
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
  /// The workload the plan was made for (layer names for traces).
  std::shared_ptr<const model::Workload> workload;
  double buffer_broadcast_s = 0;  ///< broadcast_buffers, before every forward
  double optimizer_s = 0;
  std::vector<PlannedBucket> buckets;      ///< in launch order
  double used_map_allreduce_s = 0;         ///< find_unused_parameters' local_used_map all-reduce
  double first_iteration_allreduce_s = 0;  ///< iteration 1: one bucket of every gradient
  double grad_bytes_total = 0;
  double wire_scale = 1;  ///< bytes on the wire per gradient byte
  std::vector<std::string> warnings;
};

class Predictor {
 public:
  /// `file` names the scenario in errors (e.g. a single_gpu_step_s below the optimizer time).
  Predictor(std::shared_ptr<const model::Workload> workload, model::HardwareSpec hardware,
            std::string file = {});
  explicit Predictor(const model::Scenario& s);

  Prediction predict(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                     const model::ParallelismConfig& parallelism,
                     std::optional<double> gpu_hour_usd = std::nullopt, double jitter_cv = 0) const;

  /// The costed pieces of one step (what predict() lays out on a timeline).
  StepPlan plan(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                const model::ParallelismConfig& parallelism) const;

  const model::Workload& workload() const { return *workload_; }
  const model::HardwareSpec& hardware() const { return hw_; }

 private:
  struct LayerTimes {
    std::vector<double> fwd;  ///< per layer, seconds, one micro-batch
    std::vector<double> bwd;
    double fwd_total = 0;
    double bwd_total = 0;
  };
  const LayerTimes& layer_times(std::int64_t batch, const model::TrainingConfig& t) const;
  /// A bucket plan with its distinct bucket sizes, so each size is costed once per plan.
  struct CachedPlan {
    model::BucketPlan plan;
    std::vector<std::int64_t> distinct_bytes;  ///< distinct Bucket::bytes values
    std::vector<int> size_index;               ///< per bucket, its index in distinct_bytes
  };
  const CachedPlan& buckets(const model::BucketOptions& o) const;
  const model::CollectiveBandwidths& bandwidths(int gpus) const;
  double optimizer_time(const model::TrainingConfig& t) const;
  /// Step time on one GPU for `micro_batches` micro-batches of `batch` (no communication).
  double single_gpu_time(std::int64_t batch, int micro_batches,
                         const model::TrainingConfig& t) const;

  std::shared_ptr<const model::Workload> workload_;
  model::HardwareSpec hw_;
  std::string file_;
  std::vector<double> layer_fwd_flops_;
  std::vector<double> layer_bwd_flops_;
  double total_flops_per_sample_ = 0;
  mutable std::map<std::tuple<std::int64_t, int, double, int, int>, LayerTimes> layer_cache_;
  mutable std::map<std::tuple<int, std::int64_t, bool, bool, bool, bool>, CachedPlan> bucket_cache_;
  mutable std::map<int, model::CollectiveBandwidths> bw_cache_;     ///< by GPU count
  mutable std::map<int, model::CollectiveBandwidths> shape_cache_;  ///< by topology_shape_key
  // Workload constants used on every prediction (param_count() walks every tensor).
  double param_count_ = 0;
  double buffer_bytes_ = 0;
  double activation_bytes_per_sample_ = 0;
};

/// Predicts one scenario point (no sweep expansion).
Prediction predict_analytic(const model::Scenario& s);

/// Expected maximum of n independent standard normal variables (E[max]), by numerical
/// integration: 1.4236 for n = 8, 2.3437 for 64, 3.2482 for 1024. Used for stragglers.
double expected_max_std_normal(int n);

}  // namespace ddpsim::sim
