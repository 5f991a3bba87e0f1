#include "simulator/analytic/fsdp2_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/error.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/prediction/fsdp2.hpp"

namespace ddpsim::sim {

using model::DType;

namespace {

struct QueuedCollective {
  int gate = 0;
  int priority = 0;
  int seq = 0;
  int after_seq = -1;
  ScheduledCollective c;
};

// One FSDP2 step being assembled: the mesh, groups and dtypes, the element sizes, the
// collectives' costs (memoised per communicator, op and size) and the FIFO being filled.
// Ops: a group's forward begins at its first layer's forward (the root's at the model's first
// op: its pre-forward runs before any child's); its backward begins at its last layer's backward
// (the root's at the first backward op) and ends after its first layer's.
struct Fsdp2Builder {
  Fsdp2Builder(StepPlan& plan, const ShardedContext& context, const Fsdp2Mesh& m,
               const Fsdp2Dtypes& d, std::vector<Fsdp2Group> g)
      : sp(plan),
        ctx(context),
        cfg(context.parallelism.fsdp2),
        mesh(m),
        dt(d),
        groups(std::move(g)),
        L(static_cast<int>(context.workload->layers.size())),
        end_op(micro_batch_end_op(L)) {
    // training.float8 with fsdp_float8_all_gather: each Float8Linear weight is cast to fp8 before
    // its all-gather (torchao fsdp_utils.py fsdp_pre_all_gather): one byte per element on the
    // wire and in the gathered buffer.
    const auto& f8 = context.training.float8;
    if (f8 && f8->fsdp_float8_all_gather) {
      fp8_elements = model::float8_weight_elements(*context.workload, *f8, &fp8_weights);
      precompute = f8->precompute_scale;
    }
  }

  StepPlan& sp;
  const ShardedContext& ctx;
  const model::Fsdp2Config& cfg;
  Fsdp2Mesh mesh;
  Fsdp2Dtypes dt;
  std::vector<Fsdp2Group> groups;
  int L = 0;
  int end_op = 0;
  // The unsharded parameters and the gradients autograd gives them share param_dtype.
  double param_bytes = model::dtype_bytes(dt.param);
  double grad_bytes = param_bytes;
  double reduce_bytes = model::dtype_bytes(dt.reduce);
  double orig_bytes = model::dtype_bytes(dt.orig);
  bool post_forward_group = mesh.post_forward > 1 && mesh.post_forward < mesh.shard;
  bool regather = mesh.post_forward > 1;  // false / 1: the parameters stay unsharded
  std::map<std::tuple<int, int, double>, CollectiveCost> memo;
  std::vector<QueuedCollective> pending;
  std::vector<double> fp8_elements;  ///< per layer: float8 weights gathered in fp8 (else empty)
  std::vector<int> fp8_weights;      ///< per layer: how many
  bool precompute = false;

  // A group's gathered bytes: its float8 weights at one byte, the rest in param_dtype.
  double gather_bytes(const Fsdp2Group& g) const {
    double fp8 = 0;
    for (int l : g.layers)
      fp8 += fp8_elements.empty() ? 0.0 : fp8_elements[static_cast<std::size_t>(l)];
    return (static_cast<double>(g.elements) - fp8) * param_bytes + fp8;
  }
  // Before a float8 all-gather without precomputed scales each weight's cast all-reduces its
  // amax over the mesh (torchao hp_tensor_to_float8_dynamic reduce_amax=True: one 4-byte
  // all-reduce per weight, fsdp_utils.py:243-250), and every cast reads the fp32 shard and
  // writes its fp8 copy (4 + 1 bytes per shard element) on the compute stream.
  double fp8_cast_s(const Fsdp2Group& g, int stream) {
    if (fp8_elements.empty()) return 0.0;
    double elements = 0;
    int weights = 0;
    for (int l : g.layers) {
      elements += fp8_elements[static_cast<std::size_t>(l)];
      weights += fp8_weights[static_cast<std::size_t>(l)];
    }
    const double cast = elements / mesh.shard * (orig_bytes + 1.0) / ctx.memory_bytes_per_s;
    const double amax =
        precompute ? 0.0 : weights * cost(stream, model::CollectiveOp::kAllReduce, 4.0).time_s;
    return cast + amax;
  }

  const Fsdp2Group& group(int j) const { return groups[static_cast<std::size_t>(j)]; }
  int fwd_arrival(const Fsdp2Group& g) const { return g.root ? 0 : forward_op(g.layers.front()); }
  int bwd_arrival(const Fsdp2Group& g) const {
    return g.root ? backward_op(L - 1, L) : backward_op(g.layers.back(), L);
  }
  int bwd_done(const Fsdp2Group& g) const { return backward_op(g.layers.front(), L) + 1; }
  // Compute-stream kernels: each all-gather's copy-out before the group's first op
  // (split_with_sizes_copy: read + write of the gathered parameters).
  double copy_out_s(const Fsdp2Group& g) const {
    return 2.0 * gather_bytes(g) / ctx.memory_bytes_per_s;
  }
  // CPUOffloadPolicy (FSDPParam with offload_to_cpu): each all-gather first copies the group's
  // shard host-to-device (all_gather_inputs: .to(device, non_blocking=True)), each
  // reduce-scatter's shard goes device-to-host after it (foreach_reduce: new_sharded_grad.to(cpu,
  // non_blocking=pin_memory)); both over the GPU's PCIe path. Without pinned memory the
  // device-to-host copy is synchronous: the CPU thread, and so the next kernel, waits for it.
  double shard_copy_s(const Fsdp2Group& g) const {
    return cfg.cpu_offload ? static_cast<double>(g.elements) / mesh.shard * orig_bytes /
                                 ctx.hardware->pcie.bandwidth
                           : 0.0;
  }

  // How NCCL is asked to reduce `c` on `stream`. foreach_reduce passes the reduce-scatter and
  // HSDP's all-reduce ReduceOp.AVG when reduce_dtype is fp32 or bf16, dividing in NCCL instead of
  // separate kernels (_fsdp_collectives.py _get_gradient_divide_factors, in every release of
  // FSDP2; fp16 pre- and post-divides around a SUM); ncclAvg on floating point runs as
  // PreMulSum, which neither NVLS nor PAT runs (model::Reduction). Stream 0's all-reduces are
  // float8's fp32 amax reductions (ReduceOp.MAX).
  model::Reduction reduction(int stream, model::CollectiveOp c) const {
    if (c == model::CollectiveOp::kAllGather) return model::Reduction::kSum;
    if (c == model::CollectiveOp::kAllReduce && stream == 0) return model::Reduction::kMaxFloat32;
    const bool nccl_divides = dt.reduce == DType::kFp32 || dt.reduce == DType::kBf16;
    return nccl_divides ? model::Reduction::kAverage : model::Reduction::kSum;
  }
  // Stream 0: the shard group; 1: HSDP's replicas; 2: an integer reshard's post-forward group.
  CollectiveCost cost(int stream, model::CollectiveOp c, double bytes) {
    auto [it, inserted] = memo.try_emplace({stream, static_cast<int>(c), bytes});
    if (inserted) {
      const model::CollectiveBandwidths& bw = stream == 1   ? ctx.replicate_bandwidths
                                              : stream == 2 ? ctx.post_forward_bandwidths
                                                            : ctx.group_bandwidths;
      it->second = collective_cost(c, bw, *ctx.hardware, bytes, ctx.parallelism.algorithm,
                                   model::CollectiveProtocol::kAuto, reduction(stream, c));
    }
    return it->second;
  }
  int add(int gate, int priority, int after_seq, ScheduledCollective c) {
    DDPSIM_ASSERT(0 <= c.gate_op && c.gate_op <= c.block_op && c.block_op <= end_op,
                  "a collective blocking an op before its gate");
    const int seq = static_cast<int>(pending.size());
    pending.push_back({gate, priority, seq, after_seq, std::move(c)});
    return seq;
  }
  ScheduledCollective make(int stream, model::CollectiveOp kind, CommPhase phase, double bytes,
                           CommScope scope, int gate, int block, const Fsdp2Group& g,
                           std::string name) {
    ScheduledCollective c = scheduled_collective(kind, phase, bytes, cost(stream, kind, bytes),
                                                 scope, gate, block, std::move(name));
    c.cost.layer = g.layers.front();
    c.cost.tensors = g.tensors;
    c.stream = stream;
    return c;
  }
};

std::size_t first(const Fsdp2Group& g) { return static_cast<std::size_t>(g.layers.front()); }
std::size_t last(const Fsdp2Group& g) { return static_cast<std::size_t>(g.layers.back()); }

// Forward all-gathers, pre-forward order: group j's waits for the copy-out of group j - ahead.
void add_forward_gathers(Fsdp2Builder& b) {
  const int ahead = std::max(b.cfg.forward_prefetch, 1) + 1;
  const int G = static_cast<int>(b.groups.size());
  for (int j = 0; j < G; ++j) {
    const Fsdp2Group& g = b.group(j);
    const int gate = j - ahead >= 0 ? b.fwd_arrival(b.group(j - ahead)) : 0;
    const double bytes = b.gather_bytes(g);
    // A shard group of one rank (HSDP with mesh.shard 1) gathers nothing: unshard() only
    // copies the shard (FSDPParamGroup.wait_for_unshard, world_size == 1).
    if (b.mesh.shard > 1) {
      ScheduledCollective ag = b.make(0, model::CollectiveOp::kAllGather, CommPhase::kForward,
                                      bytes, CommScope::kEveryMicroBatch, gate, b.fwd_arrival(g), g,
                                      fmt::format("all_gather fwd {}", g.name));
      ag.overhead_s = b.shard_copy_s(g) + b.fp8_cast_s(g, 0);
      b.add(gate, 0, -1, std::move(ag));
    }
    b.sp.layer_fwd_s[g.root ? 0 : first(g)] += b.copy_out_s(g);
  }
}

// Backward, post-forward order reversed: the root (no all-gather: it keeps its parameters),
// then the units from the last.
std::vector<int> backward_order(const Fsdp2Builder& b) {
  const int G = static_cast<int>(b.groups.size());
  std::vector<int> order;
  for (int j = 0; j < G; ++j) {
    if (b.group(j).root) order.push_back(j);
  }
  for (int j = G - 1; j >= 0; --j) {
    if (!b.group(j).root) order.push_back(j);
  }
  return order;
}

// Backward all-gathers. Prefetch depth d: group j gathers when the backward reaches group j + d
// (the root's pre-backward, at the first backward op, for the last ones).
void add_backward_gathers(Fsdp2Builder& b, const std::vector<int>& order) {
  if (!b.regather || b.mesh.shard <= 1) return;
  const int d = b.cfg.backward_prefetch;
  const int B = static_cast<int>(order.size());
  for (int pos = 0; pos < B; ++pos) {
    const Fsdp2Group& g = b.group(order[static_cast<std::size_t>(pos)]);
    if (g.root || !g.reshard) continue;  // kept unsharded since its forward
    // Issued by the pre-backward of the group d places earlier in backward order (the
    // first group's for the first ones; d = 0: its own).
    const int by = std::max(pos - d, 0);
    const int gate = b.bwd_arrival(b.group(order[static_cast<std::size_t>(by)]));
    const double bytes = b.gather_bytes(g);
    ScheduledCollective ag = b.make(b.post_forward_group ? 2 : 0, model::CollectiveOp::kAllGather,
                                    CommPhase::kBackward, bytes, CommScope::kEveryMicroBatch, gate,
                                    b.bwd_arrival(g), g, fmt::format("all_gather bwd {}", g.name));
    // An integer reshard gathers from the post-forward shard kept on the GPU.
    if (!b.post_forward_group) ag.overhead_s = b.shard_copy_s(g) + b.fp8_cast_s(g, 0);
    b.add(gate, 1, -1, std::move(ag));
    b.sp.layer_bwd_s[last(g)] += b.copy_out_s(g);
  }
}

// Reduce-scatters: issued after the group's backward; the compute stream's next post_backward
// waits for it (the next unit's), the root's in the final callback. HSDP all-reduces each
// reduce-scattered shard across the replicas, on its own communicator, after it.
void add_gradient_reductions(Fsdp2Builder& b, const std::vector<int>& order) {
  const model::Fsdp2Config& cfg = b.cfg;
  const int S = b.mesh.shard;
  const int B = static_cast<int>(order.size());
  const double mem_rate = b.ctx.memory_bytes_per_s;
  const CommScope grad_scope =
      cfg.requires_gradient_sync ? CommScope::kEveryMicroBatch : CommScope::kLastMicroBatch;
  const CommScope ar_scope = cfg.requires_gradient_sync && cfg.requires_all_reduce
                                 ? CommScope::kEveryMicroBatch
                                 : CommScope::kLastMicroBatch;
  auto next_unit_done = [&](int pos) {
    for (int q = pos + 1; q < B; ++q) {
      const Fsdp2Group& g = b.group(order[static_cast<std::size_t>(q)]);
      if (!g.root) return b.bwd_done(g);
    }
    return b.end_op;
  };
  // fp16 reduces divide before and after (_get_gradient_divide_factors: NCCL's AVG only for
  // fp32/bf16); the shard is cast to the parameters' dtype when the reduce dtype differs.
  const bool fp16_divides = b.dt.reduce == DType::kFp16;
  for (int pos = 0; pos < B; ++pos) {
    const Fsdp2Group& g = b.group(order[static_cast<std::size_t>(pos)]);
    const double e = static_cast<double>(g.elements);
    const int gate = g.root ? b.end_op : b.bwd_done(g);
    const int block = g.root ? b.end_op : next_unit_done(pos);
    const double bytes = e * b.reduce_bytes;
    ScheduledCollective rs =
        b.make(0, model::CollectiveOp::kReduceScatter, CommPhase::kBackward, bytes, grad_scope,
               gate, block, g, fmt::format("reduce_scatter {}", g.name));
    rs.cost.grad_bytes = static_cast<std::int64_t>(e * b.grad_bytes);
    double pass = fp16_divides ? 2.0 * b.reduce_bytes + 2.0 * b.reduce_bytes / S : 0.0;
    if (b.dt.reduce != b.dt.orig) pass += (b.reduce_bytes + b.orig_bytes) / S;
    rs.overhead_s = pass * e / mem_rate + b.shard_copy_s(g);
    if (cfg.cpu_offload && !cfg.cpu_offload->pin_memory) rs.block_op = gate;
    // One rank: foreach_reduce copies the input to the output instead of reduce-scattering.
    const int rs_seq = S > 1 ? b.add(gate, 0, -1, std::move(rs)) : -1;
    // chunk_cat on the compute stream, right after the group's backward (the root's in the
    // final callback: charged to the last backward op): read the gradient, write the reduce
    // dtype.
    b.sp.layer_bwd_s[g.root ? 0 : first(g)] += (b.grad_bytes + b.reduce_bytes) * e / mem_rate;
    if (b.mesh.replicate > 1) {
      ScheduledCollective ar =
          b.make(1, model::CollectiveOp::kAllReduce, CommPhase::kBackward, bytes / S, ar_scope,
                 gate, b.end_op, g, fmt::format("all_reduce replicas {}", g.name));
      b.add(gate, 0, rs_seq, std::move(ar));
    }
  }
}

// The FIFO in launch order into sp.schedule, each `after` turned into a schedule index.
void finish_schedule(Fsdp2Builder& b) {
  std::vector<QueuedCollective>& pending = b.pending;
  std::stable_sort(
      pending.begin(), pending.end(), [](const QueuedCollective& x, const QueuedCollective& y) {
        return std::tie(x.gate, x.priority, x.seq) < std::tie(y.gate, y.priority, y.seq);
      });
  std::vector<int> index_of(pending.size(), -1);
  for (std::size_t i = 0; i < pending.size(); ++i) {
    index_of[static_cast<std::size_t>(pending[i].seq)] = static_cast<int>(i);
  }
  b.sp.schedule.reserve(pending.size());
  for (QueuedCollective& p : pending) {
    if (p.after_seq >= 0) p.c.after = index_of[static_cast<std::size_t>(p.after_seq)];
    b.sp.schedule.push_back(std::move(p.c));
  }
}

std::string summary(const Fsdp2Builder& b) {
  const model::Fsdp2Config& cfg = b.cfg;
  const auto& offload = cfg.cpu_offload;
  return fmt::format(
      "fsdp2: {} groups ({}), mesh {} shard x {} replicate, reshard_after_forward {}, "
      "all-gather {} / reduce {}, forward prefetch {}, backward prefetch {}{}{}",
      b.groups.size(), model::fsdp2_units_name(cfg.units), b.mesh.shard, b.mesh.replicate,
      !cfg.reshard_after_forward ? std::string("false")
      : b.post_forward_group     ? std::to_string(b.mesh.post_forward)
                                 : std::string("true"),
      model::dtype_name(b.dt.param), model::dtype_name(b.dt.reduce), cfg.forward_prefetch,
      cfg.backward_prefetch,
      cfg.requires_gradient_sync ? "" : "; gradients reduced in the last micro-batch only",
      offload ? fmt::format("; CPU offload over {:.0f} GB/s PCIe{}, optimizer on the CPU",
                            b.ctx.hardware->pcie.bandwidth / 1e9,
                            offload->pin_memory ? "" : " (not pinned)")
              : std::string());
}

}  // namespace

void plan_fsdp2(StepPlan& sp, const ShardedContext& ctx) {
  DDPSIM_ASSERT(ctx.workload != nullptr && ctx.hardware != nullptr, "incomplete context");
  const model::ParallelismConfig& par = ctx.parallelism;
  const model::Fsdp2Config& cfg = par.fsdp2;
  const std::string where = ctx.file.empty() ? std::string("<input>") : ctx.file;
  if (par.comm_hook.kind != model::CommHook::Kind::kNone) {
    throw InputError(where, "/parallelism/comm_hook",
                     "none with strategy \"fsdp2\" (fully_shard has no communication hooks: "
                     "set parallelism.fsdp2.mixed_precision.reduce_dtype)",
                     "\"" + par.comm_hook.text + "\"");
  }
  const int n = ctx.cluster.gpus;
  // In this order, so that the first problem of the scenario is the one named.
  const Fsdp2Mesh mesh = fsdp2_mesh(where, cfg, n);
  const Fsdp2Dtypes dt = fsdp2_dtypes(where, ctx.training, cfg);
  Fsdp2Builder b(sp, ctx, mesh, dt, fsdp2_groups(*ctx.workload, cfg.units));

  begin_sharded_plan(sp, model::Strategy::kFsdp2, b.mesh.shard);
  if (cfg.cpu_offload) {
    // The optimizer steps the host's copy on the CPU: the bytes the GPU's optimizer would move
    // (optimizer_s at HBM rate) at this rank's share of the host's memory bandwidth.
    const int per_host = std::min(n, ctx.hardware->gpus_per_host > 0 ? ctx.hardware->gpus_per_host
                                                                     : ctx.cluster.gpus_per_node);
    sp.optimizer_s *=
        ctx.memory_bytes_per_s / (cfg.cpu_offload->host_memory_bytes_per_s / per_host);
  }
  if (b.precompute && n > 1) {
    // precompute_float8_dynamic_scale_for_fsdp after the optimizer step (fsdp_utils.py:27-85):
    // one foreach inf-norm over every local float8 weight shard (reads the fp32 shards) and one
    // all-reduce of the amax vector (4 bytes per weight).
    double elements = 0;
    int weights = 0;
    for (std::size_t l = 0; l < b.fp8_elements.size(); ++l) {
      elements += b.fp8_elements[l];
      weights += b.fp8_weights[l];
    }
    sp.optimizer_s += elements / b.mesh.shard * b.orig_bytes / ctx.memory_bytes_per_s +
                      b.cost(0, model::CollectiveOp::kAllReduce, 4.0 * weights).time_s;
  }
  sp.wire_scale = b.reduce_bytes / b.grad_bytes;
  std::int64_t total = 0;
  for (const Fsdp2Group& g : b.groups) total += g.elements;
  sp.grad_bytes_total = static_cast<double>(total) * b.grad_bytes *
                        (cfg.requires_gradient_sync ? sp.grad_accumulation : 1);
  if (n <= 1) return;  // one GPU: nothing to gather or reduce

  add_forward_gathers(b);
  const std::vector<int> order = backward_order(b);
  add_backward_gathers(b, order);
  add_gradient_reductions(b, order);
  finish_schedule(b);
  sp.warnings.push_back(summary(b));
}

}  // namespace ddpsim::sim
