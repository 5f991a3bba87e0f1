// analytic.cpp: the Predictor (analytic.hpp) itself: its construction, caches and lookups (layer
// times, bucket plans, bandwidths, the profile's GEMMs, collectives and optimizer, a torch
// calibration's entry), the profile overlay of a plan (plan_profiled) and one GPU's step. Its plan
// is analytic_plan.cpp, its prediction analytic_predict.cpp.
#include "simulator/analytic/analytic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "model/error.hpp"
#include "simulator/analytic/ddp_timeline.hpp"
#include "simulator/analytic/float8_cost.hpp"
#include "simulator/analytic/kernel_rates.hpp"
#include "simulator/analytic/normal_order_stats.hpp"
#include "simulator/analytic/sharded.hpp"
#include "simulator/prediction/lr_schedule.hpp"

namespace ddpsim::sim {

using model::CommHook;
using model::DType;
using model::Optimizer;
using model::Precision;

namespace {

constexpr const char* kNoAttentionKernelNote =
    "fused attention costed at the GEMM rate of its products: no attention kernel benchmark for "
    "this GPU and precision (hardware.gpu.attention_efficiency, fp16/bf16 only)";

// Autocast (amp_bf16, amp_fp16) keeps fp32 parameters and casts each weight a GEMM reads to the
// 16-bit type in every forward (torch.autocast: linear, matmul and conv run in the lower type;
// the cast cache lives for one autocast region, i.e. one micro-batch): the cast reads 4 and
// writes 2 bytes per element, and its backward (ToCopyBackward) turns the 16-bit weight gradient
// into fp32, reading 2 and writing 4. Matrices (and conv kernels) of layers that run library
// GEMMs, tied ones included (lm_head casts the shared embedding each time); norms and embedding
// lookups are on autocast's fp32 list and cast nothing. Bytes per micro-batch, each direction.
// Not charged where the weights already are 16-bit: FSDP2 with MixedPrecisionPolicy.param_dtype
// all-gathers them cast (its copy-in casts the shard), and autocast's cached_cast returns a
// tensor already in the target dtype as it is (aten/src/ATen/autocast_mode.cpp); torchtitan runs
// no autocast at all under FSDP (torchtitan/distributed/utils.py maybe_enable_amp: "FSDP handles
// mixed precision internally"). simulator/prediction/memory.cpp holds no copies there either.
double autocast_weight_cast_bytes(const model::Workload& w, std::size_t layer, Precision p) {
  if (p != Precision::kAmpBf16 && p != Precision::kAmpFp16) return 0.0;
  const model::Layer& l = w.layers[layer];
  const bool runs_gemms = std::any_of(l.gemms.begin(), l.gemms.end(), [](const model::Gemm& g) {
    return g.kernel == model::GemmKernel::kLibrary;
  });
  if (!runs_gemms) return 0.0;
  double elements = 0;
  for (int t = l.first_tensor; t < l.first_tensor + l.tensor_count; ++t) {
    const model::ParamTensor& pt = w.tensors[static_cast<std::size_t>(t)];
    if (pt.is_matrix()) elements += static_cast<double>(pt.numel());
  }
  return 6.0 * elements;
}

void add_unique_note(std::vector<std::string>& notes, const std::string& note) {
  if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
}

// Bytes one optimizer step reads and writes in HBM per parameter.
// Fused (one kernel: torch._fused_adam_, DeepSpeed's FusedAdam, apex): read param, grad, m, v;
// write param, m, v (Adam: 7 x 4 in fp32). With fp32 master weights the 16-bit param and grad
// are read/written in 2 bytes and the master in 4.
double fused_optimizer_bytes(Optimizer o, Precision p) {
  const bool master = p == Precision::kBf16 || p == Precision::kFp16;
  const double param_rw = master ? 2.0 + 4.0 + 4.0 : 4.0 + 4.0;  // (write 16-bit) + master r/w
  const double grad_r = master ? 2.0 : 4.0;
  switch (o) {
    case Optimizer::kSgd:
      return param_rw + grad_r;
    case Optimizer::kMomentum:
      return param_rw + grad_r + 8.0;
    case Optimizer::kAdam:
    case Optimizer::kAdamW:
      return param_rw + grad_r + 16.0;
  }
  DDPSIM_ASSERT(false, "unknown optimizer");
}

// Foreach (PyTorch's CUDA default) runs one multi-tensor kernel per operation, each a full pass
// over its operands (fp32 params, grads and state; 4 bytes each). torch/optim/adam.py
// _multi_tensor_adam, weight_decay 0 (Adam's default):
//   _foreach_lerp_(exp_avgs, grads)            read m, g, write m      12
//   _foreach_mul_(exp_avg_sqs, beta2)          read v, write v          8
//   _foreach_addcmul_(exp_avg_sqs, g, g)       read v, g, write v      12
//   _foreach_sqrt(exp_avg_sqs) -> tmp          read v, write tmp        8
//   _foreach_div_(tmp, bias_correction2_sqrt)  read, write tmp          8
//   _foreach_add_(tmp, eps)                    read, write tmp          8
//   _foreach_addcdiv_(params, exp_avgs, tmp)   read p, m, tmp, write p 16   = 72
// adamw.py _multi_tensor_adamw first decays the parameters, _foreach_mul_(params, 1 - lr x
// weight_decay) (default 1e-2): + 8 = 80. sgd.py _multi_tensor_sgd: plain SGD
// _foreach_add_(params, grads, alpha=-lr), 12; with momentum _foreach_mul_(bufs) 8,
// _foreach_add_(bufs, grads) 12, _foreach_add_(params, bufs) 12 = 32. A for-loop over the
// tensors (_single_tensor_*) runs the same operations per tensor: the same bytes. With fp32
// master weights (bf16/fp16 precision) the 16-bit gradients are first cast up (read 2, write 4)
// and the updated master cast down into the 16-bit parameters (read 4, write 2): + 12.
double foreach_optimizer_bytes(Optimizer o, Precision p) {
  const bool master = p == Precision::kBf16 || p == Precision::kFp16;
  double bytes = 0;
  switch (o) {
    case Optimizer::kSgd:
      bytes = 12;
      break;
    case Optimizer::kMomentum:
      bytes = 32;
      break;
    case Optimizer::kAdam:
      bytes = 72;
      break;
    case Optimizer::kAdamW:
      bytes = 80;
      break;
  }
  return bytes + (master ? 12.0 : 0.0);
}

double optimizer_traffic_bytes(Optimizer o, Precision p, model::OptimizerImpl impl) {
  return impl == model::OptimizerImpl::kFused ? fused_optimizer_bytes(o, p)
                                              : foreach_optimizer_bytes(o, p);
}

void add_note(MeasuredSources& m, const std::string& note) {
  m.extrapolated = true;
  if (std::find(m.notes.begin(), m.notes.end(), note) == m.notes.end()) m.notes.push_back(note);
}

double pick(const model::Estimate& e, Predictor::Bound b) {
  switch (b) {
    case Predictor::Bound::kLow:
      return e.low_s;
    case Predictor::Bound::kHigh:
      return e.high_s;
    case Predictor::Bound::kMedian:
      break;
  }
  return e.time_s;
}

}  // namespace

Predictor::Predictor(std::shared_ptr<const model::Workload> workload, model::HardwareSpec hardware,
                     std::string file)
    : workload_(std::move(workload)), hw_(std::move(hardware)), file_(std::move(file)) {
  DDPSIM_ASSERT(workload_ != nullptr, "no workload");
  param_count_ = static_cast<double>(workload_->param_count());
  buffer_bytes_ = workload_->buffer_bytes();
  activation_bytes_per_sample_ = workload_->activation_bytes_per_sample();
  for (const model::Layer& l : workload_->layers) {
    layer_fwd_flops_.push_back(l.fwd_flops_per_sample());
    layer_bwd_flops_.push_back(l.bwd_flops_per_sample());
    is_block_.push_back(model::is_transformer_block(l));
    op_policies_.push_back(is_block_.back() ? model::op_policy(*workload_, l)
                                            : model::OpCheckpointPolicy{});
    total_flops_per_sample_ += layer_fwd_flops_.back() + layer_bwd_flops_.back();
  }
  if (hw_.profile) torch_ = TorchCalibration::from_profile(*hw_.profile);
}

const MeasuredCosts* Predictor::measured_compute(const model::TrainingConfig& t,
                                                 std::string* why) const {
  if (measured_) return measured_.get();
  if (!torch_) return nullptr;
  std::string reason;
  const TorchCalibration::Entry* e =
      torch_->entry(*workload_, t.per_gpu_batch, t.optimizer, &reason);
  if (e == nullptr && why != nullptr) *why = reason;
  return e != nullptr ? &e->costs : nullptr;
}

Predictor::Predictor(const model::Scenario& s) : Predictor(s.workload, s.hardware, s.file) {
  interference_ = resolve_interference(s, &interference_source_);
}

double resolve_interference(const model::Scenario& s, std::string* source) {
  auto say = [source](const char* what) {
    if (source != nullptr) *source = what;
  };
  if (s.simulation.interference_given) {
    say("scenario");
    return s.simulation.interference;
  }
  if (s.hardware.profile) {
    if (const std::optional<double> f = s.hardware.profile->interference_factor()) {
      say("profile");
      return *f;
    }
  }
  say("default");
  return 1.0;
}

std::optional<double> Predictor::profile_optimizer_s(const model::TrainingConfig& t,
                                                     model::OptimizerImpl impl, Bound bound) const {
  // calibrate times one fused Adam update in fp32 (7 x 4 bytes per element, kernel
  // "adam_fp32"); its time per element times the parameter count is the optimizer step of an
  // fp32 Adam/AdamW model, scaled by the bytes another implementation moves (foreach: 72 or 80
  // of 28; both memory-bound). Other optimizers or precisions use the measured memory
  // bandwidth.
  if (!hw_.profile || t.precision != Precision::kFp32 ||
      (t.optimizer != Optimizer::kAdam && t.optimizer != Optimizer::kAdamW)) {
    return std::nullopt;
  }
  const nlohmann::json& doc = hw_.profile->document();
  const auto kernels = doc.find("kernels");
  if (kernels == doc.end() || !kernels->is_array()) return std::nullopt;
  for (const nlohmann::json& k : *kernels) {
    if (k.value("name", "") != "adam_fp32" || k.value("elements", 0.0) <= 0) continue;
    const char* key =
        bound == Bound::kLow    ? (k.contains("time_p10_s") ? "time_p10_s" : "time_min_s")
        : bound == Bound::kHigh ? (k.contains("time_p90_s") ? "time_p90_s" : "time_max_s")
                                : "time_s";
    const double time = k.value(key, k.value("time_s", 0.0));
    if (time <= 0) continue;
    return param_count_ * time / k.at("elements").get<double>() *
           optimizer_traffic_bytes(t.optimizer, t.precision, impl) /
           fused_optimizer_bytes(t.optimizer, t.precision);
  }
  return std::nullopt;
}

std::optional<double> Predictor::profile_collective_s(model::CollectiveOp op, double bytes,
                                                      int gpus, Bound bound,
                                                      MeasuredSources* m) const {
  if (!hw_.profile || gpus < 2) return std::nullopt;
  const model::CollectiveTable* t = hw_.profile->collective(op);
  if (t == nullptr) {
    if (m != nullptr) {
      add_note(*m, fmt::format("the profile has no {} table: the alpha-beta model costs it",
                               model::collective_op_name(op)));
    }
    return std::nullopt;
  }
  if (t->ranks != gpus) {
    // Rescaling a 2-rank table to thousands of ranks is the model's job (its topology), not
    // the table's: keep the model and say so.
    if (m != nullptr) {
      add_note(*m, fmt::format("the profile's {} was measured on {} ranks, the scenario has {}: "
                               "the alpha-beta model costs it",
                               model::collective_op_name(op), t->ranks, gpus));
    }
    return std::nullopt;
  }
  const model::Estimate e = hw_.profile->collective_time_s(op, bytes, gpus);
  if (e.extrapolated && m != nullptr) add_note(*m, e.note);
  return pick(e, bound);
}

double Predictor::optimizer_time(const model::TrainingConfig& t, model::OptimizerImpl impl) const {
  if (auto measured = profile_optimizer_s(t, impl, Bound::kMedian)) return *measured;
  const double bytes = param_count_ * optimizer_traffic_bytes(t.optimizer, t.precision, impl);
  return bytes / (hw_.gpu.memory_bandwidth * hw_.gpu.memory_efficiency);
}

Roofline Predictor::roofline(DType dt) const {
  Roofline r;
  if (auto it = hw_.gpu.peak_flops.find(dt); it != hw_.gpu.peak_flops.end()) {
    r.flops_per_s = it->second * hw_.gpu.efficiency.at(dt);
  }
  r.bytes_per_s = hw_.gpu.memory_bandwidth * hw_.gpu.memory_efficiency;
  return r;
}

double Predictor::recomputed_flops_per_sample(const model::ActivationCheckpointing& ac) const {
  if (!ac.enabled()) return 0.0;
  double flops = 0;
  int block = 0;
  for (std::size_t i = 0; i < is_block_.size(); ++i) {
    if (!is_block_[i] || !model::checkpoints_block(ac, block++)) continue;
    flops += ac.mode == model::CheckpointMode::kSelectiveOp
                 ? op_policies_[i].recomputed_flops_per_sample
                 : layer_fwd_flops_[i];
  }
  return flops;
}

int Predictor::float8_key(const std::optional<model::Float8Config>& c) const {
  if (!c) return 0;
  const auto it = std::find(float8_configs_.begin(), float8_configs_.end(), *c);
  if (it != float8_configs_.end()) return static_cast<int>(it - float8_configs_.begin()) + 1;
  float8_configs_.push_back(*c);
  return static_cast<int>(float8_configs_.size());
}

const Predictor::LayerTimes& Predictor::layer_times(std::int64_t batch,
                                                    const model::TrainingConfig& t, Bound bound,
                                                    bool weights_cast) const {
  const DType dt = model::compute_dtype(t.precision);
  const double measured = t.single_gpu_step_s.value_or(0.0);
  // A measured single_gpu_step_s is a plain PyTorch step: its optimizer runs as it does for ddp.
  const model::OptimizerImpl impl = model::optimizer_impl_for(t, model::Strategy::kDdp);
  const auto key =
      std::make_tuple(batch, static_cast<int>(dt), measured,
                      static_cast<int>(t.optimizer) * 8 + static_cast<int>(impl),
                      static_cast<int>(t.precision) * 8 + (t.channels_last ? 4 : 0) +
                          (t.allow_tf32_matmul ? 2 : 0) + (t.allow_tf32_cudnn ? 1 : 0),
                      static_cast<int>(bound) * 4 + (t.compile ? 2 : 0) + (weights_cast ? 1 : 0),
                      float8_key(t.float8));
  if (auto it = layer_cache_.find(key); it != layer_cache_.end()) return it->second;

  LayerTimes lt;
  const std::size_t nl = workload_->layers.size();
  lt.fwd.assign(nl, 0.0);
  lt.bwd.assign(nl, 0.0);
  lt.fwd_op_recompute.assign(nl, 0.0);
  if (t.single_gpu_step_s) {
    // A measured step at per_gpu_batch: what is not the optimizer is forward+backward, split
    // across layers by FLOPs (DESIGN: "a measured single_gpu_step_s split across layers").
    const double compute = *t.single_gpu_step_s - optimizer_time(t, impl);
    if (compute <= 0) {
      throw InputError(file_, "/training/single_gpu_step_s",
                       "a step longer than the optimizer step alone (" +
                           std::to_string(optimizer_time(t, impl)) + " s)",
                       std::to_string(*t.single_gpu_step_s));
    }
    const double per_flop = total_flops_per_sample_ > 0 ? compute / total_flops_per_sample_ : 0.0;
    for (std::size_t i = 0; i < nl; ++i) {
      lt.fwd[i] = layer_fwd_flops_[i] * per_flop;
      lt.bwd[i] = layer_bwd_flops_[i] * per_flop;
      lt.fwd_op_recompute[i] = op_policies_[i].recomputed_flops_per_sample * per_flop;
    }
    // The measurement was taken at the scenario's per-GPU batch; other batches scale linearly.
    // (Callers only use the measured path at that batch; sweeps over per_gpu_batch warn.)
  } else {
    DDPSIM_ASSERT(hw_.gpu.peak_flops.count(dt) > 0, "precision checked by the loader");
    const Roofline fp_roof = roofline(dt);
    // TF32 tensor-core math for the fp32 GEMMs PyTorch lets run it (kernel_rates.hpp runs_tf32):
    // the preset's tf32 rate; operands and outputs stay fp32 in memory.
    Roofline tf32_roof = fp_roof;
    tf32_roof.flops_per_s = hw_.gpu.tf32_peak_flops * hw_.gpu.tf32_efficiency;
    const double mem_rate = fp_roof.bytes_per_s;
    const double elem = model::dtype_bytes(dt);
    const double act_scale = elem / model::dtype_bytes(workload_->activation_dtype);
    double tf32_flops = 0, all_flops = 0;
    // Every fused attention product of the model has the same shape: its kernel rates once.
    double fused_fwd_rate = 0, fused_bwd_rate = 0;
    {
      AttentionShape shape;  // a hand-built workload's fused products: the preset's rate
      if (workload_->attention) {
        shape = {*workload_->attention, static_cast<double>(workload_->seq_len),
                 static_cast<double>(workload_->attention_head_dim), workload_->attention_causal};
      }
      std::string series;
      fused_fwd_rate =
          fused_attention_flops_per_s(hw_.gpu, dt, model::GemmRole::kForward, shape, &series);
      fused_bwd_rate = fused_attention_flops_per_s(hw_.gpu, dt, model::GemmRole::kInputGrad, shape);
      if (fused_fwd_rate > 0 && shape.impl == model::AttentionImpl::kTriton && series == "flash1") {
        add_unique_note(lt.notes, "no Triton attention benchmark for " + hw_.gpu.name +
                                      ": attention triton costed at FlashAttention-1's measured "
                                      "rate on it (same algorithm, no Hopper wgmma/TMA)");
      } else if (fused_fwd_rate > 0 && shape.impl == model::AttentionImpl::kTriton &&
                 series != "triton") {
        add_unique_note(lt.notes, "no Triton attention benchmark for " + hw_.gpu.name +
                                      ": attention triton costed at FlashAttention-2's rate "
                                      "(optimistic)");
      }
    }
    for (std::size_t i = 0; i < nl; ++i) {
      const model::Layer& l = workload_->layers[i];
      const bool tf32 = runs_tf32(hw_.gpu, dt, l, t);
      const Roofline& roof = tf32 ? tf32_roof : fp_roof;
      const double flops_rate = roof.flops_per_s;
      if (tf32) tf32_flops += layer_fwd_flops_[i] + layer_bwd_flops_[i];
      all_flops += layer_fwd_flops_[i] + layer_bwd_flops_[i];
      if (l.explicit_fwd_flops_per_sample > 0) {
        lt.fwd[i] = l.explicit_fwd_flops_per_sample * static_cast<double>(batch) / flops_rate;
        lt.bwd[i] = 2.0 * lt.fwd[i];
      }
      // Float8Linear's GEMMs (training.float8). Op-level checkpointing treats them as the mm's
      // they are called as: the policy's dispatch mode sees aten.mm before the Float8 tensor
      // subclass turns it into torch._scaled_mm, so every second one is recomputed, with its
      // casts (the amax, aten.max, is saved: a small over-count).
      const std::vector<bool> f8 =
          t.float8 ? model::float8_gemms(l, *t.float8) : std::vector<bool>{};
      const model::OpCheckpointPolicy& policy = op_policies_[i];
      for (const model::Gemm& g : l.gemms) {
        ++lt.gemms_total;
        double time = 0;
        const std::size_t gi = static_cast<std::size_t>(&g - l.gemms.data());
        if (!f8.empty() && f8[gi]) {
          const Float8GemmCost c =
              float8_gemm_cost(hw_.gpu, g.at_batch(batch), g.role, dt, *t.float8,
                               t.float8->fsdp_float8_all_gather, t.compile);
          if (c.fp8) {
            time = c.gemm_s + c.memory_s;
            if (g.role != model::GemmRole::kForward) lt.bwd_memory_total += c.memory_s;
            (g.role == model::GemmRole::kForward ? lt.fwd[i] : lt.bwd[i]) += time;
            if (!policy.gemm_recomputed.empty() && policy.gemm_recomputed[gi]) {
              lt.fwd_op_recompute[i] += time;
            }
            continue;
          }
        }
        // A GEMM the profile timed (its family, interpolated to this batch) replaces the
        // roofline; the profile's roofline (its best GEMM rate) covers the rest.
        // A fused attention product runs at the attention kernel's rate when one is known;
        // otherwise (a profile's GEMMs, fp32, a GPU without flash kernels) at the same product's
        // GEMM rate, scaled to the FLOPs the fused kernel executes.
        const bool fused = g.kernel == model::GemmKernel::kFusedAttention;
        const model::GemmShape s = g.at_batch(batch);
        const double fused_rate =
            fused ? (g.role == model::GemmRole::kForward ? fused_fwd_rate : fused_bwd_rate) : 0.0;
        std::optional<model::Estimate> e;
        if (hw_.profile && fused_rate == 0) e = hw_.profile->gemm_time_s(g, dt, batch);
        if (fused_rate > 0) {
          time = s.flops() * g.executed_flop_factor / fused_rate;
        } else if (e) {
          ++lt.gemms_measured;
          time = pick(*e, bound) * g.executed_flop_factor;
          if (e->extrapolated) add_unique_note(lt.notes, e->note);
        } else {
          const double bytes = elem * static_cast<double>(s.count) *
                               static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n);
          Roofline shaped = roof;
          const GemmTiling tiling = gemm_tiling(s, hw_.gpu.sm_count);
          shaped.flops_per_s *=
              tiling.utilization * (tf32 ? 1.0 : gemm_shape_factor(hw_.gpu, dt, s));
          time = roof.flops_per_s > 0 ? shaped.time_s(s.flops() * g.executed_flop_factor, bytes)
                                      : roof.time_s(0, bytes);
          const double split_k = split_k_reduction_bytes(s, tiling.split_k, elem) / mem_rate;
          time += split_k;
          if (g.role != model::GemmRole::kForward) lt.bwd_memory_total += split_k;
          if (fused) add_unique_note(lt.notes, kNoAttentionKernelNote);
        }
        (g.role == model::GemmRole::kForward ? lt.fwd[i] : lt.bwd[i]) += time;
        if (!policy.gemm_recomputed.empty() && policy.gemm_recomputed[gi]) {
          lt.fwd_op_recompute[i] += time;
        }
      }
      const bool block = model::is_transformer_block(l);
      for (const model::ElementwiseOp& e : l.elementwise) {
        // Bytes at the streaming rate plus each kernel's floor (GpuSpec::kernel_floor_s): a
        // small tensor's kernel costs its launch and ramp, not its bytes.
        // torch.compile: the op's share of its fused kernel where the builder states one.
        const bool fused = t.compile && e.compiled_bytes_per_sample >= 0;
        const double bytes = fused ? e.compiled_bytes_per_sample : e.bytes_per_sample;
        const int kernels = fused ? e.compiled_kernels : e.kernels;
        const double time = bytes * act_scale * static_cast<double>(batch) / mem_rate +
                            static_cast<double>(kernels) * hw_.gpu.kernel_floor_s;
        (e.role == model::GemmRole::kForward ? lt.fwd[i] : lt.bwd[i]) += time;
        if (e.role != model::GemmRole::kForward) lt.bwd_memory_total += time;
        if (block && e.role == model::GemmRole::kForward) lt.fwd_op_recompute[i] += time;
      }
      const double cast =
          weights_cast ? autocast_weight_cast_bytes(*workload_, i, t.precision) / mem_rate : 0.0;
      lt.fwd[i] += cast;
      lt.bwd[i] += cast;
      // The recompute runs in a fresh autocast context: its weight casts run again.
      if (block) lt.fwd_op_recompute[i] += cast;
      const double b = static_cast<double>(batch);
      lt.fwd[i] +=
          nchw_transpose_bytes(hw_.gpu, dt, l, t, model::GemmRole::kForward) * b / mem_rate;
      const double transpose =
          nchw_transpose_bytes(hw_.gpu, dt, l, t, model::GemmRole::kInputGrad) * b / mem_rate;
      lt.bwd[i] += transpose;
      lt.bwd_memory_total += cast + transpose;
    }
    lt.tf32_flop_share = all_flops > 0 ? tf32_flops / all_flops : 0.0;
  }
  for (std::size_t i = 0; i < nl; ++i) {
    lt.fwd_total += lt.fwd[i];
    lt.bwd_total += lt.bwd[i];
  }
  return layer_cache_.emplace(key, std::move(lt)).first->second;
}

const Predictor::CachedPlan& Predictor::buckets(const model::BucketOptions& o) const {
  const auto key = std::make_tuple(o.grad_bytes, o.cap_bytes, o.cap_defaulted, o.first_bucket_bytes,
                                   o.find_unused_parameters, o.static_graph, o.first_iteration);
  if (auto it = bucket_cache_.find(key); it != bucket_cache_.end()) return it->second;
  // Sweeps over the cap would otherwise keep every plan they ever saw.
  if (bucket_cache_.size() >= 64) bucket_cache_.clear();
  CachedPlan c;
  c.plan = model::assign_buckets(*workload_, o);
  // Most buckets share a handful of sizes (gpt3-175b: 386 buckets, 6 sizes).
  std::map<std::int64_t, int> index;
  c.size_index.reserve(c.plan.buckets.size());
  for (const model::Bucket& b : c.plan.buckets) {
    auto [it, inserted] = index.emplace(b.bytes, static_cast<int>(c.distinct_bytes.size()));
    if (inserted) c.distinct_bytes.push_back(b.bytes);
    c.size_index.push_back(it->second);
  }
  return bucket_cache_.emplace(key, std::move(c)).first->second;
}

const model::CollectiveBandwidths& Predictor::bandwidths(int gpus) const {
  if (auto it = bw_cache_.find(gpus); it != bw_cache_.end()) return it->second;
  const int key = model::topology_shape_key(hw_, gpus);
  auto shape = shape_cache_.find(key);
  if (shape == shape_cache_.end()) {
    shape = shape_cache_.emplace(key, model::Topology(hw_, gpus).bandwidths()).first;
  }
  model::CollectiveBandwidths bw = shape->second;
  bw.gpus = gpus;
  bw.nodes = gpus <= bw.gpus_per_node ? 1 : gpus / bw.gpus_per_node;
  if (bw_cache_.size() >= 4096) bw_cache_.clear();
  return bw_cache_.emplace(gpus, bw).first->second;
}

double Predictor::steady_step_s(const StepPlan& sp, double f) const {
  if (model::is_sharded(sp.strategy)) return sharded_timeline(sp, f).step_s;
  const DdpTimeline tl = ddp_timeline(sp, f, sp.buckets);
  return tl.sync_end() + sp.optimizer_s;
}

double Predictor::single_gpu_time(std::int64_t batch, int micro_batches,
                                  const model::TrainingConfig& t, model::Strategy s) const {
  const LayerTimes& lt = layer_times(batch, t);
  // One GPU alone has its node's whole input pipeline (input_floor_s with one GPU).
  const double input_floor =
      input_floor_s(t, 1, 1, static_cast<double>(batch) * static_cast<double>(micro_batches));
  double recompute = 0;
  if (t.activation_checkpointing.enabled()) {
    std::vector<double> extra(lt.fwd.size(), 0.0);
    add_recomputation(*workload_, t.activation_checkpointing, extra, lt.fwd, lt.fwd_op_recompute);
    for (double x : extra) recompute += x;
  }
  if (const MeasuredCosts* mc = measured_compute(t);
      mc != nullptr && (mc->has_compute() || mc->optimizer_s)) {
    // One GPU runs the measured compute (whose micro-batch holds any recomputation) and
    // optimizer; parts left unmeasured keep the model's.
    const MeasuredCosts& m = *mc;
    const auto sum = [](const std::vector<double>& v) {
      double x = 0;
      for (double y : v) x += y;
      return x;
    };
    const double fwd =
        !m.layer_fwd_s.empty() ? sum(m.layer_fwd_s) : m.forward_s.value_or(lt.fwd_total);
    const double bwd = !m.layer_bwd_s.empty() ? sum(m.layer_bwd_s)
                                              : m.backward_s.value_or(lt.bwd_total + recompute);
    return std::max(input_floor,
                    micro_batches * (fwd + bwd) +
                        m.optimizer_s.value_or(optimizer_time(t, model::optimizer_impl_for(t, s))));
  }
  return std::max(input_floor, micro_batches * (lt.fwd_total + lt.bwd_total + recompute) +
                                   optimizer_time(t, model::optimizer_impl_for(t, s)));
}

StepPlan Predictor::plan_profiled(const model::ClusterConfig& cluster,
                                  const model::TrainingConfig& training,
                                  const model::ParallelismConfig& par, Bound bound) const {
  StepPlan sp = plan_model(cluster, training, par, bound);
  if (!hw_.profile) {
    // How the presets costed the layers (e.g. fused attention without a kernel benchmark).
    if (!training.single_gpu_step_s) {
      for (const std::string& n : layer_times(training.per_gpu_batch, training, bound).notes) {
        sp.warnings.push_back(n);
      }
    }
    return sp;
  }
  // Which pieces the profile measured (MeasuredSources); collectives it swept at this rank count
  // replace the alpha-beta costs planned above.
  MeasuredSources m;
  m.profile = hw_.profile->file();
  const LayerTimes& lt = layer_times(training.per_gpu_batch, training, bound);
  m.gemms_measured = lt.gemms_measured;
  m.gemms_total = lt.gemms_total;
  for (const std::string& n : lt.notes) add_note(m, n);
  if (training.single_gpu_step_s) {
    m.notes.push_back("training.single_gpu_step_s replaces the profile's GEMM times");
  }
  if (auto opt =
          profile_optimizer_s(training, model::optimizer_impl_for(training, par.strategy), bound)) {
    sp.optimizer_s = *opt / sp.shard_group;  // a sharded rank steps its 1/shard of the state
    m.optimizer = "profile_kernel";
  } else {
    m.optimizer = hw_.profile->memory_bandwidth_bytes_per_s("triad") ||
                          hw_.profile->memory_bandwidth_bytes_per_s("copy") ||
                          hw_.profile->memory_bandwidth_bytes_per_s("d2d_copy")
                      ? "profile_bandwidth"
                      : "model";
  }
  const int n = cluster.gpus;
  auto lookup = [&](model::CollectiveOp op, double bytes) -> std::optional<double> {
    ++m.collectives_total;
    auto t = profile_collective_s(op, bytes, n, bound, &m);
    if (t) ++m.collectives_measured;
    return t;
  };
  if (n > 1) {
    if (!model::is_sharded(par.strategy)) {
      const bool plain = par.comm_hook.kind == CommHook::Kind::kNone ||
                         par.comm_hook.kind == CommHook::Kind::kFp16 ||
                         par.comm_hook.kind == CommHook::Kind::kBf16;
      if (plain) {
        // DDP buckets: one all-reduce of the bucket's wire bytes each (nccl-tests' size S).
        std::map<std::int64_t, std::optional<double>> by_size;
        for (PlannedBucket& b : sp.buckets) {
          auto [it, inserted] = by_size.try_emplace(b.cost.bytes);
          if (inserted) {
            it->second = lookup(model::CollectiveOp::kAllReduce, static_cast<double>(b.cost.bytes));
          }
          if (!it->second) continue;
          b.collective_s = *it->second;
          b.cost.busbw_gbytes_per_s =
              *it->second > 0 ? static_cast<double>(b.cost.bytes) / *it->second *
                                    model::busbw_factor(model::CollectiveOp::kAllReduce, n) / 1e9
                              : 0.0;
        }
        if (sp.first_iteration_allreduce_s > 0) {
          if (auto t =
                  lookup(model::CollectiveOp::kAllReduce, sp.grad_bytes_total * sp.wire_scale)) {
            sp.first_iteration_allreduce_s = *t;
          }
        }
      } else {
        m.notes.push_back(fmt::format("comm_hook {}: its collectives stay on the alpha-beta model",
                                      par.comm_hook.text));
      }
      if (sp.buffer_broadcast_s > 0) {
        if (auto t = lookup(model::CollectiveOp::kBroadcast, buffer_bytes_)) {
          sp.buffer_broadcast_s = *t;
        }
      }
    } else if (par.strategy == model::Strategy::kFsdpHybrid) {
      m.notes.push_back(
          "hybrid_shard: its intra- and inter-node groups stay on the alpha-beta "
          "model (the profile measured one group of all ranks)");
    } else {
      // Sharded schedules: each single-call all-gather / reduce-scatter / all-reduce of
      // nccl-tests size cost.bytes (DeepSpeed's per-owner reduces stay on the model).
      for (ScheduledCollective& c : sp.schedule) {
        // FSDP2's replicate and post-forward groups are not the group the profile measured.
        if (c.cost.calls != 1 || c.cost.kind == model::CollectiveOp::kReduce || c.stream != 0) {
          continue;
        }
        const model::CollectiveOp op = c.cost.kind == model::CollectiveOp::kAllGather
                                           ? model::CollectiveOp::kAllGather
                                       : c.cost.kind == model::CollectiveOp::kReduceScatter
                                           ? model::CollectiveOp::kReduceScatter
                                           : model::CollectiveOp::kAllReduce;
        if (auto t = lookup(op, static_cast<double>(c.cost.bytes))) {
          c.collective_s = *t;
          c.cost.busbw_gbytes_per_s =
              *t > 0 ? static_cast<double>(c.cost.bytes) / *t * model::busbw_factor(op, n) / 1e9
                     : 0.0;
        }
      }
    }
  }
  m.collectives = m.collectives_total == 0                        ? "none"
                  : m.collectives_measured == m.collectives_total ? "profile"
                  : m.collectives_measured == 0                   ? "model"
                                                                  : "partial";
  for (const std::string& note : m.notes) sp.warnings.push_back("profile: " + note);
  for (const std::string& w : hw_.warnings) sp.warnings.push_back("profile: " + w);
  sp.measured = std::move(m);
  return sp;
}

}  // namespace ddpsim::sim
