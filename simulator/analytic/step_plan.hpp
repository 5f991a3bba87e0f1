// step_plan.hpp: everything one data-parallel step is made of before any timeline is laid out
// (StepPlan): per-layer compute, DDP buckets with their collectives, the sharded strategies'
// schedules, the optimizer, the Reducer's copies and the first iteration's extra costs. The
// Predictor (simulator/analytic/analytic.hpp) makes it; the analytic timeline and the event engine
// (simulator/event/simulate.hpp) both lay it out, so they cost every piece identically and differ
// only in how they schedule it. The helpers below are the pure pieces of a plan (step_plan.cpp).
//
//   StepPlan plan = predictor.plan(s.cluster, s.training, s.parallelism);
//   double t = interfered_s(2e-3, 40e-6, 1.5);   // 2.01333 ms
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware/cluster.hpp"
#include "model/scenario/scenario.hpp"
#include "model/workload/bucketing.hpp"
#include "simulator/prediction/prediction.hpp"

namespace ddpsim::sim {

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
  /// Contention (ddp_timeline.hpp): the compute runs this many times slower while this
  /// collective is in flight; 0 (unset): StepPlan::interference (the same for every bucket).
  /// A plain double, not an optional: the analytic sweep copies one PlannedBucket per bucket.
  double compute_slowdown = 0;
  /// ... and this collective runs this many times slower while the backward computes (>= 1; 1:
  /// not slowed, as NCCL's kernels are modelled until their HBM share is measured).
  double collective_slowdown = 1;
  /// With StepPlan::comm_lanes > 1: seconds per collective while another one is in flight (two
  /// at once take 2 x paired_s together); 0: as collective_s (two at once share its rate).
  double paired_s = 0;
  double duration_s() const { return collective_s + overhead_s; }
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
  /// The communicator (NCCL serialises the kernels of one communicator, whatever CUDA stream
  /// issues them): 0 the shard / data-parallel group; FSDP2 only: 1 HSDP's replicate group,
  /// 2 the smaller group an integer reshard_after_forward all-gathers over in backward. Each
  /// runs its collectives in FIFO order; different ones run concurrently.
  int stream = 0;
  /// Index into StepPlan::schedule of a collective of the same micro-batch that must end before
  /// this one starts (FSDP2's all_reduce_stream.wait_stream(reduce_scatter_stream)); -1: none.
  int after = -1;
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
  /// The least a step can take because of the input pipeline (training.input_pipeline): the
  /// GPU's samples per step (micro-batch x accumulation) over its loader's rate, the per-node
  /// rate shared by the node's GPUs (min(gpus_per_node, gpus)). The DataLoader's workers prefetch
  /// beside the GPU (torch/utils/data/dataloader.py, prefetch_factor batches per worker), so the
  /// two overlap and the step is the larger. 0: no pipeline given.
  double input_floor_s = 0;
  std::vector<PlannedBucket> buckets;      ///< in launch order
  double used_map_allreduce_s = 0;         ///< find_unused_parameters' local_used_map all-reduce
  double first_iteration_allreduce_s = 0;  ///< iteration 1: one bucket of every gradient
  /// Iteration 1 reduces one bucket of every gradient (DDP rebuilds its buckets afterwards:
  /// static_graph, or find_unused_parameters off); false: it runs the steady buckets.
  bool first_iteration_one_bucket = true;
  double grad_bytes_total = 0;
  double wire_scale = 1;  ///< bytes on the wire per gradient byte
  /// PowerSGD: the buckets as plain all-reduces, which the hook runs for the first
  /// start_powerSGD_iter iterations (empty for every other hook). `buckets` is the steady state.
  std::vector<PlannedBucket> warmup_buckets;
  /// Persistent memory of the hook per GPU (PowerSGD: error_dict + p/q_memory_dict + the
  /// transient copy of one bucket; top-k: the gathered buffer of the largest bucket).
  double hook_memory_bytes = 0;
  std::vector<std::string> warnings;
  /// Sharded strategies (every strategy but ddp; simulator/analytic/sharded.hpp plans them): the
  /// step's collectives in launch (FIFO) order, micro-batch template first, kAfterOptimizer last.
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
  /// simulation.interference, else the profile's measured factor, else (NCCL model, a GPU with
  /// sm_count) the SMs NCCL's channels take: sm_count / (sm_count - channels); else 1.
  double interference = 1.0;
  /// "scenario", "profile", "nccl_channels", "measured", "torch" or "default"
  std::string interference_source = "default";
  /// The memory-bound share of the backward compute (element-wise kernels, casts, copies: what
  /// HBM bandwidth sets), for the HBM part of the default interference.
  double backward_memory_share = 0;
  /// With "nccl_channels": the widest collective's channels and the HBM share its kernel takes.
  int interference_channels = 0;
  double interference_hbm_share = 0;
  /// DDP: how many bucket collectives run at once. NCCL runs one communicator's kernels in
  /// order (1); ProcessGroupGloo hands collectives to its worker threads, `threads` of them
  /// (torch/csrc/distributed/c10d/ProcessGroupGloo.cpp: the constructor starts options->threads
  /// workers, each running runLoop over one work queue; 2 by default), so with gloo a bucket
  /// starts as soon as it is ready and a worker is free.
  int comm_lanes = 1;
  /// The most channels any of `buckets` runs on, when the planner knew it from the buckets'
  /// distinct sizes (plan_ddp_model); -1: apply_nccl_channel_interference reads the buckets.
  int bucket_channels_max = -1;
  /// ... and the highest bus bandwidth (GB/s) among them (with bucket_channels_max >= 0).
  double bucket_busbw_max = -1;
};

/// HBM bytes NCCL's ring kernel moves per bus byte on each GPU (apply_nccl_channel_interference).
inline constexpr double kNcclHbmBytesPerBusByte = 3.0;

/// The compute slowdown while bucket `b` of plan `sp` is in flight (PlannedBucket).
inline double compute_slowdown_of(const StepPlan& sp, const PlannedBucket& b) {
  return b.compute_slowdown > 0 ? b.compute_slowdown : sp.interference;
}

/// How fast a collective progresses, in seconds of its time alone per second, when `in_flight`
/// collectives of the stream run at once (StepPlan::comm_lanes) and, with `computing`, while
/// the compute stream computes beside it: 1 alone; k >= 2 at once share the pair's rate,
/// duration / (k x paired_s) each (paired_s 0: duration / k); divided by collective_slowdown
/// while computing. E.g. duration 10 ms, paired 7 ms, two in flight: 10 / 14 = 0.714; with a
/// collective_slowdown of 2 beside compute: 0.357.
double collective_rate(const PlannedBucket& b, int in_flight, bool computing);

/// Measured per-step costs that replace the model's in a plan: what a PyTorch profiler trace of
/// the job measured (`ddpsim validate --trace`'s replay and --extrapolate), handed to the run API
/// as RunOptions::measured and applied by the Predictor to every plan it makes
/// (apply_measured_costs), so the analytic timeline and the event engine lay out the same
/// measured pieces. Times are seconds per step of one rank; unset or empty: the model's cost.
///
///   MeasuredCosts m;
///   m.source = "trace rank0.json";
///   m.forward_s = 13.4e-3;                    // spread over the layers like the model's own
///   m.backward_s = 25.3e-3;                   // per-layer estimate
///   m.bucket_collective_s = {3.9e-3, 3.7e-3};  // one per bucket, launch order
struct MeasuredCosts {
  std::string source;  ///< named in the plan's warning, e.g. "trace rank0.json"
  /// One micro-batch's compute per workload layer (both the workload's layer count, or empty).
  std::vector<double> layer_fwd_s, layer_bwd_s;
  /// One micro-batch's whole forward / backward. Without per-layer times it is spread over the
  /// layers in proportion to the plan's own per-layer estimate; with them, what it holds beyond
  /// their sum (time the trace gave no layer: the loss, unnamed modules) is spread that way.
  std::optional<double> forward_s, backward_s;
  std::optional<double> optimizer_s;
  std::optional<double> buffer_broadcast_s;  ///< DDP broadcast_buffers, per forward
  /// DDP: each bucket's collective in launch order, one per planned bucket.
  std::vector<double> bucket_collective_s;
  /// The compute's slowdown while a collective is in flight, when the compute was measured
  /// without communication (a torch calibration's contention factor); unset: 1, as in a trace,
  /// whose backward already ran beside the collectives.
  std::optional<double> interference;
  bool has_compute() const {
    return !layer_fwd_s.empty() || forward_s.has_value() || backward_s.has_value();
  }
};

/// Replaces `sp`'s costs with `m`'s. With measured compute, the plan's Reducer copies
/// (layer_grad_copy_s, every bucket's copy_out_s) become 0 and its interference 1: a traced
/// backward already holds the copies into the buckets (the Reducer's mul_out runs inside
/// AccumulateGrad's autograd hook) and whatever slowdown the concurrent collectives caused.
/// Throws InputError naming m.source when its layer or bucket counts differ from the plan's, or
/// when it gives bucket collectives for a sharded strategy.
void apply_measured_costs(StepPlan& sp, const MeasuredCosts& m);

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

/// Activation checkpointing (model/workload/checkpointing.hpp): each checkpointed
/// "transformer_block" runs part of its forward again before its backward, added to its backward
/// time: the whole forward under full or layer-selective checkpointing (Korthikanti et al. 2022,
/// sec. 5: layer_bwd_s[i] += layer_fwd_s[i]), the ops torchtitan's op policy recomputes under
/// op-selective (layer_bwd_s[i] += layer_op_recompute_s[i]). Returns the number of blocks
/// checkpointed.
int add_recomputation(const model::Workload& w, const model::ActivationCheckpointing& ac,
                      std::vector<double>& layer_bwd_s, const std::vector<double>& layer_fwd_s,
                      const std::vector<double>& layer_op_recompute_s);
/// What add_recomputation adds, summed over the layers (one micro-batch's recomputation).
double recomputation_s(const model::Workload& w, const model::ActivationCheckpointing& ac,
                       const std::vector<double>& layer_fwd_s,
                       const std::vector<double>& layer_op_recompute_s);

/// How DDP's gradients travel: `dtype` on the wire (an fp16/bf16 hook's dtype, else
/// training.grad_reduce_dtype, else the gradients' own) and the bytes per gradient element the
/// hook's casts move: fp16_compress_hook casts a g-byte bucket down (read g, write h) and back
/// up (read h, write g), 2 (g + h) bytes; 0 without a hook that narrows the dtype.
struct WireFormat {
  model::DType dtype = model::DType::kFp32;
  double cast_bytes_per_element = 0;
};
/// The default StepPlan::interference of a plan whose collectives are costed (see step_plan.cpp):
/// the SM-bound part of the backward runs sm_count / (sm_count - the widest collective's NCCL
/// channels) slower, its memory-bound part 1 / (1 - the HBM share that collective's kernel
/// takes), weighted by backward_memory_share; unchanged when the factor was given or measured,
/// the GPU has no sm_count, or the collectives are not NCCL's model.
void apply_nccl_channel_interference(StepPlan& sp, const model::HardwareSpec& hw);

WireFormat ddp_wire_format(const model::TrainingConfig& t, const model::CommHook& hook);

/// The Reducer's copy of every gradient into its bucket as autograd produces it (PyTorch
/// reducer.cpp mark_variable_ready_dense), per workload layer: read + write of the gradient
/// bytes, 2 x numel x bytes(grad_dtype) / bytes_per_s, summed over the layer's tensors.
std::vector<double> reducer_copy_in_s(const model::Workload& w, const model::BucketPlan& plan,
                                      model::DType grad_dtype, double bytes_per_s);

/// input_floor_s of a job of `gpus` GPUs, `gpus_per_node` to a node: its micro-batch x
/// accumulation over the per-GPU rate (training.input_pipeline; the per-node rate divided among
/// min(gpus_per_node, gpus) GPUs, so one GPU alone gets the whole node's CPUs), 0 without one.
///   8 GPUs a node, 16,600 samples/s a node, batch 256: 256 / 2,075 = 0.1234 s; 1 GPU: 0.0154 s.
double input_floor_s(const model::TrainingConfig& t, int gpus, int gpus_per_node);
/// The same for `samples` per GPU per step (single_gpu_time's batch x micro-batches).
double input_floor_s(const model::TrainingConfig& t, int gpus, int gpus_per_node, double samples);

/// A prediction held to the input pipeline's floor: every step time (steady, p50/p95/p99, the
/// first and the warm-up step) at least `floor_s`, with a warning when it binds (one: calling it
/// again replaces it). Call before anything is derived from the step time.
void apply_input_floor(double floor_s, Prediction& r);

}  // namespace ddpsim::sim
