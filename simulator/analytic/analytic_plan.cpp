// analytic_plan.cpp: the Predictor's StepPlan of one step (analytic.hpp): the model's plan
// (plan_model: per-layer compute with recomputation, the sharded strategies' schedules or DDP's
// buckets with their all-reduces, hooks and Reducer copies, the optimizer, the first
// iteration), then the profile's measurements over it (plan_profiled, analytic.cpp), then the
// measured costs and a torch calibration (plan). DESIGN.md fixes the formulas.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "model/collective_op.hpp"
#include "model/error.hpp"
#include "model/units.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/analytic/sharded.hpp"
#include "simulator/prediction/fsdp2.hpp"

namespace ddpsim::sim {

using model::CommHook;
using model::DType;

StepPlan Predictor::plan(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                         const model::ParallelismConfig& par) const {
  return plan(cluster, training, par, Bound::kMedian);
}

StepPlan Predictor::plan(const model::ClusterConfig& cluster, const model::TrainingConfig& training,
                         const model::ParallelismConfig& par, Bound bound) const {
  StepPlan sp = plan_profiled(cluster, training, par, bound);
  std::string why;
  const MeasuredCosts* m = measured_compute(training, &why);
  if (m != nullptr) apply_measured_costs(sp, *m);  // over the model's and the profile's
  if (!torch_ || measured_) return sp;
  // A torch calibration (torch_profile.hpp): PyTorch's own layers and optimizer above, and its
  // gloo all-reduces with their contention for a DDP job on the ranks it timed.
  if (m == nullptr) {
    sp.warnings.push_back("profile: " + why + "; the CPU calibration's costs used");
    return sp;
  }
  std::string applied;
  if (model::is_sharded(sp.strategy) || sp.gpus < 2) {
    applied = "";
  } else if (par.comm_hook.kind != model::CommHook::Kind::kNone) {
    sp.warnings.push_back(
        "profile: the torch calibration times plain all-reduces, not a "
        "communication hook's: the hook's collectives from the CPU calibration");
  } else if (sp.gpus != torch_->ranks()) {
    sp.warnings.push_back(fmt::format(
        "profile: the torch calibration timed gloo on {} ranks, not {}: the collectives from "
        "the CPU calibration",
        torch_->ranks(), sp.gpus));
  } else {
    applied = apply_torch_collectives(sp, *torch_);
  }
  if (sp.measured) {
    sp.measured->notes.push_back(fmt::format("torch calibration: layers and optimizer{}{}",
                                             applied.empty() ? "" : ", ", applied));
    if (!applied.empty()) sp.measured->collectives = "profile";
  }
  return sp;
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
  sp.input_floor_s = input_floor_s(training, cluster.gpus, cluster.gpus_per_node);
  const bool weights_cast = !(par.strategy == model::Strategy::kFsdp2 && par.fsdp2.param_dtype);
  const LayerTimes& lt = layer_times(training.per_gpu_batch, training, bound, weights_cast);
  sp.layer_fwd_s = lt.fwd;
  sp.layer_bwd_s = lt.bwd;
  sp.backward_memory_share = lt.bwd_total > 0 ? lt.bwd_memory_total / lt.bwd_total : 0.0;
  if (training.activation_checkpointing.enabled()) {
    // Checkpointed blocks re-run their forward (or, op-selective, part of it) in backward.
    const int recomputed = add_recomputation(*workload_, training.activation_checkpointing,
                                             sp.layer_bwd_s, sp.layer_fwd_s, lt.fwd_op_recompute);
    if (recomputed == 0) {
      sp.warnings.push_back(
          "activation_checkpointing: the workload has no transformer blocks; nothing is "
          "recomputed or saved");
    } else if (training.activation_checkpointing.mode != model::CheckpointMode::kFull) {
      const int blocks = static_cast<int>(std::count_if(
          workload_->layers.begin(), workload_->layers.end(), model::is_transformer_block));
      sp.warnings.push_back(fmt::format(
          "activation checkpointing {}: {} of {} transformer blocks checkpointed{}",
          model::checkpointing_name(training.activation_checkpointing), recomputed, blocks,
          training.activation_checkpointing.mode == model::CheckpointMode::kSelectiveOp
              ? " (torchtitan's op policy: matmul outputs, every second one excepted, and "
                "attention outputs kept; norms, activations, rotary and the other matmuls "
                "recomputed in backward)"
              : ", each rerunning its forward in backward"));
    }
  }
  sp.workload = workload_;  // a pointer copy: names for traces without copying strings per point
  sp.optimizer_s = optimizer_time(training, model::optimizer_impl_for(training, par.strategy));
  sp.strategy = par.strategy;
  if (model::is_sharded(par.strategy)) {
    plan_sharded_model(sp, cluster, training, par);
  } else {
    plan_ddp_model(sp, cluster, training, par);
  }
  apply_nccl_channel_interference(sp, hw_);
  return sp;
}

void Predictor::plan_sharded_model(StepPlan& sp, const model::ClusterConfig& cluster,
                                   const model::TrainingConfig& training,
                                   const model::ParallelismConfig& par) const {
  const model::CollectiveBandwidths& bw = sp.bandwidths;
  ShardedContext ctx;
  ctx.workload = workload_.get();
  ctx.counts = &param_counts_;
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
}

void Predictor::plan_ddp_model(StepPlan& sp, const model::ClusterConfig& cluster,
                               const model::TrainingConfig& training,
                               const model::ParallelismConfig& par) const {
  const model::CollectiveBandwidths& bw = sp.bandwidths;
  // Gradients on the wire.
  const DType gdt = model::grad_dtype(training.precision);
  const WireFormat wf = ddp_wire_format(training, par.comm_hook);
  const DType wire = wf.dtype;
  const double cast_bytes_per_element = wf.cast_bytes_per_element;
  sp.wire_scale = static_cast<double>(model::dtype_bytes(wire)) / model::dtype_bytes(gdt);
  const double mem_rate = hw_.gpu.memory_bandwidth * hw_.gpu.memory_efficiency;
  // Seconds per gradient element of the wire cast and per gradient byte of the Reducer's copy
  // back (add_reducer_copies; once, not a division per bucket).
  const double cast_s_per_element = cluster.gpus > 1 ? cast_bytes_per_element / mem_rate : 0.0;
  const double copy_out_s_per_byte =
      cluster.gpus > 1 && !par.gradient_as_bucket_view ? 2.0 / mem_rate : 0.0;

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
  // The channels the interference counts: the most any bucket size runs on (every bucket is a
  // copy of its size's prototype), so apply_nccl_channel_interference need not read each one.
  sp.bucket_channels_max = 0;
  sp.bucket_busbw_max = 0;
  for (const PlannedBucket& pb : prototype) {
    sp.bucket_channels_max = std::max(sp.bucket_channels_max, pb.cost.channels);
    sp.bucket_busbw_max = std::max(sp.bucket_busbw_max, pb.cost.busbw_gbytes_per_s);
  }
  sp.buckets.reserve(plan.buckets.size());
  for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
    const model::Bucket& b = plan.buckets[i];
    PlannedBucket& pb =
        sp.buckets.emplace_back(prototype[static_cast<std::size_t>(cached.size_index[i])]);
    pb.cost.grad_bytes = b.bytes;
    pb.cost.tensors = static_cast<int>(b.tensors.size());
    pb.overhead_s = cast_s_per_element * static_cast<double>(b.elements);
    pb.copy_out_s = copy_out_s_per_byte * static_cast<double>(b.bytes);
    pb.ready_layer = b.ready_layer;
  }
  if (par.comm_hook.kind == CommHook::Kind::kPowerSgd) {
    // powerSGD_hook runs plain all-reduce for the first start_powerSGD_iter iterations: the
    // buckets above are that phase; the steady state replaces them.
    sp.bucket_channels_max = -1;  // the hook's buckets are other collectives
    sp.bucket_busbw_max = -1;
    sp.warmup_buckets = std::move(sp.buckets);
    sp.buckets = powersgd_buckets(plan, bw, wire, cluster.gpus, par, sp.hook_memory_bytes);
    sp.warnings.push_back(fmt::format(
        "comm_hook {}: step_time_s is PowerSGD's steady state; the first start_powerSGD_iter = {} "
        "steps run plain all-reduce (warmup_step_time_s). Hook compute is serialised with the "
        "collectives on the communication stream",
        par.comm_hook.text, kPowerSgdStartIter));
  } else if (par.comm_hook.kind == CommHook::Kind::kTopK) {
    sp.bucket_channels_max = -1;
    sp.bucket_busbw_max = -1;
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
  if (cluster.gpus > 1) add_reducer_copies(sp, cached, gdt, mem_rate, par);
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
}

// The Reducer's gradient copies (PyTorch reducer.cpp): into the bucket as each gradient is
// produced (mark_variable_ready_dense), and back into .grad after the collectives
// (finalize_backward -> copy_bucket_to_grad). Each reads and writes the gradient bytes once.
// With gradient_as_bucket_view the gradients live in the bucket: no copy back, and instead of
// the copy in only the in-place division by N, which a comm hook does itself.
void Predictor::add_reducer_copies(StepPlan& sp, const CachedPlan& cached, model::DType gdt,
                                   double mem_rate, const model::ParallelismConfig& par) const {
  const model::BucketPlan& plan = cached.plan;
  const bool view = par.gradient_as_bucket_view;
  const bool copy_in = !view || par.comm_hook.kind == CommHook::Kind::kNone;
  if (copy_in) {
    auto it = cached.copy_in_s.find(gdt);
    if (it == cached.copy_in_s.end()) {
      it = cached.copy_in_s.emplace(gdt, reducer_copy_in_s(*workload_, plan, gdt, mem_rate)).first;
    }
    sp.layer_grad_copy_s = it->second;
  }
  if (!view) {
    // plan_ddp_model set the copy back of its all-reduce buckets (sp.buckets, or PowerSGD's
    // warm-up buckets); a hook's own buckets get theirs here.
    if (par.comm_hook.kind != CommHook::Kind::kNone) {
      DDPSIM_ASSERT(sp.buckets.size() == plan.buckets.size(), "planned buckets and plan disagree");
      const double per_byte = 2.0 / mem_rate;
      for (std::size_t i = 0; i < sp.buckets.size(); ++i) {
        sp.buckets[i].copy_out_s = per_byte * static_cast<double>(plan.buckets[i].bytes);
      }
    }
    const double one_way = 2.0 * sp.grad_bytes_total / mem_rate;
    sp.warnings.push_back(fmt::format(
        "ddp: the Reducer copies the gradients into the buckets and back ({:.2f} ms each way "
        "per step, in backward_time_s); gradient_as_bucket_view = true removes the copy back",
        one_way * 1e3));
  }
}

std::vector<PlannedBucket> Predictor::powersgd_buckets(const model::BucketPlan& plan,
                                                       const model::CollectiveBandwidths& bw,
                                                       DType dt, int gpus,
                                                       const model::ParallelismConfig& par,
                                                       double& hook_memory_bytes) const {
  // PyTorch powerSGD_hook (use_error_feedback = warm_start = true), per bucket of L elements,
  // U of them in uncompressed tensors, g bytes per element (the bucket's dtype):
  //   input += error (read 2L, write L); input_cp = clone(input) (read L, write L);
  //   uncompressed = cat(...) (2U); orthogonalise every Q (warm start); P = M Q;
  //   all_reduce(uncompressed) -> div_ + copy back (4U); all_reduce(P); orthogonalise every P;
  //   Q = M^T P; all_reduce(Q) -> Q.div_(world) (2 |Q|); M = P Q^T;
  //   error = input_cp - input (read 2L, write L).
  // Element-wise passes: g (8L + 6U + 2|Q|) bytes at HBM speed. Each GEMM of an n x m matrix at
  // rank r: 2 n m r FLOPs, g (n m + n r + m r) bytes, on the roofline of dt (at small r it is
  // HBM-bound: r/2 FLOP per byte in fp32). Orthogonalisation of an x x r matrix
  // (_orthogonalize_gram_schmidt, or QR for r > 2, ~ the same work): 2 x r^2 FLOPs; per column
  // one norm + scale (3 x elements) and one projection of the remaining columns (read for the
  // dot, read + write for the subtraction: 2 x per pair of columns, counted twice for the
  // temporaries): g x (3r + 2r(r-1)) bytes. Kernel-launch latency is not modelled.
  // Memory (persistent per GPU): error_dict (L per bucket), p/q_memory_dict (|P| + |Q| per
  // bucket), plus the transient clone of the largest bucket.
  const double g = model::dtype_bytes(dt);
  const Roofline roof = roofline(dt);
  std::map<double, CollectiveCost> costs;
  auto allreduce = [&](double bytes) -> CollectiveCost {
    // An empty all-reduce (no uncompressed tensor, or nothing compressed) launches no NCCL
    // kernel (count 0 returns at once): no latency is paid.
    if (bytes <= 0 || gpus <= 1) return {};
    auto [it, inserted] = costs.try_emplace(bytes);
    if (inserted) it->second = allreduce_cost(bw, hw_, bytes, par.algorithm);
    return it->second;
  };
  auto orthogonalise_s = [&](double x, double r) {
    return roof.time_s(2.0 * x * r * r, g * x * (3.0 * r + 2.0 * r * (r - 1.0)));
  };
  std::vector<PlannedBucket> out;
  out.reserve(plan.buckets.size());
  double state = 0, largest = 0;
  for (const model::Bucket& b : plan.buckets) {
    const PowerSgdBucket pb = powersgd_bucket(*workload_, b, par.comm_hook.rank);
    const double u = g * static_cast<double>(pb.uncompressed_elements);
    const double p = g * static_cast<double>(pb.p_elements);
    const double q = g * static_cast<double>(pb.q_elements);
    const CollectiveCost cu = allreduce(u), cp = allreduce(p), cq = allreduce(q);
    PlannedBucket planned;
    planned.cost.grad_bytes = b.bytes;
    planned.cost.bytes = static_cast<std::int64_t>(std::llround(u + p + q));
    planned.cost.tensors = static_cast<int>(b.tensors.size());
    planned.collective_s = cu.time_s + cp.time_s + cq.time_s;
    // The busbw of the three together (nccl-tests' AllReduce factor on their summed bytes).
    planned.cost.busbw_gbytes_per_s =
        planned.collective_s > 0
            ? (u + p + q) / planned.collective_s *
                  model::busbw_factor(model::CollectiveOp::kAllReduce, gpus) / 1e9
            : 0.0;
    // The largest of the three names the algorithm, protocol and channels.
    const CollectiveCost& big = u >= p + q ? cu : (p >= q ? cp : cq);
    planned.cost.algorithm = big.algorithm;
    planned.cost.protocol = big.protocol;
    planned.cost.channels = big.channels;
    planned.ready_layer = b.ready_layer;
    if (gpus > 1) {
      const double l = static_cast<double>(pb.elements);
      double t = g *
                 (8.0 * l + 6.0 * static_cast<double>(pb.uncompressed_elements) +
                  2.0 * static_cast<double>(pb.q_elements)) /
                 roof.bytes_per_s;
      for (const PowerSgdMatrix& mx : pb.compressed) {
        const double n = static_cast<double>(mx.n), m = static_cast<double>(mx.m);
        const double r = mx.rank;
        t += 3.0 * roof.time_s(2.0 * n * m * r, g * (n * m + n * r + m * r));
        t += orthogonalise_s(n, r) + orthogonalise_s(m, r);
      }
      planned.overhead_s = t;
      state += g * (l + static_cast<double>(pb.p_elements + pb.q_elements));
      largest = std::max(largest, g * l);
    }
    out.push_back(planned);
  }
  hook_memory_bytes = state + largest;
  return out;
}

std::vector<PlannedBucket> Predictor::topk_buckets(const model::BucketPlan& plan,
                                                   const model::CollectiveBandwidths& bw, DType dt,
                                                   int gpus, const model::ParallelismConfig& par,
                                                   double& hook_memory_bytes) const {
  // Per bucket of L elements (g bytes each) on n ranks, k = ceil(F L):
  //   selection: |grad| (read L, write L), torch.topk's radix select (one counting pass per
  //   8-bit digit of the 32-bit key: 4 reads of L, then one gather pass: L), writing k values
  //   and k int64 indices: g 7L + k (g + 8) bytes;
  //   all-gather of S = n k (g + 8) bytes (values + indices of every rank);
  //   decompression: zero the bucket (L), scatter-add the n k pairs (read n k (g + 8), read +
  //   write 2 n k g), divide by n (read L, write L): g 3L + n k (3g + 8) bytes.
  // Everything element-wise runs at HBM speed. Memory: the gathered buffer and the local top-k
  // of the largest bucket.
  const double g = model::dtype_bytes(dt);
  const double ranks = gpus;
  const double mem_rate = roofline(dt).bytes_per_s;
  std::vector<PlannedBucket> out;
  out.reserve(plan.buckets.size());
  double largest = 0;
  for (const model::Bucket& b : plan.buckets) {
    const std::int64_t k = topk_count(b.elements, par.comm_hook.fraction);
    const double kd = static_cast<double>(k), l = static_cast<double>(b.elements);
    const double s = topk_gather_bytes(gpus, k, static_cast<int>(g));
    PlannedBucket planned;
    planned.cost.grad_bytes = b.bytes;
    planned.cost.bytes = static_cast<std::int64_t>(std::llround(s));
    planned.cost.tensors = static_cast<int>(b.tensors.size());
    planned.ready_layer = b.ready_layer;
    if (gpus > 1) {
      const CollectiveCost c =
          collective_cost(model::CollectiveOp::kAllGather, bw, hw_, s, par.algorithm);
      planned.collective_s = c.time_s;
      planned.cost.busbw_gbytes_per_s = c.busbw_gbytes_per_s;
      planned.cost.algorithm = c.algorithm;
      planned.cost.protocol = c.protocol;
      planned.cost.channels = c.channels;
      const double select = g * 7.0 * l + kd * (g + kTopKIndexBytes);
      const double scatter = g * 3.0 * l + ranks * kd * (3.0 * g + kTopKIndexBytes);
      planned.overhead_s = (select + scatter) / mem_rate;
      largest = std::max(largest, s + kd * (g + kTopKIndexBytes));
    }
    out.push_back(planned);
  }
  hook_memory_bytes = largest;
  return out;
}

}  // namespace ddpsim::sim
