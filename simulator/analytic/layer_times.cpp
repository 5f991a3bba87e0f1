// layer_times.cpp: Predictor::layer_times (analytic.hpp), the forward and backward time of every
// layer at a micro-batch: GEMMs (the profile's, the fused attention kernels' measured rates, or
// the roofline with tile and shape factors), Float8Linear's fp8 GEMMs and casts
// (float8_cost.hpp), element-wise kernels (eager or torch.compile's fused costs), autocast's weight
// casts and cuDNN's layout transposes; what op-level checkpointing reruns; and the caches' keys.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/analytic/float8_cost.hpp"
#include "simulator/analytic/kernel_rates.hpp"

namespace ddpsim::sim {

using model::DType;
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

}  // namespace

double Predictor::recomputed_flops_per_sample(const model::ActivationCheckpointing& ac) const {
  if (!ac.enabled()) return 0.0;
  const int key = model::checkpointing_key(ac);
  if (auto it = recompute_flops_cache_.find(key); it != recompute_flops_cache_.end()) {
    return it->second;
  }
  return recompute_flops_cache_.emplace(key, model::recomputed_flops_per_sample(*workload_, ac))
      .first->second;
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

}  // namespace ddpsim::sim
