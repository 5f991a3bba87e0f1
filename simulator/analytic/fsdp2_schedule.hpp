// fsdp2_schedule.hpp: PyTorch's FSDP2 (torch.distributed.fsdp.fully_shard) as a
// StepPlan::schedule (parallelism.strategy "fsdp2"; its mesh, groups and dtypes: fsdp2.hpp).
//
// What FSDP2 runs (torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py and
// _fsdp_collectives.py, PyTorch main, read for this model):
//  - Groups: one FSDPParamGroup per fully_shard call. units "blocks" (torchtitan's wrapping):
//    every transformer block, and the root fully_shard(model) holding the rest (embeddings,
//    final norm, head); "layers": every layer with parameters; "model": the root only.
//  - Forward: FSDPParamGroup.pre_forward -> unshard() issues the group's all-gather on the
//    all_gather_stream, wait_for_unshard() copies it out (foreach_all_gather_copy_out:
//    split_with_sizes_copy on the CURRENT stream: read + write of the gathered bytes before the
//    group's compute). With implicit prefetching the all-gather result is freed only in the next
//    group's wait_for_unshard, after the all-gather streams wait on its copy-out event
//    (comm_ctx.all_gather_state): the all-gather of group j therefore waits on the stream for
//    the copy-out of group j-2, i.e. starts no earlier than the compute stream reaching group
//    j-2. set_modules_to_forward_prefetch(k) issues groups j+1..j+k in pre_forward(j), after
//    the wait inserted there (copy-out j-1): group j's all-gather then waits for group
//    j-k-1. The CPU thread runs ahead of the GPU (as in the FSDP1 model), so these stream waits
//    set the pace.
//  - post_forward reshards (reshard_after_forward true: frees the unsharded parameters; an
//    integer g: keeps a 1/g shard and all-gathers in backward within the g-rank post-forward
//    group, its own communicator; false: keeps them). The root never reshards after forward
//    (FSDPState lazy init: "do not reshard after forward" for the root).
//  - Backward: pre_backward(j) copies out (prefetched) and _backward_prefetch unshards the
//    group before it in the post-forward order: all-gather of group j issued on arrival at the
//    backward of group j+1 (set_modules_to_backward_prefetch(d): of group j+d; d = 0: its own
//    pre-backward). The root's pre_backward (the first backward hook) prefetches the last block.
//  - post_backward(j): the compute stream first waits for the previous group's reduce-scatter
//    (comm_ctx.reduce_scatter_state.event), then foreach_reduce copies the gradients into the
//    reduce-scatter input on the CURRENT stream (torch.ops.fsdp.chunk_cat, cast to the reduce
//    dtype: read g + write r per element), then on the reduce_scatter_stream: the
//    reduce-scatter (NCCL ReduceOp.AVG for fp32/bf16: no division kernels; fp16 divides
//    before and after), and for HSDP the all-reduce of the 1/shard output on the
//    all_reduce_stream after the reduce-scatter (all_reduce_stream.wait_stream(
//    reduce_scatter_stream)): a separate communicator that runs concurrently ("collectives
//    use different network resources and can overlap", FSDPCommContext.lazy_init). The cast of
//    the shard to the parameter dtype follows on that stream. The root's group has no
//    post-backward hook on its (integer) inputs: it reduces in the final callback, after the
//    whole backward.
//  - set_requires_gradient_sync(False): no reduce-scatter (the unsharded gradients accumulate in
//    the reduce dtype); set_requires_all_reduce(False): reduce-scatter but no all-reduce (the
//    partial shard accumulates). Both apply to every micro-batch but the last here.
//  - NCCL serialises the kernels of one communicator whatever CUDA stream issues them, so the
//    shard group's all-gathers and reduce-scatters share one FIFO (ScheduledCollective::stream
//    0); HSDP's replicate group (1) and an integer reshard's post-forward group (2) have their
//    own.
// Volumes per micro-batch (hand-checked in fsdp2_test.cpp): all-gather x2 + reduce-scatter =
// 3 (S-1)/S of the parameters (1.5x DDP's 2 (S-1)/S all-reduce) with reshard_after_forward
// true; x1 + reduce-scatter with false; HSDP adds an all-reduce of 1/S of the gradients across
// the R replicas.
#pragma once

#include "simulator/analytic/sharded_context.hpp"
#include "simulator/analytic/step_plan.hpp"

namespace ddpsim::sim {

/// Fills sp.schedule for strategy fsdp2 (called by plan_sharded) and adds the copy-out and
/// reduce-scatter copy-in kernels to the groups' layer times. Throws InputError for a mesh that
/// does not fit ctx.cluster, a param_dtype the precision does not compute in, and a comm_hook
/// (FSDP2 has none).
void plan_fsdp2(StepPlan& sp, const ShardedContext& ctx);

}  // namespace ddpsim::sim
