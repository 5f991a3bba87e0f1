// sharded.hpp: the step schedules of the sharded data-parallel strategies (DeepSpeed ZeRO-1/2/3,
// PyTorch FSDP FULL_SHARD / SHARD_GRAD_OP / HYBRID_SHARD), as StepPlan::schedule.
//
// What each strategy runs (ecosystem.md sections 2 and 3; DeepSpeed stage_1_and_2.py, stage3.py,
// runtime/utils.py all_gather_dp_groups; torch/distributed/fsdp):
//  - zero1: at the accumulation boundary only (DeepSpeed "communicate only at gradient
//    accumulation boundaries" for stage 0/1), gradients are reduced in DeepSpeed buckets of
//    reduce_bucket_size ELEMENTS; each bucket is all-reduced whole (use_multi_rank_bucket_
//    allreduce, default true: average_tensor's ("allreduce", group) bucket) or, with it false,
//    reduced with one dist.reduce per rank owning a slice of it (the flat gradient space split
//    into n equal partitions: a reduce-scatter's bytes, the latency once per owner). Without
//    overlap_comm (DeepSpeed's default below stage 3; parallelism.overlap left out) the compute
//    stream waits for each bucket's reduction, issued when the bucket fills. Then the
//    optimizer on the 1/n shard and the all-gather of the updated partitions in
//    allgather_bucket_size chunks (all_gather_dp_groups: num_shards = max(1, partition x n //
//    allgather_bucket_size)). Volume 3(n-1)/n of the gradient bytes (2(n-1)/n with reduces).
//  - zero2: the same, but the buckets are reduced in EVERY micro-step (ZeRO stage >= 2
//    communicates at non-boundary micro-steps too; no_sync is incompatible with it).
//  - zero3 / fsdp_full_shard: one unit per workload layer that has parameters (FSDP's
//    transformer_auto_wrap_policy wraps every block; the builders make embeddings, blocks and the
//    head layers of their own; tied tensors belong to the layer that owns them). Per micro-batch:
//    an all-gather of each unit's parameters before its forward and again before its backward,
//    and a reduce-scatter of its gradients after its backward (zero3: of DeepSpeed's
//    reduce_bucket_size buckets, as stage3.py's ipg buckets). Volume 3(n-1)/n = 1.5x DDP.
//  - fsdp_shard_grad_op: the forward all-gather only (the parameters stay unsharded until the
//    end of the backward), and the per-unit reduce-scatter. Volume 2(n-1)/n.
//  - fsdp_hybrid: fsdp_full_shard within each node (g = gpus_per_node ranks), then an all-reduce
//    of each unit's reduce-scattered shard (1/g of its gradients) across the r = gpus/g nodes,
//    one ring per GPU rail, queued right behind the unit's reduce-scatter (FSDP1 runs both on the
//    post-backward stream).
//  - FSDP and ZeRO-3 reduce gradients in every micro-batch (no no_sync: the memory model keeps
//    the gradients sharded, which no_sync would not).
// Timing rules (both engines, via the gates of ScheduledCollective):
//  - forward: the all-gather of unit i is issued when unit i-2 has been freed, i.e. when the
//    rank arrives at unit i-1's forward (FSDP's limit_all_gathers rate limiter: two units in
//    flight; the CPU thread runs ahead of the GPU, so no forward_prefetch is needed to overlap a
//    GPU-bound forward). The first unit's gather is exposed; later ones hide behind the previous
//    unit's compute when they fit.
//  - backward, fsdp_prefetch (FSDP backward_prefetch; zero3 always prefetches like backward_pre):
//    backward_pre: unit i's all-gather is issued on arrival at the previous unit's backward,
//    ahead of that unit's reduce-scatter; backward_post: on arrival at its own backward, still
//    ahead of the previous unit's reduce-scatter; none: on arrival at its own backward, behind
//    that reduce-scatter.
//  - gradient collectives launch when their last gradient exists (DeepSpeed: when the next
//    tensor's gradient overflows the bucket, the last bucket at the end of the backward; with
//    parallelism.overlap = false, all at the end of the backward) and must end before the next
//    micro-batch or the optimizer (FSDP's final callback / DeepSpeed's reduce epilogue wait).
//  - one communication stream per rank, FIFO in schedule order (FSDP's docstring: collectives
//    from different streams "contend for the same per-device NCCL stream").
// Costs: all-gather / reduce-scatter / all-reduce from simulator/collectives/collective.hpp over
// the shard group's bandwidths; a DeepSpeed reduce of S bytes costs as NCCL's ring Broadcast, its
// mirror image ((n-1) latency steps + S / B). The optimizer runs on the 1/n shard (optimizer_s /
// n). Parameters travel in the precision's parameter dtype (memory.hpp state_bytes_per_param: 4
// bytes for fp32/amp, 2 for bf16/fp16), gradients in the wire dtype (grad_reduce_dtype or the
// fp16/bf16 hook, FSDP MixedPrecision reduce_dtype), with the hook's cast kernels as overhead.
// PowerSGD / top-k are DDP hooks: an InputError at /parallelism/comm_hook (the scenario loader
// rejects them first). On one GPU a sharded strategy has no collectives and equals ddp.
//
// How both engines lay the schedule out is sharded_layout.hpp (included here).
//
//   StepPlan sp = Predictor(s).plan(s.cluster, s.training, s.parallelism);  // calls plan_sharded
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hardware/cluster.hpp"
#include "model/hardware/hardware.hpp"
#include "model/scenario/scenario.hpp"
#include "model/workload/workload.hpp"
#include "simulator/analytic/sharded_context.hpp"
#include "simulator/analytic/sharded_layout.hpp"
#include "simulator/analytic/step_plan.hpp"
#include "simulator/collectives/collective.hpp"

namespace ddpsim::sim {

/// Fills sp.schedule, sp.shard_group, divides sp.optimizer_s by the shard group, sets
/// sp.grad_bytes_total (gradient bytes reduced per step) and adds warnings. Throws InputError
/// (ctx.file, "/parallelism/comm_hook") for PowerSGD / top-k and (ctx.file,
/// "/cluster/gpus_per_node") for fsdp_hybrid when gpus_per_node does not divide gpus.
void plan_sharded(StepPlan& sp, const ShardedContext& ctx);

/// One DeepSpeed gradient bucket (stage_1_and_2.py / stage3.py ipg bucket): gradients arrive
/// in reverse parameter order; a tensor whose elements would take a non-empty bucket past
/// reduce_bucket_size first sends the bucket off; the last bucket goes at the end of backward.
struct DeepSpeedBucket {
  std::int64_t elements = 0;
  int tensors = 0;
  /// Where the bucket's elements sit in the flattened parameter space (model.parameters()
  /// order, tied tensors skipped): [flat_begin, flat_begin + elements).
  std::int64_t flat_begin = 0;
  /// Layer whose backward produces the gradient that sends it off; -1 = end of the backward.
  int trigger_layer = -1;
};
std::vector<DeepSpeedBucket> deepspeed_buckets(const model::Workload& w, double cap_elements);
/// The same with each tensor's elements already counted (ParamCounts::tensor_elements).
std::vector<DeepSpeedBucket> deepspeed_buckets(const model::Workload& w, double cap_elements,
                                               const std::vector<std::int64_t>& tensor_elements);

/// DeepSpeed average_tensor's slices of one bucket: one per partition (of ceil(total / n)
/// elements) it overlaps, as element counts in order.
std::vector<std::int64_t> owner_slices(std::int64_t flat_begin, std::int64_t elements,
                                       std::int64_t total_elements, int ranks);

/// all_gather_dp_groups's all-gathers of the updated parameters: per call the total elements
/// gathered (n x shard), for `total_elements` parameters over `ranks` partitions.
std::vector<std::int64_t> allgather_chunks(std::int64_t total_elements, int ranks,
                                           double allgather_bucket_elements);
/// How many all-gathers allgather_chunks makes (num_shards), counted without allocating.
std::int64_t allgather_chunk_count(std::int64_t total_elements, int ranks,
                                   double allgather_bucket_elements);
/// The most all-gathers of the updated parameters one ZeRO-1/2 step may hold: each is a
/// scheduled collective laid out and reported one by one, so the count is bounded before any is
/// made, at the step's own bound (sharded_layout.hpp kMaxStepCollectives, 5e5). A larger count
/// (1e13 parameters with allgather_bucket_size 1e6: 1e7 all-gathers, ~3 GB of schedule, was an
/// internal std::bad_alloc after 20 s) is an InputError on /parallelism/allgather_bucket_size
/// naming the figures and the smallest bucket that fits.
void check_allgather_chunks(const std::string& file, std::int64_t total_elements, int ranks,
                            double allgather_bucket_elements);

/// Bytes each rank sends for one collective of total size `bytes` over `ranks` ranks (nccl-tests'
/// bus factor applied to the size): all-reduce 2(n-1)/n S; reduce-scatter, all-gather and
/// reduce (n-1)/n S (a ring reduce sends S from every rank but the root: (n-1) S in all).
double per_rank_traffic_bytes(model::CollectiveOp kind, double bytes, int ranks);

/// FSDP1's gradient_predivide_factor for a process group of `world_size` ranks (PyTorch
/// default_hooks.py): the gradient is divided by it before the reduce-scatter and by
/// world_size / it after. E.g. 8 -> 4, 2 -> 2, 1 -> 1.
double fsdp_gradient_predivide_factor(int world_size);

/// Memory bytes per gradient element that FSDP1's post-backward hook moves around one unit's
/// reduce-scatter (cast to the reduce dtype, pre-divide, post-divide and cast back of the
/// shard), charged on the collective's stream with it. `grad_bytes`/`wire_bytes`: the gradient's
/// and the reduce dtype's element size; `hook_casts`: an fp16/bf16 comm hook does the casts.
/// E.g. 8 ranks, bf16 gradients reduced in fp32: 2 + 4 (cast) + 8 (pre-divide) + (8 + 0) / 8
/// (post-divide; the shard is already fp32) = 15 bytes.
double fsdp_reduce_pass_bytes(int shard, double grad_bytes, double wire_bytes, bool hook_casts);

}  // namespace ddpsim::sim
