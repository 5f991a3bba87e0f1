// analytic_predict.cpp: Predictor::predict (analytic.hpp), the analytic prediction of one point:
// its plan laid out (the DDP timeline or the sharded schedules, with the straggler statistics of
// jitter), the notes on how the compute was slowed, FLOPs, MFU and scaling efficiencies, memory
// per GPU and the training target.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/error.hpp"
#include "model/units.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/analytic/ddp_timeline.hpp"
#include "simulator/analytic/normal_order_stats.hpp"
#include "simulator/analytic/sharded.hpp"
#include "simulator/prediction/lr_schedule.hpp"

namespace ddpsim::sim {

namespace {

// One micro-batch's nominal compute (forward + backward), the scale of jitter's spread.
double compute_s(const StepPlan& sp) {
  double s = 0;
  for (double t : sp.layer_fwd_s) s += t;
  for (double t : sp.layer_bwd_s) s += t;
  return s;
}

// Sharded strategies: the gated FIFO layout of simulator/analytic/sharded.hpp, every rank's
// compute `f` times its nominal time.
void lay_out_sharded(const StepPlan& sp, int n, double jitter_cv, double f, Prediction& r) {
  const ShardedTimeline st = sharded_timeline(sp, f);
  r.forward_time_s = st.forward_s;
  r.backward_time_s = st.backward_s;
  r.optimizer_time_s = st.optimizer_s;
  r.comm_time_s = st.comm_sum_s;
  r.step_time_s = st.step_s;
  r.exposed_comm_s = st.exposed_comm_s();
  r.buckets = st.collectives;
  if (jitter_cv > 0 && n > 1) {
    r.p50_step_time_s = sharded_timeline(sp, 1.0 + jitter_cv * max_normal_quantile(n, 0.5)).step_s;
    r.p99_step_time_s = sharded_timeline(sp, 1.0 + jitter_cv * max_normal_quantile(n, 0.99)).step_s;
  } else if (jitter_cv > 0) {
    r.p50_step_time_s = r.step_time_s;
    r.p99_step_time_s =
        r.step_time_s + jitter_cv * 2.3263478740408408 * (sp.grad_accumulation * compute_s(sp));
  }
  r.first_step_time_s = r.step_time_s;  // no bucket rebuild outside DDP
}

// DDP: the analytic timeline (ddp_timeline.hpp), every rank's compute `f` times its nominal time.
void lay_out_ddp(const StepPlan& sp, int n, double jitter_cv, double f, Prediction& r) {
  const int k = sp.grad_accumulation;
  DdpTimeline tl = ddp_timeline(sp, f, sp.buckets);
  r.buckets = std::move(tl.buckets);
  const double bwd_end = tl.bwd_end;
  const double sync_end = tl.sync_end();
  r.forward_time_s = k * tl.fwd_mb;
  // The backward includes the Reducer's gradient copies (into the buckets, and back in
  // finalize_backward, which runs inside loss.backward()).
  r.backward_time_s = k * tl.bwd_mb + tl.slowed + tl.copy_in + tl.copy_out;
  r.grad_copy_time_s = tl.copy_in + tl.copy_out;
  r.optimizer_time_s = sp.optimizer_s;
  r.comm_time_s = tl.comm_sum;
  r.exposed_comm_s = tl.exposed();
  r.step_time_s = sync_end + sp.optimizer_s;
  if (jitter_cv > 0 && n > 1) {
    auto quantile_step = [&](double q) {
      const DdpTimeline t =
          ddp_timeline(sp, 1.0 + jitter_cv * max_normal_quantile(n, q), sp.buckets);
      return t.sync_end() + sp.optimizer_s;
    };
    r.p50_step_time_s = quantile_step(0.5);
    r.p99_step_time_s = quantile_step(0.99);
  } else if (jitter_cv > 0) {
    // One rank: no maximum, the step is Normal itself.
    r.p50_step_time_s = r.step_time_s;
    r.p99_step_time_s = r.step_time_s + jitter_cv * 2.3263478740408408 * (k * compute_s(sp));
  }
  if (!sp.warmup_buckets.empty()) {
    // PowerSGD before start_powerSGD_iter: the same timeline with plain all-reduce buckets.
    const DdpTimeline w = ddp_timeline(sp, f, sp.warmup_buckets);
    r.warmup_step_time_s = w.sync_end() + sp.optimizer_s;
  }
  // Iteration 1 (torch/nn/parallel/distributed.py _ddp_init_helper): when the Reducer will
  // rebuild its buckets (static_graph, or find_unused_parameters off) the initial assignment
  // is one bucket of every gradient (bucket_size_limits = [sys.maxsize]), reduced after the
  // backward, then copied back. With find_unused_parameters and no static graph the initial
  // buckets are the cap-sized ones it keeps for good: iteration 1 is a steady step (with
  // PowerSGD it would run plain all-reduce on them; not modelled, as in the event engine).
  // With one bucket nothing is reduced during the backward, so no interference slows it.
  r.first_step_time_s =
      n > 1 && sp.first_iteration_one_bucket
          ? bwd_end - tl.slowed + sp.first_iteration_allreduce_s + tl.copy_out + sp.optimizer_s
          : r.step_time_s;
}

// What slowed the compute beside the collectives, when a profile measured it or NCCL's channels
// set it.
void add_interference_notes(const StepPlan& sp, const model::ClusterConfig& cluster,
                            const model::ParallelismConfig& par, const model::HardwareSpec& hw,
                            Prediction& r) {
  if (sp.interference_source == "profile" && cluster.gpus > 1) {
    const std::string note = fmt::format(
        "interference {} (compute slowdown while a collective runs) measured by the "
        "calibration profile",
        sp.interference);
    r.warnings.push_back(note);
    if (r.measured) r.measured->notes.push_back(note);
  }
  if (sp.interference_source == "nccl_channels" && cluster.gpus > 1) {
    const double m = sp.backward_memory_share, h = sp.interference_hbm_share;
    const int channels = sp.interference_channels;
    r.warnings.push_back(fmt::format(
        "interference {:.3f}: compute overlapping {} runs on the SMs they leave free ({} SMs / "
        "({} - {} channels)) and its memory-bound {:.0f}% on the HBM bandwidth they leave ({:.0f}% "
        "taken: NCCL moves ~{:g} HBM bytes per bus byte); simulation.interference overrides it",
        sp.interference,
        model::is_sharded(par.strategy) ? "the sharded collectives" : "the bucket all-reduces",
        hw.gpu.sm_count, hw.gpu.sm_count, channels, m * 100, h * 100, kNcclHbmBytesPerBusByte));
  }
}

// The learning rate, the batch-size notes and, with a critical-batch model, the steps and time
// to the target and what they cost.
void add_training_target(const model::TrainingConfig& training, const model::ClusterConfig& cluster,
                         std::optional<double> gpu_hour_usd, Prediction& r) {
  if (training.lr) r.lr = scaled_lr(*training.lr, r.global_batch);
  // Linear scaling past Goyal et al.'s break point, a batch far past B_noise: the notes that
  // `ddpsim lr` prints, on every prediction (simulator/prediction/lr_schedule.hpp).
  if (training.lr || training.critical_batch) {
    for (std::string& w : batch_size_warnings(r.global_batch, training)) {
      r.warnings.push_back(std::move(w));
    }
  }
  r.steps_to_target = steps_to_target(training, static_cast<double>(r.global_batch));
  if (r.steps_to_target) {
    r.time_to_train_s = *r.steps_to_target * r.step_time_s;
    r.gpu_hours = *r.time_to_train_s * cluster.gpus / 3600.0;
    if (gpu_hour_usd) r.cost_usd = *r.gpu_hours * *gpu_hour_usd;
  } else {
    r.warnings.push_back("no training.target: steps_to_target and time_to_train are not computed");
  }
}

// Sharded with autocast, every weight's 16-bit cast lives from forward to backward unsharded
// (memory.cpp; each matmul saves its cast weight): say so when it is a large part of the memory,
// with what the FSDP units are assumed to be and what avoids the copies.
void add_autocast_copy_note(const model::TrainingConfig& training,
                            const model::ParallelismConfig& par, double params, Prediction& r) {
  const bool autocast = training.precision == model::Precision::kAmpBf16 ||
                        training.precision == model::Precision::kAmpFp16;
  if (!autocast || !model::is_sharded(par.strategy) ||
      (par.strategy == model::Strategy::kFsdp2 && par.fsdp2.param_dtype)) {
    return;
  }
  const double copies = params * model::dtype_bytes(model::compute_dtype(training.precision));
  const double total = r.memory.total();
  if (total <= 0 || copies < 0.25 * total) return;
  r.warnings.push_back(fmt::format(
      "memory: autocast keeps a 16-bit copy of every weight from forward to backward (each "
      "matmul saves its cast weight; aten/src/ATen/autocast_mode.cpp): {:.1f} of {:.1f} GiB per "
      "GPU, the whole model unsharded. Units are one per layer ({}); mixed precision in the "
      "sharding instead of autocast (FSDP MixedPrecision, fsdp2 mixed_precision.param_dtype, "
      "DeepSpeed bf16) gathers 16-bit weights and holds no such copy",
      copies / kGiB, total / kGiB,
      par.strategy == model::Strategy::kZero3
          ? "ZeRO-3 gathers each module's parameters"
          : "transformer_auto_wrap_policy; without an auto_wrap_policy FSDP wraps the whole "
            "model as one unit, which gathers it all at once"));
}

}  // namespace

Prediction Predictor::predict(const model::ClusterConfig& cluster,
                              const model::TrainingConfig& training,
                              const model::ParallelismConfig& par,
                              std::optional<double> gpu_hour_usd, double jitter_cv) const {
  const StepPlan sp = plan(cluster, training, par);
  Prediction r;
  r.gpus = cluster.gpus;
  r.nodes = sp.bandwidths.nodes;
  r.per_gpu_batch = training.per_gpu_batch;
  r.grad_accumulation = training.grad_accumulation;
  // Scenarios bound the product to 1e18 (model/scenario/scenario.cpp); a planner candidate or a
  // sweep point can combine larger values, which are refused rather than wrapped around.
  if (static_cast<double>(training.per_gpu_batch) * training.grad_accumulation * cluster.gpus >
      1e18) {
    throw InputError(file_, "/training/per_gpu_batch",
                     "per_gpu_batch x grad_accumulation x GPUs at most 1e18 samples",
                     fmt::format("{} x {} x {}", training.per_gpu_batch, training.grad_accumulation,
                                 cluster.gpus));
  }
  r.global_batch = training.per_gpu_batch * training.grad_accumulation * cluster.gpus;
  if (model::is_sharded(sp.strategy)) check_sharded_layout(file_, sp);  // before it is laid out
  r.strategy = par.strategy;
  r.warnings = sp.warnings;
  // Stragglers: a synchronous step waits for the slowest rank. With per-rank compute time
  // ~ Normal(mu, (cv mu)^2), the slowest of n ranks takes mu (1 + cv E[max of n]) on average
  // and mu (1 + cv x_q) at quantile q, where Phi(x_q)^n = q.
  const int n = cluster.gpus;
  const double mean_factor = jitter_cv > 0 ? 1.0 + jitter_cv * expected_max_std_normal(n) : 1.0;
  if (model::is_sharded(par.strategy)) {
    lay_out_sharded(sp, n, jitter_cv, mean_factor, r);
  } else {
    lay_out_ddp(sp, n, jitter_cv, mean_factor, r);
  }
  apply_input_floor(sp.input_floor_s, r);
  if (sp.measured) {
    // The same layout on the low and high ends of every measured interval.
    r.measured = sp.measured;
    r.step_time_low_s = steady_step_s(plan(cluster, training, par, Bound::kLow), mean_factor);
    r.step_time_high_s = steady_step_s(plan(cluster, training, par, Bound::kHigh), mean_factor);
  }
  add_interference_notes(sp, cluster, par, hw_, r);
  r.grad_bytes_total = sp.grad_bytes_total;
  add_flops_and_scaling(cluster, training, par, r);
  r.memory = memory_estimate(sp.hook_memory_bytes, cluster, training, par);
  r.fits_in_memory = fits(r.memory, hw_.gpu.memory_bytes);
  add_autocast_copy_note(training, par, param_count_, r);
  add_training_target(training, cluster, gpu_hour_usd, r);
  return r;
}

void Predictor::add_flops_and_scaling(const model::ClusterConfig& cluster,
                                      const model::TrainingConfig& training,
                                      const model::ParallelismConfig& par, Prediction& r) const {
  const int k = training.grad_accumulation;
  r.model_flops_per_step =
      total_flops_per_sample_ * static_cast<double>(training.per_gpu_batch) * k;
  // Activation checkpointing runs each checkpointed block's forward again in the backward (as
  // single_gpu_time charges it).
  const double recomputed_per_sample =
      recomputed_flops_per_sample(training.activation_checkpointing);
  r.hardware_flops_per_step =
      r.model_flops_per_step +
      recomputed_per_sample * static_cast<double>(training.per_gpu_batch) * k;
  if (auto peak = hw_.gpu.peak_flops.find(model::compute_dtype(training.precision));
      peak != hw_.gpu.peak_flops.end()) {
    r.peak_flops_per_gpu = peak->second;
  }
  // MFU of a run whose FLOPs are mostly TF32 is quoted against the TF32 tensor-core peak (what
  // the GPU could have done in the math it ran), as NVIDIA's and PyTorch's TF32 benchmarks do.
  if (training.precision == model::Precision::kFp32 && hw_.gpu.tf32_peak_flops > 0 &&
      layer_times(training.per_gpu_batch, training).tf32_flop_share > 0.5) {
    r.peak_flops_per_gpu = hw_.gpu.tf32_peak_flops;
  }
  r.tokens_per_sample = workload_->seq_len;

  r.throughput_samples_per_s = static_cast<double>(r.global_batch) / r.step_time_s;
  // Weak scaling: per-GPU throughput at N over that at 1 GPU with the same per-GPU batch.
  const double t1 = single_gpu_time(training.per_gpu_batch, k, training, par.strategy);
  r.weak_scaling_efficiency = t1 / r.step_time_s;
  // Strong scaling: T_1 / (N T_N) for the same global batch, which one GPU processes as N*k
  // micro-batches of per_gpu_batch with one optimizer step.
  const double t1_global =
      single_gpu_time(training.per_gpu_batch, k * cluster.gpus, training, par.strategy);
  r.strong_scaling_efficiency = t1_global / (cluster.gpus * r.step_time_s);
}

const MemoryEstimate& Predictor::memory_estimate(double hook_memory_bytes,
                                                 const model::ClusterConfig& cluster,
                                                 const model::TrainingConfig& training,
                                                 const model::ParallelismConfig& par) const {
  const int k = training.grad_accumulation;
  // Memory per GPU: model states by strategy, activations, buckets and buffers, the CUDA
  // context, NCCL buffers and fragmentation (simulator/prediction/memory.hpp states every term's
  // source).
  MemoryInputs mi;
  mi.workload = workload_.get();
  mi.precision = training.precision;
  mi.optimizer = training.optimizer;
  mi.strategy = par.strategy;
  mi.dp_size = cluster.gpus;
  mi.gpus_per_node = cluster.gpus_per_node;
  mi.micro_batch = training.per_gpu_batch;
  mi.gradient_as_bucket_view = par.gradient_as_bucket_view;
  mi.comm_hook_bytes = hook_memory_bytes;
  mi.activation_checkpointing = training.activation_checkpointing;
  mi.op_policies = &op_policies_;
  mi.float8 = training.float8;
  mi.zero_offload = par.offload;
  mi.float8 = training.float8;
  mi.reduce_bucket_elements = par.reduce_bucket_elements;
  mi.allgather_bucket_elements = par.allgather_bucket_elements;
  mi.fsdp2 = par.fsdp2;
  mi.grad_accumulation = k;
  mi.grad_reduce_dtype = training.grad_reduce_dtype;
  // The estimate walks the workload and formats its notes (~10 us); sweeps repeat the same
  // inputs, and under DDP the data-parallel size only matters as 1 (no Reducer, no NCCL) or more.
  const int dp_key =
      par.strategy == model::Strategy::kDdp ? std::min(cluster.gpus, 2) : cluster.gpus;
  const auto mkey =
      std::make_tuple(static_cast<int>(training.precision), static_cast<int>(training.optimizer),
                      static_cast<int>(par.strategy), dp_key, cluster.gpus_per_node,
                      training.per_gpu_batch, par.gradient_as_bucket_view, mi.comm_hook_bytes,
                      model::checkpointing_key(mi.activation_checkpointing) +
                          float8_key(training.float8) * (1 << 24),
                      mi.reduce_bucket_elements, mi.allgather_bucket_elements);
  auto mit = memory_cache_.find(mkey);
  if (par.strategy == model::Strategy::kFsdp2 || par.offload) {
    // FSDP2's memory depends on its knobs and the micro-batches too, ZeRO-Offload's on where
    // the states live: not cached.
    mit = memory_cache_.end();
    memory_cache_.erase(mkey);
  }
  if (mit == memory_cache_.end()) {
    if (memory_cache_.size() >= 32768) memory_cache_.clear();  // a 1M-candidate plan has ~10k keys
    mit = memory_cache_.emplace(mkey, estimate_memory(mi)).first;
  }
  return mit->second;
}

}  // namespace ddpsim::sim
