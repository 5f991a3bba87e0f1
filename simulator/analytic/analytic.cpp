// analytic.cpp: the Predictor (analytic.hpp) itself: its construction, caches and lookups (bucket
// plans, bandwidths, the profile's collectives and optimizer, a torch calibration's entry), the
// profile overlay of a plan (plan_profiled) and one GPU's step. Its layer times are
// layer_times.cpp, its plan analytic_plan.cpp, its prediction analytic_predict.cpp.
#include "simulator/analytic/analytic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "model/error.hpp"
#include "simulator/analytic/ddp_timeline.hpp"
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

}  // namespace

Predictor::Predictor(std::shared_ptr<const model::Workload> workload, model::HardwareSpec hardware,
                     std::string file)
    : workload_(std::move(workload)), hw_(std::move(hardware)), file_(std::move(file)) {
  DDPSIM_ASSERT(workload_ != nullptr, "no workload");
  param_count_ = static_cast<double>(workload_->param_count());
  buffer_bytes_ = workload_->buffer_bytes();
  activation_bytes_per_sample_ = workload_->activation_bytes_per_sample();
  param_counts_ = param_counts(*workload_);
  for (const model::Layer& l : workload_->layers) {
    layer_fwd_flops_.push_back(l.fwd_flops_per_sample());
    layer_bwd_flops_.push_back(l.bwd_flops_per_sample());
    op_policies_.push_back(model::is_transformer_block(l) ? model::op_policy(*workload_, l)
                                                          : model::OpCheckpointPolicy{});
    total_flops_per_sample_ += layer_fwd_flops_.back() + layer_bwd_flops_.back();
  }
  if (hw_.profile) torch_ = TorchCalibration::from_profile(*hw_.profile);
  // A collectives profile of several nodes (the user's nccl-tests log) fits the NIC that every
  // collective of another rank count runs on (fabric_fit.hpp).
  fabric_fit_ = use_fitted_fabric(hw_);
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
      add_note(*m, fmt::format("the profile has no {} table: the {} costs it",
                               model::collective_op_name(op), collective_model_name()));
    }
    return std::nullopt;
  }
  if (t->ranks != gpus) {
    // Rescaling a 2-rank table to thousands of ranks is the model's job (its topology), not
    // the table's: keep the model and say so.
    if (m != nullptr) {
      add_note(*m,
               fmt::format("the profile's {} was measured on {} ranks, the scenario has {}: "
                           "the {} costs it",
                           model::collective_op_name(op), t->ranks, gpus, collective_model_name()));
    }
    return std::nullopt;
  }
  const model::Estimate e = hw_.profile->collective_time_s(op, bytes, gpus);
  if (e.extrapolated && m != nullptr) add_note(*m, e.note);
  return pick(e, bound);
}

std::string Predictor::collective_model_name() const {
  if (hw_.collective_model == model::CollectiveModel::kAlphaBeta) return "alpha-beta model";
  return fabric_fit_ ? "NCCL model on the NIC fitted to the profile's log" : "NCCL model";
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
  const double recompute =
      t.activation_checkpointing.enabled()
          ? recomputation_s(*workload_, t.activation_checkpointing, lt.fwd, lt.fwd_op_recompute)
          : 0.0;
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
