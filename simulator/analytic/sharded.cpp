#include "simulator/analytic/sharded.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "model/error.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/prediction/fsdp2.hpp"
#include "simulator/prediction/memory.hpp"

namespace ddpsim::sim {

using model::CommHook;
using model::Strategy;

std::vector<DeepSpeedBucket> deepspeed_buckets(const model::Workload& w, double cap_elements) {
  // Flat offsets in model.parameters() order: DeepSpeed flattens each parameter group in that
  // order (bit16_groups_flat) and partitions the flat buffer into n equal parts.
  std::vector<std::int64_t> offset(w.tensors.size(), -1);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < w.tensors.size(); ++i) {
    if (w.tensors[i].tied_to >= 0) continue;
    offset[i] = total;
    total += w.tensors[i].numel();
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
    if (t.tied_to >= 0 || t.numel() == 0) continue;
    const std::int64_t e = t.numel();
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
  const auto by_bucket = static_cast<std::int64_t>(
      std::floor(static_cast<double>(part) * ranks / allgather_bucket_elements));
  const std::int64_t shards = std::clamp<std::int64_t>(by_bucket, 1, part);
  const std::int64_t shard = part / shards;
  for (std::int64_t s = 0; s < shards; ++s) {
    const std::int64_t e = s + 1 == shards ? part - s * shard : shard;
    out.push_back(e * ranks);
  }
  return out;
}

double per_rank_traffic_bytes(model::CollectiveOp kind, double bytes, int ranks) {
  if (ranks <= 1) return 0.0;
  const double n = ranks;
  return (kind == model::CollectiveOp::kAllReduce ? 2.0 : 1.0) * (n - 1.0) / n * bytes;
}

namespace {}  // namespace

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

void begin_sharded_plan(StepPlan& sp, Strategy strategy, int shard) {
  sp.strategy = strategy;
  sp.shard_group = shard;
  sp.optimizer_s /= shard;  // each rank steps its 1/shard of the parameters
  sp.buckets.clear();
  sp.warmup_buckets.clear();
  sp.buffer_broadcast_s = 0;
  sp.used_map_allreduce_s = 0;
  sp.first_iteration_allreduce_s = 0;
  sp.schedule.clear();
}

ScheduledCollective scheduled_collective(model::CollectiveOp kind, CommPhase phase, double bytes,
                                         const CollectiveCost& cc, CommScope scope, int gate,
                                         int block, std::string name) {
  ScheduledCollective c;
  c.cost.kind = kind;
  c.cost.phase = phase;
  c.cost.bytes = static_cast<std::int64_t>(std::llround(bytes));
  c.cost.algorithm = cc.algorithm;
  c.cost.protocol = cc.protocol;
  c.cost.channels = cc.channels;
  c.cost.busbw_gbytes_per_s = cc.busbw_gbytes_per_s;
  c.collective_s = cc.time_s;
  c.scope = scope;
  c.gate_op = gate;
  c.block_op = block;
  c.name = std::move(name);
  return c;
}

model::CollectiveBandwidths cross_node_rail_bandwidths(const model::CollectiveBandwidths& all,
                                                       int replicas) {
  model::CollectiveBandwidths cross = all;
  cross.gpus = replicas;
  cross.nodes = replicas;
  cross.gpus_per_node = 1;
  cross.channels = 1;
  cross.ring_bus = std::min(all.inter_node_per_gpu, all.ring_bus);
  cross.intra_node_bus = cross.ring_bus;
  cross.inter_node_per_gpu = cross.ring_bus;
  cross.nvls_bus = 0;
  return cross;
}

namespace {

// One collective being assembled, with its place in the FIFO: sorted by (gate, priority, seq).
struct Pending {
  int gate = 0;
  int priority = 0;
  int seq = 0;
  ScheduledCollective c;
};

}  // namespace

void plan_sharded(StepPlan& sp, const ShardedContext& ctx) {
  DDPSIM_ASSERT(ctx.workload != nullptr && ctx.hardware != nullptr, "incomplete context");
  const model::Workload& w = *ctx.workload;
  const model::HardwareSpec& hw = *ctx.hardware;
  const model::ParallelismConfig& par = ctx.parallelism;
  const model::TrainingConfig& tr = ctx.training;
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
  const bool hybrid = strategy == Strategy::kFsdpHybrid;
  if (hybrid && n % gpn != 0) {
    throw InputError(where, "/cluster/gpus_per_node",
                     "a divisor of cluster.gpus (" + std::to_string(n) +
                         ") with strategy \"fsdp_hybrid\" (it shards within a node)",
                     std::to_string(gpn));
  }
  const int shard = hybrid ? gpn : n;  // ranks one parameter is sharded over
  const int replicas = hybrid ? n / gpn : 1;
  begin_sharded_plan(sp, strategy, shard);

  const int L = static_cast<int>(w.layers.size());
  const int end_op = micro_batch_end_op(L);
  const StateBytesPerParam bpp = state_bytes_per_param(tr.optimizer, tr.precision);
  const double param_bytes = bpp.params;
  const model::DType gdt = model::grad_dtype(tr.precision);
  model::DType wire = tr.grad_reduce_dtype.value_or(gdt);
  double cast_bytes_per_element = 0;
  if (hook == CommHook::Kind::kFp16 || hook == CommHook::Kind::kBf16) {
    // FSDP MixedPrecision(reduce_dtype=...) / the fp16/bf16 hooks: cast down (read g, write
    // h), reduce, cast back (read h, write g), as the DDP hooks in step_plan.cpp (ddp_wire_format).
    const model::DType hdt =
        hook == CommHook::Kind::kFp16 ? model::DType::kFp16 : model::DType::kBf16;
    if (model::dtype_bytes(gdt) > model::dtype_bytes(hdt)) {
      cast_bytes_per_element = 2.0 * (model::dtype_bytes(gdt) + model::dtype_bytes(hdt));
    }
    wire = hdt;
  }
  const double grad_bytes = model::dtype_bytes(gdt);
  const double wire_bytes = model::dtype_bytes(wire);
  sp.wire_scale = wire_bytes / grad_bytes;

  std::vector<std::int64_t> layer_elements(static_cast<std::size_t>(L), 0);
  std::vector<int> layer_tensors(static_cast<std::size_t>(L), 0);
  std::int64_t total = 0;
  for (const model::ParamTensor& t : w.tensors) {
    if (t.tied_to >= 0) continue;
    layer_elements[static_cast<std::size_t>(t.layer)] += t.numel();
    ++layer_tensors[static_cast<std::size_t>(t.layer)];
    total += t.numel();
  }
  const int k = sp.grad_accumulation;
  const bool per_micro = strategy != Strategy::kZero1;
  sp.grad_bytes_total = static_cast<double>(total) * grad_bytes * (per_micro ? k : 1);
  if (n <= 1) return;  // one GPU: nothing to gather or reduce (equals ddp)

  const model::CollectiveBandwidths& bw = ctx.group_bandwidths;
  std::map<std::pair<int, double>, CollectiveCost> memo;
  auto cost = [&](model::CollectiveOp c, double bytes, model::CollectiveAlgorithm a) {
    auto [it, inserted] = memo.try_emplace({static_cast<int>(c) * 8 + static_cast<int>(a), bytes});
    if (inserted) it->second = collective_cost(c, bw, hw, bytes, a);
    return it->second;
  };
  std::vector<Pending> pending;
  auto add = [&](int gate, int priority, ScheduledCollective c) {
    DDPSIM_ASSERT(c.scope == CommScope::kAfterOptimizer ||
                      (0 <= c.gate_op && c.gate_op <= c.block_op && c.block_op <= end_op),
                  "a collective blocking an op before its gate");
    const int seq = static_cast<int>(pending.size());
    pending.push_back({gate, priority, seq, std::move(c)});
  };
  const auto make = scheduled_collective;
  const double mem_rate = ctx.memory_bytes_per_s;
  const auto gradient_overhead = [&](std::int64_t elements) {
    return cast_bytes_per_element * static_cast<double>(elements) / mem_rate;
  };

  const bool zero12 = strategy == Strategy::kZero1 || strategy == Strategy::kZero2;
  if (zero12) {
    const CommScope scope = per_micro ? CommScope::kEveryMicroBatch : CommScope::kLastMicroBatch;
    // DeepSpeed's overlap_comm: when the scenario leaves parallelism.overlap out, its default,
    // false below stage 3 (deepspeed/runtime/zero/config.py overlap_comm_valid: None ->
    // stage == 3). Without it average_tensor runs on the current stream (stage_1_and_2.py
    // average_tensor: `stream = get_accelerator().current_stream()`), inside the backward hook
    // of the gradient that overflows the bucket (reduce_independent_p_g_buckets_and_remove_grads
    // -> reduce_ipg_grads): the compute stream waits for the reduction.
    const bool overlap_comm = par.overlap_defaulted ? false : par.overlap;
    sp.overlap = overlap_comm;
    const auto buckets = deepspeed_buckets(w, par.reduce_bucket_elements);
    // Memory passes of average_tensor per bucket element, in the gradient dtype (g bytes):
    // tensor.div_(world size) reads and writes the bucket (gradient_average, DeepSpeed's
    // default MEAN), allreduce_bucket's self.flatten(bucket) (torch.cat of the slices) reads and
    // writes it again, and after the collective each rank copies back only the slices it owns
    // (allreduce_and_copy_with_multiple_ranks: `if copy_to_local_rank: buf.copy_(synced)`),
    // 1/n of the bucket: (4 + 2/n) g. A communication_data_type other than g casts the
    // flattened bucket there and back (`tensor.to(...)`, `tensor.copy_(...)`), 2 (g + w).
    const double deepspeed_pass_bytes =
        (4.0 + 2.0 / n) * grad_bytes + (wire_bytes != grad_bytes && cast_bytes_per_element == 0
                                            ? 2.0 * (grad_bytes + wire_bytes)
                                            : 0.0);
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      const DeepSpeedBucket& b = buckets[i];
      const double bytes = static_cast<double>(b.elements) * wire_bytes;
      CollectiveCost cc;
      model::CollectiveOp kind = model::CollectiveOp::kAllReduce;
      int calls = 1;
      if (par.use_multi_rank_bucket_allreduce) {
        // use_multi_rank_bucket_allreduce (default true, zero/config.py): every slice of the
        // bucket goes into the ("allreduce", process_group) bucket of average_tensor, reduced by
        // allreduce_and_scatter -> allreduce_bucket: one dist.all_reduce of the whole bucket.
        cc = cost(model::CollectiveOp::kAllReduce, bytes, par.algorithm);
      } else {
        // false: one dist.reduce per rank owning a slice of the bucket (allreduce_no_retain
        // with rank = dst). NCCL's Reduce is the mirror image of its ring Broadcast (ring only,
        // nccl-tests bus factor 1), so each costs as a Broadcast of the slice: (n-1) latency
        // steps + slice / B.
        double time = 0;
        const auto slices = owner_slices(b.flat_begin, b.elements, total, n);
        for (std::int64_t e : slices) {
          time += cost(model::CollectiveOp::kReduce, static_cast<double>(e) * wire_bytes,
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
      const int gate = b.trigger_layer < 0 ? end_op : backward_op(b.trigger_layer, L) + 1;
      const int block = overlap_comm ? end_op : gate;
      ScheduledCollective c = make(kind, CommPhase::kBackward, bytes, cc, scope, gate, block,
                                   fmt::format("{} bucket {}", model::collective_op_name(kind), i));
      c.cost.grad_bytes = static_cast<std::int64_t>(static_cast<double>(b.elements) * grad_bytes);
      c.cost.tensors = b.tensors;
      c.cost.calls = calls;
      c.overhead_s = gradient_overhead(b.elements) +
                     deepspeed_pass_bytes * static_cast<double>(b.elements) / mem_rate;
      add(gate, 0, std::move(c));
    }
    // The optimizer updated this rank's partition; every rank gathers all partitions.
    const auto chunks = allgather_chunks(total, n, par.allgather_bucket_elements);
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const double bytes = static_cast<double>(chunks[i]) * param_bytes;
      const CollectiveCost cc = cost(model::CollectiveOp::kAllGather, bytes, par.algorithm);
      add(end_op + 1, 0,
          make(model::CollectiveOp::kAllGather, CommPhase::kOptimizer, bytes, cc,
               CommScope::kAfterOptimizer, 0, 0, fmt::format("all_gather params {}", i)));
    }
  } else {
    // Units: the layers with parameters, in forward order.
    std::vector<int> units;
    for (int l = 0; l < L; ++l) {
      if (layer_elements[static_cast<std::size_t>(l)] > 0) units.push_back(l);
    }
    const int U = static_cast<int>(units.size());
    auto unit_name = [&](int i) { return w.layers[static_cast<std::size_t>(units[i])].name; };
    auto unit_elements = [&](int i) { return layer_elements[static_cast<std::size_t>(units[i])]; };
    auto gather = [&](int i, bool fwd, int gate, int priority) {
      const double bytes = static_cast<double>(unit_elements(i)) * param_bytes;
      const CollectiveCost cc = cost(model::CollectiveOp::kAllGather, bytes, par.algorithm);
      const int block = fwd ? forward_op(units[i]) : backward_op(units[i], L);
      ScheduledCollective c =
          make(model::CollectiveOp::kAllGather, fwd ? CommPhase::kForward : CommPhase::kBackward,
               bytes, cc, CommScope::kEveryMicroBatch, gate, block,
               fmt::format("all_gather {} {}", fwd ? "fwd" : "bwd", unit_name(i)));
      c.cost.layer = units[i];
      c.cost.tensors = layer_tensors[static_cast<std::size_t>(units[i])];
      add(gate, priority, std::move(c));
    };
    // Cross-node ring of one GPU per node (HYBRID_SHARD's replica group).
    const model::CollectiveBandwidths cross =
        hybrid && replicas > 1 ? cross_node_rail_bandwidths(sp.bandwidths, replicas)
                               : sp.bandwidths;
    const double fsdp_pass_bytes =
        fsdp_reduce_pass_bytes(shard, grad_bytes, wire_bytes,
                               hook == CommHook::Kind::kFp16 || hook == CommHook::Kind::kBf16);
    auto reduce_scatter = [&](int i, int gate, int priority) {
      const std::int64_t e = unit_elements(i);
      const double bytes = static_cast<double>(e) * wire_bytes;
      const CollectiveCost cc = cost(model::CollectiveOp::kReduceScatter, bytes, par.algorithm);
      ScheduledCollective c = make(model::CollectiveOp::kReduceScatter, CommPhase::kBackward, bytes,
                                   cc, CommScope::kEveryMicroBatch, gate, end_op,
                                   fmt::format("reduce_scatter {}", unit_name(i)));
      c.cost.layer = units[i];
      c.cost.tensors = layer_tensors[static_cast<std::size_t>(units[i])];
      c.cost.grad_bytes = static_cast<std::int64_t>(static_cast<double>(e) * grad_bytes);
      c.overhead_s = gradient_overhead(e) + fsdp_pass_bytes * static_cast<double>(e) / mem_rate;
      add(gate, priority, std::move(c));
      if (hybrid && replicas > 1) {
        // The reduce-scattered shard (1/g of the unit) is all-reduced across the nodes.
        const double shard_bytes = bytes / shard;
        const CollectiveCost xc =
            collective_cost(model::CollectiveOp::kAllReduce, cross, hw, shard_bytes, par.algorithm);
        ScheduledCollective a = make(model::CollectiveOp::kAllReduce, CommPhase::kBackward,
                                     shard_bytes, xc, CommScope::kEveryMicroBatch, gate, end_op,
                                     fmt::format("all_reduce shard {}", unit_name(i)));
        a.cost.layer = units[i];
        add(gate, priority, std::move(a));
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
      // stage3.py reduces DeepSpeed ipg buckets with a coalesced reduce-scatter.
      const auto buckets = deepspeed_buckets(w, par.reduce_bucket_elements);
      for (std::size_t i = 0; i < buckets.size(); ++i) {
        const DeepSpeedBucket& b = buckets[i];
        const double bytes = static_cast<double>(b.elements) * wire_bytes;
        const CollectiveCost cc = cost(model::CollectiveOp::kReduceScatter, bytes, par.algorithm);
        const int gate =
            (!sp.overlap || b.trigger_layer < 0) ? end_op : backward_op(b.trigger_layer, L) + 1;
        ScheduledCollective c = make(model::CollectiveOp::kReduceScatter, CommPhase::kBackward,
                                     bytes, cc, CommScope::kEveryMicroBatch, gate, end_op,
                                     fmt::format("reduce_scatter bucket {}", i));
        c.cost.grad_bytes = static_cast<std::int64_t>(static_cast<double>(b.elements) * grad_bytes);
        c.cost.tensors = b.tensors;
        c.overhead_s = gradient_overhead(b.elements);
        add(gate, 0, std::move(c));
      }
    } else if (!sp.overlap) {
      // overlap = false: the gradient collectives wait for the end of the backward.
      for (Pending& p : pending) {
        if (p.c.cost.phase == CommPhase::kBackward &&
            p.c.cost.kind != model::CollectiveOp::kAllGather) {
          p.gate = p.c.gate_op = end_op;
        }
      }
    }
    sp.warnings.push_back(fmt::format(
        "{}: {} units (the workload's layers with parameters), prefetch {}; gradients are "
        "reduced in every micro-batch (no no_sync)",
        model::strategy_name(strategy), U,
        zero3 ? "of the next layer (stage3_prefetch_bucket_size not modelled)"
              : model::fsdp_prefetch_name(prefetch)));
  }
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.gate, a.priority, a.seq) < std::tie(b.gate, b.priority, b.seq);
  });
  sp.schedule.reserve(pending.size());
  for (Pending& p : pending) sp.schedule.push_back(std::move(p.c));
}

std::vector<ScheduleInstance> expand_schedule(const StepPlan& sp) {
  const int L = static_cast<int>(sp.layer_fwd_s.size());
  const int per = micro_batch_end_op(L);
  const int k = sp.grad_accumulation;
  const int end = per * k + 1;
  std::vector<ScheduleInstance> out;
  std::vector<int> instance_of(sp.schedule.size(), -1);  // this micro-batch's, per entry
  auto after = [&](const ScheduledCollective& c) {
    if (c.after < 0) return -1;
    const int a = instance_of[static_cast<std::size_t>(c.after)];
    DDPSIM_ASSERT(a >= 0, "a collective after one that does not run before it");
    return a;
  };
  for (int m = 0; m < k; ++m) {
    std::fill(instance_of.begin(), instance_of.end(), -1);
    for (std::size_t i = 0; i < sp.schedule.size(); ++i) {
      const ScheduledCollective& c = sp.schedule[i];
      if (c.scope == CommScope::kAfterOptimizer) continue;
      if (c.scope == CommScope::kLastMicroBatch && m + 1 != k) continue;
      out.push_back(
          {static_cast<int>(i), m, m * per + c.gate_op, m * per + c.block_op, c.stream, after(c)});
      instance_of[i] = static_cast<int>(out.size()) - 1;
    }
  }
  std::fill(instance_of.begin(), instance_of.end(), -1);
  for (std::size_t i = 0; i < sp.schedule.size(); ++i) {
    const ScheduledCollective& c = sp.schedule[i];
    if (c.scope == CommScope::kAfterOptimizer) {
      out.push_back({static_cast<int>(i), -1, end, end, c.stream, after(c)});
      instance_of[i] = static_cast<int>(out.size()) - 1;
    }
  }
  return out;
}

void check_sharded_layout(const std::string& file, const StepPlan& sp) {
  const double k = sp.grad_accumulation;
  double per_micro_batch = 0, once = 0;
  for (const ScheduledCollective& c : sp.schedule) {
    (c.scope == CommScope::kEveryMicroBatch ? per_micro_batch : once) += 1;
  }
  const double collectives = k * per_micro_batch + once;
  const double slots = k * (2.0 * static_cast<double>(sp.layer_fwd_s.size()) + 1);
  if (collectives > kMaxStepCollectives || slots > kMaxStepComputeSlots) {
    throw InputError(
        file, "/training/grad_accumulation",
        fmt::format("a step of at most {:.0f} collective launches and {:.0f} compute slots, "
                    "every micro-batch laid out (lower training.grad_accumulation or raise "
                    "per_gpu_batch)",
                    kMaxStepCollectives, kMaxStepComputeSlots),
        fmt::format("{:.0f} micro-batches x {:.0f} collectives + {:.0f} = {:.3g} launches, "
                    "{:.3g} compute slots",
                    k, per_micro_batch, once, collectives, slots));
  }
}

ShardedTimeline sharded_timeline(const StepPlan& sp, double f) {
  const int L = static_cast<int>(sp.layer_fwd_s.size());
  const int per = micro_batch_end_op(L);
  const int k = sp.grad_accumulation;
  const int opt = per * k;
  const int end = opt + 1;
  const std::vector<ScheduleInstance> inst = expand_schedule(sp);
  ShardedTimeline out;
  out.collectives.reserve(inst.size());
  auto duration = [&](int g) {
    if (g == opt) return sp.optimizer_s;
    const int j = g % per;
    return f * (j < L ? sp.layer_fwd_s[static_cast<std::size_t>(j)]
                      : sp.layer_bwd_s[static_cast<std::size_t>(per - 1 - j)]);
  };
  std::vector<double> block_end(static_cast<std::size_t>(end) + 1, 0.0);
  double t = 0;
  std::array<double, kCommStreams> stream_free{};  // per communicator, FIFO
  double comm_free = 0;                            // the last end on any of them
  std::size_t ci = 0;
  for (int g = 0; g <= end; ++g) {
    // Every collective gated here launches in FIFO order once its stream is free (and the one
    // it must follow has ended).
    for (; ci < inst.size() && inst[ci].gate == g; ++ci) {
      const ScheduledCollective& c = sp.schedule[static_cast<std::size_t>(inst[ci].index)];
      DDPSIM_ASSERT(inst[ci].stream >= 0 && inst[ci].stream < kCommStreams, "bad stream");
      double& free = stream_free[static_cast<std::size_t>(inst[ci].stream)];
      BucketTiming bt = c.cost;
      bt.micro_batch = inst[ci].micro_batch;
      bt.ready_s = t;
      bt.start_s = std::max(t, free);
      if (inst[ci].after >= 0) {
        bt.start_s =
            std::max(bt.start_s, out.collectives[static_cast<std::size_t>(inst[ci].after)].end_s);
      }
      bt.end_s = bt.start_s + c.duration_s();
      free = bt.end_s;
      comm_free = std::max(comm_free, bt.end_s);
      out.comm_sum_s += c.duration_s();
      auto& b = block_end[static_cast<std::size_t>(inst[ci].block)];
      b = std::max(b, bt.end_s);
      out.collectives.push_back(bt);
    }
    DDPSIM_ASSERT(ci == inst.size() || inst[ci].gate > g, "schedule gates out of order");
    if (g == end) {
      out.step_s = std::max(t, block_end[static_cast<std::size_t>(end)]);
      break;
    }
    if (g == opt) out.backward_end_s = t;
    // Compute overlapping the collectives runs StepPlan::interference times slower while the
    // communication stream is busy (interfered_s): the op starts once its blockers are done, and
    // the stream stays busy until every collective launched so far ends.
    const double start = std::max(t, block_end[static_cast<std::size_t>(g)]);
    const double d = interfered_s(duration(g), comm_free - start, sp.interference);
    if (g == opt) {
      out.optimizer_s += d;
    } else if (g % per < L) {
      out.forward_s += d;
    } else {
      out.backward_s += d;
    }
    t = start + d;
  }
  return out;
}

}  // namespace ddpsim::sim
