#include "simulator/analytic/sharded.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "model/error.hpp"
#include "simulator/analytic/fsdp2_schedule.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/prediction/memory.hpp"

namespace ddpsim::sim {

using model::CommHook;
using model::Strategy;

std::vector<DeepSpeedBucket> deepspeed_buckets(const model::Workload& w, double cap_elements) {
  return deepspeed_buckets(w, cap_elements, param_counts(w).tensor_elements);
}

std::vector<DeepSpeedBucket> deepspeed_buckets(const model::Workload& w, double cap_elements,
                                               const std::vector<std::int64_t>& numel) {
  DDPSIM_ASSERT(numel.size() == w.tensors.size(), "one count per tensor");
  // Flat offsets in model.parameters() order: DeepSpeed flattens each parameter group in that
  // order (bit16_groups_flat) and partitions the flat buffer into n equal parts.
  std::vector<std::int64_t> offset(w.tensors.size(), -1);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < w.tensors.size(); ++i) {
    if (w.tensors[i].tied_to >= 0) continue;
    offset[i] = total;
    total += numel[i];
  }
  // Gradient hooks fire in reverse parameter order (the backward reaches layers in reverse).
  // stage_1_and_2.py reduce_independent_p_g_buckets_and_remove_grad: "if
  // self.elements_in_ipg_bucket + param.numel() > self.reduce_bucket_size:
  // self.reduce_ipg_grads()", then the parameter joins the (new) bucket; stage3.py adds "and
  // self.elements_in_ipg_bucket > 0", which the non-empty test below also covers.
  std::vector<DeepSpeedBucket> out;
  DeepSpeedBucket cur;
  for (std::size_t i = w.tensors.size(); i-- > 0;) {
    const model::ParamTensor& t = w.tensors[i];
    const std::int64_t e = numel[i];
    if (t.tied_to >= 0 || e == 0) continue;
    if (cur.elements > 0 && static_cast<double>(cur.elements + e) > cap_elements) {
      cur.trigger_layer = t.layer;
      out.push_back(cur);
      cur = DeepSpeedBucket{};
    }
    cur.elements += e;
    ++cur.tensors;
    cur.flat_begin = offset[i];  // walking down, the last tensor added has the lowest offset
  }
  if (cur.elements > 0) {
    cur.trigger_layer = -1;  // the reduce epilogue at the end of the backward
    out.push_back(cur);
  }
  return out;
}

std::vector<std::int64_t> owner_slices(std::int64_t flat_begin, std::int64_t elements,
                                       std::int64_t total_elements, int ranks) {
  DDPSIM_ASSERT(ranks >= 1 && elements >= 0, "bad slice request");
  std::vector<std::int64_t> out;
  if (elements == 0) return out;
  // The flat buffer is padded to a multiple of n; partition p holds [p P, (p+1) P).
  const std::int64_t part = (total_elements + ranks - 1) / ranks;
  const std::int64_t end = flat_begin + elements;
  for (std::int64_t p = flat_begin / part; p * part < end; ++p) {
    const std::int64_t lo = std::max(flat_begin, p * part);
    const std::int64_t hi = std::min(end, (p + 1) * part);
    if (hi > lo) out.push_back(hi - lo);
  }
  return out;
}

std::vector<std::int64_t> allgather_chunks(std::int64_t total_elements, int ranks,
                                           double allgather_bucket_elements) {
  // runtime/utils.py all_gather_dp_groups: num_shards = max(1, partition.numel() *
  // dp_world_size // allgather_bucket_size); shard_size = partition.numel() // num_shards; the
  // last shard takes the remainder; each shard is one all_gather_into_tensor of n x shard
  // elements. (The NCCL start-alignment trim of shard_size, 2-4 elements, is not modelled.)
  std::vector<std::int64_t> out;
  if (total_elements <= 0) return out;
  const std::int64_t part = (total_elements + ranks - 1) / ranks;
  const std::int64_t shards =
      allgather_chunk_count(total_elements, ranks, allgather_bucket_elements);
  const std::int64_t shard = part / shards;
  out.reserve(static_cast<std::size_t>(shards));
  for (std::int64_t s = 0; s < shards; ++s) {
    const std::int64_t e = s + 1 == shards ? part - s * shard : shard;
    out.push_back(e * ranks);
  }
  return out;
}

std::int64_t allgather_chunk_count(std::int64_t total_elements, int ranks,
                                   double allgather_bucket_elements) {
  if (total_elements <= 0) return 0;
  const std::int64_t part = (total_elements + ranks - 1) / ranks;
  // In double, clamped before the cast: part x n // bucket is below 2^63 for every valid input
  // (at most 1e15 parameters), but a bucket of a fraction of an element must not wrap around.
  const double by_bucket =
      std::floor(static_cast<double>(part) * ranks / allgather_bucket_elements);
  return std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::min(by_bucket, static_cast<double>(part))), 1, part);
}

void check_allgather_chunks(const std::string& file, std::int64_t total_elements, int ranks,
                            double allgather_bucket_elements) {
  const std::int64_t chunks =
      allgather_chunk_count(total_elements, ranks, allgather_bucket_elements);
  if (static_cast<double>(chunks) <= kMaxStepCollectives) return;
  // num_shards = floor(part x n / bucket) <= N exactly when bucket > part x n / (N + 1); the
  // hint rounds part x n / N up, a bucket that certainly gives at most N.
  const std::int64_t part = (total_elements + ranks - 1) / ranks;
  const double gathered = static_cast<double>(part) * ranks;
  throw InputError(
      file, "/parallelism/allgather_bucket_size",
      fmt::format("a bucket size that gives at most {:.0f} all-gathers of the updated parameters "
                  "({:.4g} parameters / {:.4g} = {:.4g} all-gathers; at least {:.4g} elements "
                  "per bucket)",
                  kMaxStepCollectives, static_cast<double>(total_elements),
                  allgather_bucket_elements, static_cast<double>(chunks),
                  std::ceil(gathered / kMaxStepCollectives)),
      fmt::format("{:.15g}", allgather_bucket_elements));
}

double per_rank_traffic_bytes(model::CollectiveOp kind, double bytes, int ranks) {
  if (ranks <= 1) return 0.0;
  const double n = ranks;
  return (kind == model::CollectiveOp::kAllReduce ? 2.0 : 1.0) * (n - 1.0) / n * bytes;
}

double fsdp_gradient_predivide_factor(int world_size) {
  // torch/distributed/algorithms/_comm_hooks/default_hooks.py DefaultState
  // _get_gradient_predivide_factor: f doubles while f divides the world size and
  // world_size / f > f, so it can end on a non-divisor (8 -> 4, 2 -> 2, 6 -> 4, 1 -> 1).
  int factor = 1;
  while (world_size % factor == 0 && world_size / factor > factor) factor *= 2;
  return factor;
}

double fsdp_reduce_pass_bytes(int shard, double grad_bytes, double wire_bytes, bool hook_casts) {
  // FSDP1's post-backward hook, on its post_backward stream (torch/distributed/fsdp/
  // _runtime_utils.py _post_backward_hook; default_hooks.py reduce_scatter_hook):
  // - without a low-precision comm hook, the unsharded gradient is cast to the reduce dtype
  //   (`flat_param.grad.to(handle._reduce_dtype)`): read g, write w;
  // - the gradient is divided in place by the predivide factor before the reduce-scatter
  //   (`grad.div_(state.gradient_predivide_factor)`): read w, write w;
  // - the shard (1/shard of the elements) is divided by world / predivide after it when that is
  //   above 1, then cast to the sharded parameter's dtype (fp32) by _cast_grad_to_param_dtype
  //   unless a low-precision hook casts it itself: 2w + (w + 4) per shard element.
  const double pre = fsdp_gradient_predivide_factor(shard);
  const double post = static_cast<double>(shard) / pre;
  double full = pre > 1 ? 2.0 * wire_bytes : 0.0;
  if (!hook_casts && wire_bytes != grad_bytes) full += grad_bytes + wire_bytes;
  double per_shard = post > 1 ? 2.0 * wire_bytes : 0.0;
  if (!hook_casts && wire_bytes != 4.0) per_shard += wire_bytes + 4.0;
  return full + per_shard / static_cast<double>(shard);
}

namespace {

// One collective being assembled, with its place in the FIFO: sorted by (gate, priority, seq).
struct Pending {
  int gate = 0;
  int priority = 0;
  int seq = 0;
  ScheduledCollective c;
};

// What every sharded schedule shares while it is assembled: the step's shape, the element sizes
// on the wire, the collectives' costs (memoised per op, algorithm and size over the shard
// group's bandwidths) and the FIFO being filled.
struct ScheduleBuilder {
  ScheduleBuilder(StepPlan& plan, const ShardedContext& context)
      : sp(plan),
        ctx(context),
        own_counts(context.counts ? ParamCounts{} : param_counts(*context.workload)),
        counts(context.counts ? *context.counts : own_counts),
        w(*context.workload),
        hw(*context.hardware),
        par(context.parallelism) {}

  StepPlan& sp;
  const ShardedContext& ctx;
  const ParamCounts own_counts;  // only without ctx.counts
  const ParamCounts& counts;
  const model::Workload& w;
  const model::HardwareSpec& hw;
  const model::ParallelismConfig& par;
  int n = 0;                          // ranks
  int shard = 0;                      // ranks one parameter is sharded over
  int replicas = 1;                   // fsdp_hybrid: nodes
  int L = 0;                          // layers
  int end_op = 0;                     // the end of a micro-batch
  double param_bytes = 0;             // per element, the precision's parameter dtype
  double grad_bytes = 0;              // per element, the gradient dtype
  double wire_bytes = 0;              // per element, the dtype gradients are reduced in
  double cast_bytes_per_element = 0;  // an fp16/bf16 hook's casts around the collective
  bool hook_casts = false;            // an fp16/bf16 hook casts (FSDP1 then does not)
  std::map<std::pair<int, double>, CollectiveCost> memo;
  std::vector<Pending> pending;

  CollectiveCost cost(model::CollectiveOp c, double bytes, model::CollectiveAlgorithm a) {
    auto [it, inserted] = memo.try_emplace({static_cast<int>(c) * 8 + static_cast<int>(a), bytes});
    if (inserted) it->second = collective_cost(c, ctx.group_bandwidths, hw, bytes, a);
    return it->second;
  }
  void add(int gate, int priority, ScheduledCollective c) {
    DDPSIM_ASSERT(c.scope == CommScope::kAfterOptimizer ||
                      (0 <= c.gate_op && c.gate_op <= c.block_op && c.block_op <= end_op),
                  "a collective blocking an op before its gate");
    const int seq = static_cast<int>(pending.size());
    pending.push_back({gate, priority, seq, std::move(c)});
  }
  double gradient_overhead(std::int64_t elements) const {
    return cast_bytes_per_element * static_cast<double>(elements) / ctx.memory_bytes_per_s;
  }
  double memory_s(double bytes) const { return bytes / ctx.memory_bytes_per_s; }
  // DeepSpeed ZeRO-Offload (parallelism.offload): bytes over the GPU's PCIe link.
  double pcie_s(double bytes) const { return bytes / hw.pcie.bandwidth; }
  bool offload() const { return par.offload.has_value(); }
  bool offload_param() const { return par.offload && par.offload->param; }
};

// The shard group and the dtypes on the wire; per-layer parameters; sp readied for a schedule.
void begin_schedule(ScheduleBuilder& b) {
  const model::TrainingConfig& tr = b.ctx.training;
  const Strategy strategy = b.par.strategy;
  const auto hook = b.par.comm_hook.kind;
  b.n = b.ctx.cluster.gpus;
  const int gpn = b.ctx.cluster.gpus_per_node;
  const bool hybrid = strategy == Strategy::kFsdpHybrid;
  b.shard = hybrid ? gpn : b.n;
  b.replicas = hybrid ? b.n / gpn : 1;
  begin_sharded_plan(b.sp, strategy, b.shard);
  if (b.par.offload) {
    // DeepSpeedCPUAdam steps this rank's partition on the host at the rate the user measured;
    // the updated 16-bit partition then crosses PCIe to the GPU (2 bytes per element) before
    // the all-gather, unless offload_param keeps the parameters on the host.
    const double partition = static_cast<double>(b.counts.total) / b.shard;
    b.sp.optimizer_s = partition / b.par.offload->host_adam_params_per_s +
                       (b.par.offload->param ? 0.0 : 2.0 * partition / b.hw.pcie.bandwidth);
  }

  b.L = static_cast<int>(b.w.layers.size());
  b.end_op = micro_batch_end_op(b.L);
  b.param_bytes = state_bytes_per_param(tr.optimizer, tr.precision).params;
  const model::DType gdt = model::grad_dtype(tr.precision);
  model::DType wire = tr.grad_reduce_dtype.value_or(gdt);
  b.hook_casts = hook == CommHook::Kind::kFp16 || hook == CommHook::Kind::kBf16;
  if (b.hook_casts) {
    // FSDP MixedPrecision(reduce_dtype=...) / the fp16/bf16 hooks: cast down (read g, write
    // h), reduce, cast back (read h, write g), as the DDP hooks in step_plan.cpp (ddp_wire_format).
    const model::DType hdt =
        hook == CommHook::Kind::kFp16 ? model::DType::kFp16 : model::DType::kBf16;
    if (model::dtype_bytes(gdt) > model::dtype_bytes(hdt)) {
      b.cast_bytes_per_element = 2.0 * (model::dtype_bytes(gdt) + model::dtype_bytes(hdt));
    }
    wire = hdt;
  }
  b.grad_bytes = model::dtype_bytes(gdt);
  b.wire_bytes = model::dtype_bytes(wire);
  b.sp.wire_scale = b.wire_bytes / b.grad_bytes;
}

// zero1 / zero2: DeepSpeed's gradient buckets (all-reduced, or reduced slice by slice to their
// owners), then the all-gather of the updated partitions after the optimizer.
void plan_zero12(ScheduleBuilder& b, bool per_micro) {
  const model::ParallelismConfig& par = b.par;
  const int n = b.n;
  const int L = b.L;
  const int end_op = b.end_op;
  const double grad_bytes = b.grad_bytes;
  const double wire_bytes = b.wire_bytes;
  const CommScope scope = per_micro ? CommScope::kEveryMicroBatch : CommScope::kLastMicroBatch;
  // DeepSpeed's overlap_comm: when the scenario leaves parallelism.overlap out, its default,
  // false below stage 3 (deepspeed/runtime/zero/config.py overlap_comm_valid: None ->
  // stage == 3). Without it average_tensor runs on the current stream (stage_1_and_2.py
  // average_tensor: `stream = get_accelerator().current_stream()`), inside the backward hook
  // of the gradient that overflows the bucket (reduce_independent_p_g_buckets_and_remove_grads
  // -> reduce_ipg_grads): the compute stream waits for the reduction.
  const bool overlap_comm = par.overlap_defaulted ? false : par.overlap;
  b.sp.overlap = overlap_comm;
  const auto buckets = deepspeed_buckets(b.w, par.reduce_bucket_elements, b.counts.tensor_elements);
  // Memory passes of average_tensor per bucket element, in the gradient dtype (g bytes):
  // tensor.div_(world size) reads and writes the bucket (gradient_average, DeepSpeed's
  // default MEAN), allreduce_bucket's self.flatten(bucket) (torch.cat of the slices) reads and
  // writes it again, and after the collective each rank copies back only the slices it owns
  // (allreduce_and_copy_with_multiple_ranks: `if copy_to_local_rank: buf.copy_(synced)`),
  // 1/n of the bucket: (4 + 2/n) g. A communication_data_type other than g casts the
  // flattened bucket there and back (`tensor.to(...)`, `tensor.copy_(...)`), 2 (g + w).
  const double deepspeed_pass_bytes =
      (4.0 + 2.0 / n) * grad_bytes + (wire_bytes != grad_bytes && b.cast_bytes_per_element == 0
                                          ? 2.0 * (grad_bytes + wire_bytes)
                                          : 0.0);
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const DeepSpeedBucket& bucket = buckets[i];
    const double bytes = static_cast<double>(bucket.elements) * wire_bytes;
    CollectiveCost cc;
    model::CollectiveOp kind = model::CollectiveOp::kAllReduce;
    int calls = 1;
    if (par.use_multi_rank_bucket_allreduce) {
      // use_multi_rank_bucket_allreduce (default true, zero/config.py): every slice of the
      // bucket goes into the ("allreduce", process_group) bucket of average_tensor, reduced by
      // allreduce_and_scatter -> allreduce_bucket: one dist.all_reduce of the whole bucket.
      cc = b.cost(model::CollectiveOp::kAllReduce, bytes, par.algorithm);
    } else {
      // false: one dist.reduce per rank owning a slice of the bucket (allreduce_no_retain
      // with rank = dst). NCCL's Reduce is the mirror image of its ring Broadcast (ring only,
      // nccl-tests bus factor 1), so each costs as a Broadcast of the slice: (n-1) latency
      // steps + slice / B.
      double time = 0;
      const auto slices = owner_slices(bucket.flat_begin, bucket.elements, b.counts.total, n);
      for (std::int64_t e : slices) {
        time += b.cost(model::CollectiveOp::kReduce, static_cast<double>(e) * wire_bytes,
                       model::CollectiveAlgorithm::kRing)
                    .time_s;
      }
      cc.time_s = time;
      cc.algorithm = model::CollectiveAlgorithm::kRing;
      // Reported like a reduce-scatter of the bucket (the same bytes on the wire).
      cc.busbw_gbytes_per_s =
          time > 0
              ? bytes / time * model::busbw_factor(model::CollectiveOp::kReduceScatter, n) / 1e9
              : 0.0;
      kind = model::CollectiveOp::kReduce;
      calls = static_cast<int>(slices.size());
    }
    // The bucket goes when the gradient that overflows it exists; the last one at the end of
    // the backward. With overlap_comm it runs on the reduction stream and must end before
    // the next micro-batch or the optimizer; without it the compute stream waits for it.
    const int gate = bucket.trigger_layer < 0 ? end_op : backward_op(bucket.trigger_layer, L) + 1;
    const int block = overlap_comm ? end_op : gate;
    ScheduledCollective c =
        scheduled_collective(kind, CommPhase::kBackward, bytes, cc, scope, gate, block,
                             fmt::format("{} bucket {}", model::collective_op_name(kind), i));
    c.cost.grad_bytes =
        static_cast<std::int64_t>(static_cast<double>(bucket.elements) * grad_bytes);
    c.cost.tensors = bucket.tensors;
    c.cost.calls = calls;
    c.overhead_s = b.gradient_overhead(bucket.elements) +
                   b.memory_s(deepspeed_pass_bytes * static_cast<double>(bucket.elements));
    if (b.offload()) {
      // ZeRO-Offload (stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu /
      // copy_grads_in_partition): after the reduction this rank's slice of the bucket is cast
      // to fp32 on the GPU (read 2, write 4 bytes) and copied to the pinned host buffer (4 bytes
      // per element over PCIe), on the reduction stream.
      const double slice = static_cast<double>(bucket.elements) / n;
      c.overhead_s += b.memory_s((grad_bytes + 4.0) * slice) + b.pcie_s(4.0 * slice);
    }
    b.add(gate, 0, std::move(c));
  }
  // The optimizer updated this rank's partition; every rank gathers all partitions.
  check_allgather_chunks(b.ctx.file.empty() ? std::string("<input>") : b.ctx.file, b.counts.total,
                         n, par.allgather_bucket_elements);
  const auto chunks = allgather_chunks(b.counts.total, n, par.allgather_bucket_elements);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const double bytes = static_cast<double>(chunks[i]) * b.param_bytes;
    const CollectiveCost cc = b.cost(model::CollectiveOp::kAllGather, bytes, par.algorithm);
    b.add(end_op + 1, 0,
          scheduled_collective(model::CollectiveOp::kAllGather, CommPhase::kOptimizer, bytes, cc,
                               CommScope::kAfterOptimizer, 0, 0,
                               fmt::format("all_gather params {}", i)));
  }
}

// zero3: stage3.py reduces DeepSpeed ipg buckets with a coalesced reduce-scatter.
void add_zero3_bucket_reduce_scatters(ScheduleBuilder& b) {
  const auto buckets =
      deepspeed_buckets(b.w, b.par.reduce_bucket_elements, b.counts.tensor_elements);
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const DeepSpeedBucket& bucket = buckets[i];
    const double bytes = static_cast<double>(bucket.elements) * b.wire_bytes;
    const CollectiveCost cc = b.cost(model::CollectiveOp::kReduceScatter, bytes, b.par.algorithm);
    const int gate = (!b.sp.overlap || bucket.trigger_layer < 0)
                         ? b.end_op
                         : backward_op(bucket.trigger_layer, b.L) + 1;
    ScheduledCollective c = scheduled_collective(
        model::CollectiveOp::kReduceScatter, CommPhase::kBackward, bytes, cc,
        CommScope::kEveryMicroBatch, gate, b.end_op, fmt::format("reduce_scatter bucket {}", i));
    c.cost.grad_bytes =
        static_cast<std::int64_t>(static_cast<double>(bucket.elements) * b.grad_bytes);
    c.cost.tensors = bucket.tensors;
    c.overhead_s = b.gradient_overhead(bucket.elements);
    if (b.offload()) {
      // stage3.py with offload_optimizer: the reduce-scattered 16-bit partition goes to pinned
      // host memory and back (2 + 2 bytes per element), and its fp32 copy to the host at the
      // accumulation boundary (4): 8 bytes per partition element over PCIe.
      c.overhead_s += b.pcie_s(8.0 * static_cast<double>(bucket.elements) / b.n);
    }
    b.add(gate, 0, std::move(c));
  }
}

// zero3 and the FSDP1 strategies: per unit (a layer with parameters) an all-gather before its
// forward and (but shard_grad_op) before its backward, prefetched as par.fsdp_prefetch says,
// and the reduce-scatter of its gradients (zero3: of DeepSpeed's buckets; fsdp_hybrid: then the
// shard's all-reduce across the nodes).
void plan_units(ScheduleBuilder& b) {
  const model::ParallelismConfig& par = b.par;
  const Strategy strategy = par.strategy;
  const int L = b.L;
  const int end_op = b.end_op;
  const bool hybrid = strategy == Strategy::kFsdpHybrid;
  // Units: the layers with parameters, in forward order.
  std::vector<int> units;
  for (int l = 0; l < L; ++l) {
    if (b.counts.layer_elements[static_cast<std::size_t>(l)] > 0) units.push_back(l);
  }
  const int U = static_cast<int>(units.size());
  auto unit_name = [&](int i) { return b.w.layers[static_cast<std::size_t>(units[i])].name; };
  auto unit_elements = [&](int i) {
    return b.counts.layer_elements[static_cast<std::size_t>(units[i])];
  };
  auto unit_tensors = [&](int i) {
    return b.counts.layer_tensors[static_cast<std::size_t>(units[i])];
  };
  auto gather = [&](int i, bool fwd, int gate, int priority) {
    const double bytes = static_cast<double>(unit_elements(i)) * b.param_bytes;
    const CollectiveCost cc = b.cost(model::CollectiveOp::kAllGather, bytes, par.algorithm);
    const int block = fwd ? forward_op(units[i]) : backward_op(units[i], L);
    ScheduledCollective c = scheduled_collective(
        model::CollectiveOp::kAllGather, fwd ? CommPhase::kForward : CommPhase::kBackward, bytes,
        cc, CommScope::kEveryMicroBatch, gate, block,
        fmt::format("all_gather {} {}", fwd ? "fwd" : "bwd", unit_name(i)));
    c.cost.layer = units[i];
    c.cost.tensors = unit_tensors(i);
    // offload_param: the unit's 16-bit partition crosses PCIe before each all-gather
    // (partition_parameters.py: the fetch blocks the host), forward and backward.
    if (b.offload_param()) {
      c.overhead_s += b.pcie_s(b.param_bytes * static_cast<double>(unit_elements(i)) / b.n);
    }
    b.add(gate, priority, std::move(c));
  };
  // Cross-node ring of one GPU per node (HYBRID_SHARD's replica group).
  const model::CollectiveBandwidths cross =
      hybrid && b.replicas > 1 ? cross_node_rail_bandwidths(b.sp.bandwidths, b.replicas)
                               : b.sp.bandwidths;
  const double fsdp_pass_bytes =
      fsdp_reduce_pass_bytes(b.shard, b.grad_bytes, b.wire_bytes, b.hook_casts);
  auto reduce_scatter = [&](int i, int gate, int priority) {
    const std::int64_t e = unit_elements(i);
    const double bytes = static_cast<double>(e) * b.wire_bytes;
    const CollectiveCost cc = b.cost(model::CollectiveOp::kReduceScatter, bytes, par.algorithm);
    ScheduledCollective c = scheduled_collective(
        model::CollectiveOp::kReduceScatter, CommPhase::kBackward, bytes, cc,
        CommScope::kEveryMicroBatch, gate, end_op, fmt::format("reduce_scatter {}", unit_name(i)));
    c.cost.layer = units[i];
    c.cost.tensors = unit_tensors(i);
    c.cost.grad_bytes = static_cast<std::int64_t>(static_cast<double>(e) * b.grad_bytes);
    c.overhead_s = b.gradient_overhead(e) + b.memory_s(fsdp_pass_bytes * static_cast<double>(e));
    b.add(gate, priority, std::move(c));
    if (hybrid && b.replicas > 1) {
      // The reduce-scattered shard (1/g of the unit) is all-reduced across the nodes.
      const double shard_bytes = bytes / b.shard;
      const CollectiveCost xc =
          collective_cost(model::CollectiveOp::kAllReduce, cross, b.hw, shard_bytes, par.algorithm);
      ScheduledCollective a =
          scheduled_collective(model::CollectiveOp::kAllReduce, CommPhase::kBackward, shard_bytes,
                               xc, CommScope::kEveryMicroBatch, gate, end_op,
                               fmt::format("all_reduce shard {}", unit_name(i)));
      a.cost.layer = units[i];
      b.add(gate, priority, std::move(a));
    }
  };
  // Forward: unit i is gathered once unit i-2 is freed (limit_all_gathers), i.e. on arrival
  // at unit i-1's forward; unit 0 at the start of the micro-batch.
  for (int i = 0; i < U; ++i) gather(i, true, i == 0 ? 0 : forward_op(units[i - 1]), 0);

  const bool regather = strategy != Strategy::kFsdpShardGradOp;  // SHARD_GRAD_OP keeps them
  const model::FsdpPrefetch prefetch =
      strategy == Strategy::kZero3 ? model::FsdpPrefetch::kBackwardPre : par.fsdp_prefetch;
  const bool zero3 = strategy == Strategy::kZero3;
  auto bwd_arrival = [&](int i) { return backward_op(units[i], L); };
  auto bwd_done = [&](int i) { return backward_op(units[i], L) + 1; };
  // Backward, highest unit first. Priorities break gate ties: gradient collectives (0) go
  // before prefetched gathers (1) except under backward_post, whose gather is issued
  // before the reduce-scatter of the unit that just finished (emitted in that order).
  if (U > 0 && regather) gather(U - 1, false, bwd_arrival(U - 1), 1);
  for (int i = U - 1; i >= 0; --i) {
    if (regather && i > 0) {
      switch (prefetch) {
        case model::FsdpPrefetch::kBackwardPre:
          gather(i - 1, false, bwd_arrival(i), 1);
          break;
        case model::FsdpPrefetch::kBackwardPost:
          gather(i - 1, false, bwd_done(i), -1);
          break;
        case model::FsdpPrefetch::kNone:
          break;  // issued by unit i-1's own pre-backward hook, below
      }
    }
    if (!zero3) reduce_scatter(i, bwd_done(i), 0);
    if (regather && i > 0 && prefetch == model::FsdpPrefetch::kNone) {
      gather(i - 1, false, bwd_arrival(i - 1), 1);
    }
  }
  if (zero3) {
    add_zero3_bucket_reduce_scatters(b);
  } else if (!b.sp.overlap) {
    // overlap = false: the gradient collectives wait for the end of the backward.
    for (Pending& p : b.pending) {
      if (p.c.cost.phase == CommPhase::kBackward &&
          p.c.cost.kind != model::CollectiveOp::kAllGather) {
        p.gate = p.c.gate_op = end_op;
      }
    }
  }
  b.sp.warnings.push_back(fmt::format(
      "{}: {} units (the workload's layers with parameters), prefetch {}; gradients are "
      "reduced in every micro-batch (no no_sync)",
      model::strategy_name(strategy), U,
      zero3 ? "of the next layer (stage3_prefetch_bucket_size not modelled)"
            : model::fsdp_prefetch_name(prefetch)));
}

}  // namespace

void plan_sharded(StepPlan& sp, const ShardedContext& ctx) {
  DDPSIM_ASSERT(ctx.workload != nullptr && ctx.hardware != nullptr, "incomplete context");
  const model::ParallelismConfig& par = ctx.parallelism;
  const Strategy strategy = par.strategy;
  DDPSIM_ASSERT(model::is_sharded(strategy), "plan_sharded is for the sharded strategies");
  const std::string where = ctx.file.empty() ? std::string("<input>") : ctx.file;
  const auto hook = par.comm_hook.kind;
  if (hook == CommHook::Kind::kPowerSgd || hook == CommHook::Kind::kTopK) {
    throw InputError(where, "/parallelism/comm_hook",
                     std::string("none, fp16 or bf16 with strategy \"") +
                         model::strategy_name(strategy) +
                         "\" (PowerSGD and top-k are DDP communication hooks)",
                     "\"" + par.comm_hook.text + "\"");
  }
  if (strategy == Strategy::kFsdp2) {
    plan_fsdp2(sp, ctx);
    return;
  }
  const int n = ctx.cluster.gpus;
  const int gpn = ctx.cluster.gpus_per_node;
  if (strategy == Strategy::kFsdpHybrid && n % gpn != 0) {
    throw InputError(where, "/cluster/gpus_per_node",
                     "a divisor of cluster.gpus (" + std::to_string(n) +
                         ") with strategy \"fsdp_hybrid\" (it shards within a node)",
                     std::to_string(gpn));
  }
  ScheduleBuilder b(sp, ctx);
  begin_schedule(b);
  const bool per_micro = strategy != Strategy::kZero1;
  sp.grad_bytes_total =
      static_cast<double>(b.counts.total) * b.grad_bytes * (per_micro ? sp.grad_accumulation : 1);
  if (n <= 1) return;  // one GPU: nothing to gather or reduce (equals ddp)

  if (strategy == Strategy::kZero1 || strategy == Strategy::kZero2) {
    plan_zero12(b, per_micro);
  } else {
    plan_units(b);
  }
  std::stable_sort(b.pending.begin(), b.pending.end(), [](const Pending& x, const Pending& y) {
    return std::tie(x.gate, x.priority, x.seq) < std::tie(y.gate, y.priority, y.seq);
  });
  sp.schedule.reserve(b.pending.size());
  for (Pending& p : b.pending) sp.schedule.push_back(std::move(p.c));
}

}  // namespace ddpsim::sim
