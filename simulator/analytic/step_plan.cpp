// step_plan.cpp: the pure pieces of a step plan (step_plan.hpp): recomputation, NCCL's channel
// interference, the collectives' rates under contention, measured costs over a plan, the wire
// format and the Reducer's copies. The Predictor's plan itself is analytic_plan.cpp.
#include "simulator/analytic/step_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/collective_op.hpp"
#include "model/error.hpp"
#include "model/units.hpp"

namespace ddpsim::sim {

using model::CommHook;
using model::DType;

namespace {

// Calls f(i, seconds) for every layer i that `ac` checkpoints (of the first `layers`) with the
// seconds its backward runs again; returns how many.
template <class F>
int for_each_recomputation(const model::Workload& w, const model::ActivationCheckpointing& ac,
                           std::size_t layers, const std::vector<double>& layer_fwd_s,
                           const std::vector<double>& layer_op_recompute_s, F&& f) {
  int count = 0, block = 0;
  for (std::size_t i = 0; i < w.layers.size() && i < layers; ++i) {
    if (!model::is_transformer_block(w.layers[i])) continue;
    if (!model::checkpoints_block(ac, block++)) continue;
    f(i,
      ac.mode == model::CheckpointMode::kSelectiveOp ? layer_op_recompute_s.at(i) : layer_fwd_s[i]);
    ++count;
  }
  return count;
}

}  // namespace

int add_recomputation(const model::Workload& w, const model::ActivationCheckpointing& ac,
                      std::vector<double>& layer_bwd_s, const std::vector<double>& layer_fwd_s,
                      const std::vector<double>& layer_op_recompute_s) {
  return for_each_recomputation(w, ac, layer_bwd_s.size(), layer_fwd_s, layer_op_recompute_s,
                                [&](std::size_t i, double s) { layer_bwd_s[i] += s; });
}

double recomputation_s(const model::Workload& w, const model::ActivationCheckpointing& ac,
                       const std::vector<double>& layer_fwd_s,
                       const std::vector<double>& layer_op_recompute_s) {
  double total = 0;
  for_each_recomputation(w, ac, layer_fwd_s.size(), layer_fwd_s, layer_op_recompute_s,
                         [&](std::size_t, double s) { total += s; });
  return total;
}

/// Without a measured or given factor, the slowdown NCCL itself causes: its kernel runs one
/// thread block per channel (NVIDIA/nccl src/enqueue.cc: the launch grid is the channel count,
/// each block NCCL_MAX_NTHREADS = 640 threads), and a block holds its SM for the whole
/// collective, so a kernel overlapping a collective has sm_count - channels SMs: it runs
/// sm_count / (sm_count - channels) slower. The widest collective of the step sets it: DDP's
/// bucket all-reduces, or the sharded strategies' all-gathers, reduce-scatters and all-reduces.
///
/// NCCL's kernel also streams through HBM: each bus byte of a ring step is read from the receive
/// buffer and the user's input and lands in this GPU's memory from its peer (reduce-scatter:
/// recvReduceSend reads recv + src, the peer writes into recv; all-gather: recvCopySend reads
/// recv, writes dst, and the peer writes recv: prims_simple.h genericOp's srcs and dsts), about
/// 3 HBM bytes per bus byte. The memory-bound share m of the backward (element-wise kernels,
/// casts, copies) then runs 1 / (1 - h) slower, h = 3 busbw / achievable HBM bandwidth of the
/// collective with the highest bus bandwidth:
///   interference = (1 - m) sm / (sm - channels) + m / (1 - h).
void apply_nccl_channel_interference(StepPlan& sp, const model::HardwareSpec& hw) {
  if (sp.interference_source != "default" || hw.gpu.sm_count <= 0 ||
      hw.collective_model != model::CollectiveModel::kNccl) {
    return;
  }
  int channels = std::max(0, sp.bucket_channels_max);
  double busbw = std::max(0.0, sp.bucket_busbw_max);
  if (sp.bucket_channels_max < 0) {
    for (const PlannedBucket& b : sp.buckets) {
      channels = std::max(channels, b.cost.channels);
      busbw = std::max(busbw, b.cost.busbw_gbytes_per_s);
    }
  }
  for (const ScheduledCollective& c : sp.schedule) {
    channels = std::max(channels, c.cost.channels);
    busbw = std::max(busbw, c.cost.busbw_gbytes_per_s);
  }
  if (channels > 0 && channels < hw.gpu.sm_count) {
    const double sm_factor =
        static_cast<double>(hw.gpu.sm_count) / static_cast<double>(hw.gpu.sm_count - channels);
    const double hbm = hw.gpu.memory_bandwidth * hw.gpu.memory_efficiency;
    const double h = hbm > 0 ? std::min(0.9, kNcclHbmBytesPerBusByte * busbw * 1e9 / hbm) : 0.0;
    const double m = std::clamp(sp.backward_memory_share, 0.0, 1.0);
    sp.interference = (1 - m) * sm_factor + m / (1 - h);
    sp.interference_channels = channels;
    sp.interference_hbm_share = h;
    sp.interference_source = "nccl_channels";
  }
}

double collective_rate(const PlannedBucket& b, int in_flight, bool computing) {
  double rate = 1;
  if (in_flight > 1) {
    const double each = b.paired_s > 0 ? b.paired_s : b.duration_s();
    rate = each > 0 ? b.duration_s() / (in_flight * each) : 1.0 / in_flight;
  }
  return computing ? rate / b.collective_slowdown : rate;
}

namespace {

// Adds `amount` to `v` in proportion to `estimate` (the model's own per-layer times); an
// all-zero estimate (a workload without compute) spreads it evenly.
void add_spread(std::vector<double>& v, const std::vector<double>& estimate, double amount) {
  double sum = 0;
  for (double x : estimate) sum += x;
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] += sum > 0 ? amount * estimate[i] / sum : amount / static_cast<double>(v.size());
  }
}

double total(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

}  // namespace

void apply_measured_costs(StepPlan& sp, const MeasuredCosts& m) {
  const std::size_t nl = sp.layer_fwd_s.size();
  const std::vector<double> model_fwd = sp.layer_fwd_s, model_bwd = sp.layer_bwd_s;
  const bool per_layer = !m.layer_fwd_s.empty() || !m.layer_bwd_s.empty();
  if (per_layer) {
    if (m.layer_fwd_s.size() != nl || m.layer_bwd_s.size() != nl) {
      throw InputError(
          m.source, "", fmt::format("measured times for each of the model's {} layers", nl),
          fmt::format("{} forward and {} backward", m.layer_fwd_s.size(), m.layer_bwd_s.size()));
    }
    sp.layer_fwd_s = m.layer_fwd_s;
    sp.layer_bwd_s = m.layer_bwd_s;
  }
  if (nl > 0 && m.forward_s) {
    if (!per_layer) sp.layer_fwd_s.assign(nl, 0.0);
    add_spread(sp.layer_fwd_s, model_fwd, std::max(0.0, *m.forward_s - total(sp.layer_fwd_s)));
  }
  if (nl > 0 && m.backward_s) {
    if (!per_layer) sp.layer_bwd_s.assign(nl, 0.0);
    add_spread(sp.layer_bwd_s, model_bwd, std::max(0.0, *m.backward_s - total(sp.layer_bwd_s)));
  }
  if (m.has_compute()) {
    // The traced backward holds the Reducer's copies into the buckets and the collectives'
    // slowdown; the copies back into .grad (finalize_backward) are traced too.
    sp.layer_grad_copy_s.assign(sp.layer_grad_copy_s.size(), 0.0);
    for (PlannedBucket& b : sp.buckets) b.copy_out_s = 0;
    for (PlannedBucket& b : sp.warmup_buckets) b.copy_out_s = 0;
    sp.interference = m.interference.value_or(1.0);
    sp.interference_source = "measured";
  }
  if (m.optimizer_s) sp.optimizer_s = *m.optimizer_s;
  if (m.buffer_broadcast_s && sp.buffer_broadcast_s > 0) {
    sp.buffer_broadcast_s = *m.buffer_broadcast_s;
  }
  if (!m.bucket_collective_s.empty()) {
    if (model::is_sharded(sp.strategy) || m.bucket_collective_s.size() != sp.buckets.size()) {
      throw InputError(m.source, "",
                       fmt::format("one measured all-reduce per DDP bucket ({} buckets, {})",
                                   sp.buckets.size(), model::strategy_name(sp.strategy)),
                       fmt::format("{} all-reduces", m.bucket_collective_s.size()));
    }
    for (std::size_t i = 0; i < sp.buckets.size(); ++i) {
      PlannedBucket& b = sp.buckets[i];
      const double t = m.bucket_collective_s[i];
      b.collective_s = t;
      b.overhead_s = 0;  // a traced hook's casts are in the traced compute
      b.cost.busbw_gbytes_per_s =
          t > 0 ? static_cast<double>(b.cost.bytes) / t *
                      model::busbw_factor(model::CollectiveOp::kAllReduce, sp.gpus) / 1e9
                : 0.0;
    }
  }
  std::string what;
  const auto add = [&](const std::string& w) { what += (what.empty() ? "" : ", ") + w; };
  if (m.has_compute())
    add(m.layer_fwd_s.empty() ? "forward and backward (whole model)"
                              : "forward and backward per layer");
  if (m.optimizer_s) add("optimizer");
  if (!m.bucket_collective_s.empty()) {
    add(fmt::format("{} bucket all-reduces", m.bucket_collective_s.size()));
  }
  if (!what.empty()) sp.warnings.push_back("measured by " + m.source + ": " + what);
}

WireFormat ddp_wire_format(const model::TrainingConfig& t, const model::CommHook& hook) {
  const DType gdt = model::grad_dtype(t.precision);
  WireFormat f;
  f.dtype = t.grad_reduce_dtype.value_or(gdt);
  if (hook.kind == CommHook::Kind::kFp16 || hook.kind == CommHook::Kind::kBf16) {
    const DType hook_dt = hook.kind == CommHook::Kind::kFp16 ? DType::kFp16 : DType::kBf16;
    if (model::dtype_bytes(gdt) > model::dtype_bytes(hook_dt)) {
      // fp16/bf16_compress_hook (torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py
      // _compress_hook): buffer.to(dtype) reads g and writes h bytes, .div_(world_size) reads
      // and writes h, and after the all-reduce decompress's copy_ reads h and writes g back into
      // the bucket: 2g + 4h bytes per element (16 for fp32 -> fp16).
      f.cast_bytes_per_element = 2.0 * model::dtype_bytes(gdt) + 4.0 * model::dtype_bytes(hook_dt);
    }
    f.dtype = hook_dt;
  }
  return f;
}

std::vector<double> reducer_copy_in_s(const model::Workload& w, const model::BucketPlan& plan,
                                      model::DType grad_dtype, double bytes_per_s) {
  std::vector<double> out(w.layers.size(), 0.0);
  for (const model::Bucket& b : plan.buckets) {
    for (int t : b.tensors) {
      const model::ParamTensor& pt = w.tensors[static_cast<std::size_t>(t)];
      out[static_cast<std::size_t>(pt.layer)] +=
          2.0 * static_cast<double>(pt.numel()) * model::dtype_bytes(grad_dtype) / bytes_per_s;
    }
  }
  return out;
}

double input_floor_s(const model::TrainingConfig& t, int gpus, int gpus_per_node, double samples) {
  double per_gpu = 0;
  if (t.input_samples_per_s_per_gpu) {
    per_gpu = *t.input_samples_per_s_per_gpu;
  } else if (t.input_samples_per_s_per_node) {
    per_gpu = *t.input_samples_per_s_per_node / std::max(1, std::min(gpus_per_node, gpus));
  }
  return per_gpu > 0 ? samples / per_gpu : 0.0;
}

double input_floor_s(const model::TrainingConfig& t, int gpus, int gpus_per_node) {
  return input_floor_s(
      t, gpus, gpus_per_node,
      static_cast<double>(t.per_gpu_batch) * static_cast<double>(t.grad_accumulation));
}

void apply_input_floor(double floor_s, Prediction& r) {
  if (floor_s <= 0) return;
  const double model_step = r.step_time_s;
  const auto hold = [floor_s](double& x) { x = std::max(x, floor_s); };
  hold(r.step_time_s);
  hold(r.first_step_time_s);
  for (std::optional<double>* q :
       {&r.p50_step_time_s, &r.p95_step_time_s, &r.p99_step_time_s, &r.warmup_step_time_s}) {
    if (*q) hold(**q);
  }
  // Idempotent: a prediction floored before (the analytic one the event engine starts from)
  // keeps one warning, about its latest step.
  std::erase_if(r.warnings, [](const std::string& w) { return w.rfind("input-bound:", 0) == 0; });
  if (floor_s > model_step) {
    r.warnings.push_back(fmt::format(
        "input-bound: the input pipeline (training.input_pipeline) delivers a step's samples in "
        "{:.2f} ms, the GPUs would take {:.2f} ms",
        1e3 * floor_s, 1e3 * model_step));
  }
}

}  // namespace ddpsim::sim
