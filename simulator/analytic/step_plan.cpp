// step_plan.cpp: the pure pieces of a step plan (step_plan.hpp) and Predictor::plan_model, the
// cost model's plan of one step before a profile replaces any piece of it (analytic.cpp):
// per-layer compute (with recomputation), DDP buckets and their all-reduces (and the
// communication hooks' wire bytes), the sharded strategies' schedules, the optimizer, the first
// iteration's extra costs. DESIGN.md fixes the formulas.
#include "simulator/analytic/step_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/collective_op.hpp"
#include "model/error.hpp"
#include "model/units.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/analytic/sharded.hpp"
#include "simulator/prediction/fsdp2.hpp"

namespace ddpsim::sim {

using model::CommHook;
using model::DType;

int add_recomputation(const model::Workload& w, std::vector<double>& layer_bwd_s,
                      const std::vector<double>& layer_fwd_s) {
  int count = 0;
  for (std::size_t i = 0; i < w.layers.size() && i < layer_bwd_s.size(); ++i) {
    if (w.layers[i].kind != "transformer_block") continue;
    layer_bwd_s[i] += layer_fwd_s[i];
    ++count;
  }
  return count;
}

/// Without a measured or given factor, the slowdown NCCL itself causes: its kernel runs one
/// thread block per channel (NVIDIA/nccl src/enqueue.cc: the launch grid is the channel count,
/// each block NCCL_MAX_NTHREADS = 640 threads), and a block holds its SM for the whole
/// collective, so a kernel overlapping a collective has sm_count - channels SMs: it runs
/// sm_count / (sm_count - channels) slower. The widest collective of the step sets it: DDP's
/// bucket all-reduces, or the sharded strategies' all-gathers, reduce-scatters and all-reduces.
void apply_nccl_channel_interference(StepPlan& sp, const model::HardwareSpec& hw) {
  if (sp.interference_source != "default" || hw.gpu.sm_count <= 0 ||
      hw.collective_model != model::CollectiveModel::kNccl) {
    return;
  }
  int channels = 0;
  for (const PlannedBucket& b : sp.buckets) channels = std::max(channels, b.cost.channels);
  for (const ScheduledCollective& c : sp.schedule) channels = std::max(channels, c.cost.channels);
  if (channels > 0 && channels < hw.gpu.sm_count) {
    sp.interference =
        static_cast<double>(hw.gpu.sm_count) / static_cast<double>(hw.gpu.sm_count - channels);
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

StepPlan Predictor::plan_model(const model::ClusterConfig& cluster,
                               const model::TrainingConfig& training,
                               const model::ParallelismConfig& par, Bound bound) const {
  StepPlan sp;
  sp.gpus = cluster.gpus;
  sp.grad_accumulation = training.grad_accumulation;
  sp.overlap = par.overlap;
  sp.interference = interference_;
  sp.interference_source = interference_source_;
  sp.bandwidths = bandwidths(cluster.gpus);
  const model::CollectiveBandwidths& bw = sp.bandwidths;
  const LayerTimes& lt = layer_times(training.per_gpu_batch, training, bound);
  sp.layer_fwd_s = lt.fwd;
  sp.layer_bwd_s = lt.bwd;
  if (training.activation_checkpointing) {
    // Full checkpointing re-runs each checkpointed block's forward during its backward.
    const int recomputed = add_recomputation(*workload_, sp.layer_bwd_s, sp.layer_fwd_s);
    if (recomputed == 0) {
      sp.warnings.push_back(
          "activation_checkpointing: the workload has no transformer blocks; nothing is "
          "recomputed or saved");
    }
  }
  sp.workload = workload_;  // a pointer copy: names for traces without copying strings per point
  sp.optimizer_s = optimizer_time(training, model::optimizer_impl_for(training, par.strategy));
  sp.strategy = par.strategy;
  if (model::is_sharded(par.strategy)) {
    ShardedContext ctx;
    ctx.workload = workload_.get();
    ctx.hardware = &hw_;
    ctx.cluster = cluster;
    ctx.training = training;
    ctx.parallelism = par;
    const bool hybrid = par.strategy == model::Strategy::kFsdpHybrid;
    ctx.group_bandwidths =
        hybrid && cluster.gpus >= cluster.gpus_per_node ? bandwidths(cluster.gpus_per_node) : bw;
    if (par.strategy == model::Strategy::kFsdp2 && !fsdp2_mesh_problem(par.fsdp2, cluster.gpus)) {
      // The shard group is mesh.shard consecutive ranks; the replicas of a shard are the ranks
      // S apart: one node's GPUs when the whole mesh fits in a node, else one GPU per node on
      // its rail (cross_node_rail_bandwidths, also when S < gpus_per_node puts a few replicas in
      // a node: the ring is as slow as its network hops).
      const Fsdp2Mesh mesh = fsdp2_mesh(file_, par.fsdp2, cluster.gpus);
      ctx.group_bandwidths = bandwidths(mesh.shard);
      if (mesh.replicate > 1) {
        ctx.replicate_bandwidths = cluster.gpus <= cluster.gpus_per_node
                                       ? bandwidths(mesh.replicate)
                                       : cross_node_rail_bandwidths(bw, mesh.replicate);
      }
      if (mesh.post_forward > 1 && mesh.post_forward < mesh.shard) {
        ctx.post_forward_bandwidths = bandwidths(mesh.post_forward);
      }
    }
    ctx.memory_bytes_per_s = hw_.gpu.memory_bandwidth * hw_.gpu.memory_efficiency;
    ctx.file = file_;
    plan_sharded(sp, ctx);
    apply_nccl_channel_interference(sp, hw_);
    return sp;
  }

  // Gradients on the wire.
  const DType gdt = model::grad_dtype(training.precision);
  const WireFormat wf = ddp_wire_format(training, par.comm_hook);
  const DType wire = wf.dtype;
  const double cast_bytes_per_element = wf.cast_bytes_per_element;
  sp.wire_scale = static_cast<double>(model::dtype_bytes(wire)) / model::dtype_bytes(gdt);
  const double mem_rate = hw_.gpu.memory_bandwidth * hw_.gpu.memory_efficiency;

  model::BucketOptions bo;
  bo.grad_bytes = model::dtype_bytes(gdt);
  bo.cap_bytes = bucket_cap_mb_to_bytes(par.bucket_cap_mb);
  bo.cap_defaulted = par.bucket_cap_defaulted;
  if (par.first_bucket_mb) bo.first_bucket_bytes = bucket_cap_mb_to_bytes(*par.first_bucket_mb);
  bo.find_unused_parameters = par.find_unused_parameters;
  bo.static_graph = par.static_graph;
  const CachedPlan& cached = buckets(bo);
  const model::BucketPlan& plan = cached.plan;
  sp.grad_bytes_total = static_cast<double>(plan.total_bytes);

  // Buffers (BatchNorm statistics) are broadcast from rank 0 before every forward.
  if (cluster.gpus > 1 && par.broadcast_buffers && buffer_bytes_ > 0) {
    sp.buffer_broadcast_s =
        collective_cost(model::CollectiveOp::kBroadcast, bw, hw_, buffer_bytes_, par.algorithm)
            .time_s;
  }

  // Each distinct bucket size is costed once; every bucket of that size costs the same. Each
  // bucket is a copy of its size's prototype with its own fields set (copying a filled
  // PlannedBucket is cheaper than zero-filling a new one and assigning every field).
  std::vector<PlannedBucket> prototype;
  prototype.reserve(cached.distinct_bytes.size());
  for (std::int64_t bytes : cached.distinct_bytes) {
    const std::int64_t wire_bytes =
        sp.wire_scale == 1.0
            ? bytes
            : static_cast<std::int64_t>(std::llround(static_cast<double>(bytes) * sp.wire_scale));
    const CollectiveCost c =
        allreduce_cost(bw, hw_, static_cast<double>(wire_bytes), par.algorithm);
    PlannedBucket& pb = prototype.emplace_back();
    pb.cost.bytes = wire_bytes;
    pb.cost.busbw_gbytes_per_s = c.busbw_gbytes_per_s;
    pb.cost.algorithm = c.algorithm;
    pb.cost.protocol = c.protocol;
    pb.cost.channels = c.channels;
    pb.collective_s = c.time_s;
  }
  sp.buckets.reserve(plan.buckets.size());
  for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
    const model::Bucket& b = plan.buckets[i];
    PlannedBucket& pb =
        sp.buckets.emplace_back(prototype[static_cast<std::size_t>(cached.size_index[i])]);
    pb.cost.grad_bytes = b.bytes;
    pb.cost.tensors = static_cast<int>(b.tensors.size());
    pb.overhead_s = cluster.gpus > 1
                        ? cast_bytes_per_element * static_cast<double>(b.elements) / mem_rate
                        : 0.0;
    pb.ready_layer = b.ready_layer;
  }
  if (par.comm_hook.kind == CommHook::Kind::kPowerSgd) {
    // powerSGD_hook runs plain all-reduce for the first start_powerSGD_iter iterations: the
    // buckets above are that phase; the steady state replaces them.
    sp.warmup_buckets = std::move(sp.buckets);
    sp.buckets = powersgd_buckets(plan, bw, wire, cluster.gpus, par, sp.hook_memory_bytes);
    sp.warnings.push_back(fmt::format(
        "comm_hook {}: step_time_s is PowerSGD's steady state; the first start_powerSGD_iter = {} "
        "steps run plain all-reduce (warmup_step_time_s). Hook compute is serialised with the "
        "collectives on the communication stream",
        par.comm_hook.text, kPowerSgdStartIter));
  } else if (par.comm_hook.kind == CommHook::Kind::kTopK) {
    sp.buckets = topk_buckets(plan, bw, wire, cluster.gpus, par, sp.hook_memory_bytes);
    sp.warnings.push_back(fmt::format(
        "comm_hook {}: top-k all-gathers values and int64 indices, without error feedback; hook "
        "compute is serialised with the collective on the communication stream",
        par.comm_hook.text));
  }
  if (sp.hook_memory_bytes > 0) {
    sp.warnings.push_back(
        fmt::format("comm_hook {}: {:.0f} bytes of hook state per GPU, counted "
                    "in memory.buffer_bytes",
                    par.comm_hook.text, sp.hook_memory_bytes));
  }
  if (par.find_unused_parameters && cluster.gpus > 1) {
    // The Reducer also all-reduces local_used_map (one int32 per parameter tensor) and walks
    // the autograd graph from the outputs; the walk's CPU time is not modelled.
    sp.used_map_allreduce_s =
        allreduce_cost(bw, hw_, 4.0 * static_cast<double>(workload_->tensors.size()), par.algorithm)
            .time_s;
    sp.warnings.push_back(
        "find_unused_parameters: the per-step autograd graph walk (CPU) is not modelled");
  }
  // The Reducer's gradient copies (PyTorch reducer.cpp): into the bucket as each gradient is
  // produced (mark_variable_ready_dense), and back into .grad after the collectives
  // (finalize_backward -> copy_bucket_to_grad). Each reads and writes the gradient bytes once.
  // With gradient_as_bucket_view the gradients live in the bucket: no copy back, and instead of
  // the copy in only the in-place division by N, which a comm hook does itself.
  if (cluster.gpus > 1) {
    const bool view = par.gradient_as_bucket_view;
    const bool copy_in = !view || par.comm_hook.kind == CommHook::Kind::kNone;
    if (copy_in) {
      auto it = cached.copy_in_s.find(gdt);
      if (it == cached.copy_in_s.end()) {
        it =
            cached.copy_in_s.emplace(gdt, reducer_copy_in_s(*workload_, plan, gdt, mem_rate)).first;
      }
      sp.layer_grad_copy_s = it->second;
    }
    if (!view) {
      for (std::vector<PlannedBucket>* v : {&sp.buckets, &sp.warmup_buckets}) {
        if (v->empty()) continue;
        DDPSIM_ASSERT(v->size() == plan.buckets.size(), "planned buckets and plan disagree");
        for (std::size_t i = 0; i < v->size(); ++i) {
          (*v)[i].copy_out_s = 2.0 * static_cast<double>(plan.buckets[i].bytes) / mem_rate;
        }
      }
      const double one_way = 2.0 * sp.grad_bytes_total / mem_rate;
      sp.warnings.push_back(fmt::format(
          "ddp: the Reducer copies the gradients into the buckets and back ({:.2f} ms each way "
          "per step, in backward_time_s); gradient_as_bucket_view = true removes the copy back",
          one_way * 1e3));
    }
  }
  sp.first_iteration_one_bucket = par.static_graph || !par.find_unused_parameters;
  // Iteration 1 runs with a single bucket, reduced once the whole backward is done.
  // (PowerSGD: plain all-reduce, since iteration 1 < start_powerSGD_iter; top-k: the hook on
  // that one bucket.)
  if (cluster.gpus > 1 && par.comm_hook.kind == CommHook::Kind::kTopK) {
    model::BucketPlan all;
    all.buckets.push_back({});
    for (const model::Bucket& b : plan.buckets) {
      all.buckets[0].elements += b.elements;
      all.buckets[0].bytes += b.bytes;
    }
    double ignored = 0;
    sp.first_iteration_allreduce_s =
        topk_buckets(all, bw, wire, cluster.gpus, par, ignored).front().duration_s();
  } else if (cluster.gpus > 1) {
    sp.first_iteration_allreduce_s =
        allreduce_cost(bw, hw_, sp.grad_bytes_total * sp.wire_scale, par.algorithm).time_s;
  }
  apply_nccl_channel_interference(sp, hw_);
  return sp;
}

}  // namespace ddpsim::sim
