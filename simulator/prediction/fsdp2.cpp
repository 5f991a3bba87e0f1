#include "simulator/prediction/fsdp2.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "model/error.hpp"
#include "simulator/analytic/sharded.hpp"
#include "simulator/analytic/step_plan.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/prediction/memory.hpp"

namespace ddpsim::sim {

using model::DType;

std::optional<Fsdp2MeshProblem> fsdp2_mesh_problem(const model::Fsdp2Config& cfg, int gpus) {
  const std::string mesh = "/parallelism/fsdp2/mesh";
  int shard = gpus, replicate = 1;
  if (cfg.mesh_shard > 0) {
    shard = cfg.mesh_shard;
    if (gpus % shard != 0) {
      return Fsdp2MeshProblem{mesh + "/shard", fmt::format("a divisor of cluster.gpus ({})", gpus),
                              std::to_string(shard)};
    }
    replicate = gpus / shard;
    if (cfg.mesh_replicate > 1 && cfg.mesh_replicate != replicate) {
      return Fsdp2MeshProblem{
          mesh + "/replicate",
          fmt::format("cluster.gpus / mesh.shard = {} / {} = {}", gpus, shard, replicate),
          std::to_string(cfg.mesh_replicate)};
    }
  } else if (cfg.mesh_replicate > 1) {
    replicate = cfg.mesh_replicate;
    if (gpus % replicate != 0) {
      return Fsdp2MeshProblem{mesh + "/replicate",
                              fmt::format("a divisor of cluster.gpus ({})", gpus),
                              std::to_string(replicate)};
    }
    shard = gpus / replicate;
  }
  const int g = cfg.reshard_after_forward_group;
  if (cfg.reshard_after_forward && g > 0 && shard % g != 0) {
    // _fully_shard.py _get_post_forward_mesh_info: the integer must divide the shard mesh size.
    return Fsdp2MeshProblem{"/parallelism/fsdp2/reshard_after_forward",
                            fmt::format("true, false or a divisor of the shard size ({})", shard),
                            std::to_string(g)};
  }
  return std::nullopt;
}

Fsdp2Mesh fsdp2_mesh(const std::string& file, const model::Fsdp2Config& cfg, int gpus) {
  if (auto p = fsdp2_mesh_problem(cfg, gpus))
    throw InputError(file, p->pointer, p->expected, p->got);
  Fsdp2Mesh m;
  m.shard = cfg.mesh_shard > 0 ? cfg.mesh_shard : gpus / std::max(1, cfg.mesh_replicate);
  m.replicate = gpus / m.shard;
  if (!cfg.reshard_after_forward) {
    m.post_forward = 1;
  } else {
    m.post_forward =
        cfg.reshard_after_forward_group > 0 ? cfg.reshard_after_forward_group : m.shard;
  }
  return m;
}

std::vector<Fsdp2Group> fsdp2_groups(const model::Workload& w, model::Fsdp2Units units) {
  const int L = static_cast<int>(w.layers.size());
  std::vector<std::int64_t> elements(static_cast<std::size_t>(L), 0);
  std::vector<int> tensors(static_cast<std::size_t>(L), 0);
  for (const model::ParamTensor& t : w.tensors) {
    if (t.tied_to >= 0) continue;
    elements[static_cast<std::size_t>(t.layer)] += t.numel();
    ++tensors[static_cast<std::size_t>(t.layer)];
  }
  Fsdp2Group root;
  root.root = true;
  root.name = "root";
  std::vector<Fsdp2Group> own;
  for (int l = 0; l < L; ++l) {
    const auto i = static_cast<std::size_t>(l);
    if (elements[i] == 0) continue;
    const bool unit =
        units == model::Fsdp2Units::kLayers ||
        (units == model::Fsdp2Units::kBlocks && w.layers[i].kind == "transformer_block");
    Fsdp2Group& g = unit ? own.emplace_back() : root;
    g.layers.push_back(l);
    g.elements += elements[i];
    g.tensors += tensors[i];
    if (unit) g.name = w.layers[i].name;
  }
  std::vector<Fsdp2Group> out;
  if (root.elements > 0) out.push_back(std::move(root));
  for (Fsdp2Group& g : own) out.push_back(std::move(g));
  return out;
}

Fsdp2Dtypes fsdp2_dtypes(const std::string& file, const model::TrainingConfig& t,
                         const model::Fsdp2Config& cfg) {
  Fsdp2Dtypes d;
  const StateBytesPerParam bpp = state_bytes_per_param(t.optimizer, t.precision);
  const DType compute = model::compute_dtype(t.precision);
  // memory.hpp's table: fp32 and amp keep fp32 parameters; bf16 / fp16 keep 16-bit ones.
  d.orig = bpp.params == 4 ? DType::kFp32 : compute;
  if (cfg.param_dtype) {
    if (*cfg.param_dtype != compute) {
      throw InputError(
          file, "/parallelism/fsdp2/mixed_precision/param_dtype",
          fmt::format("\"{}\", the dtype training.precision \"{}\" computes in (16-bit "
                      "compute over fp32 parameters is amp_bf16 / amp_fp16)",
                      model::dtype_name(compute), model::precision_name(t.precision)),
          fmt::format("\"{}\"", model::dtype_name(*cfg.param_dtype)));
    }
    d.param = *cfg.param_dtype;
  } else {
    d.param = d.orig;
  }
  // Without a param_dtype policy autograd produces gradients in the unsharded parameters' dtype
  // (fp32 under autocast); with one, in param_dtype.
  const DType grad = cfg.param_dtype ? d.param : model::grad_dtype(t.precision);
  d.reduce = cfg.reduce_dtype ? *cfg.reduce_dtype : t.grad_reduce_dtype.value_or(grad);
  return d;
}

namespace {

struct Pending {
  int gate = 0;
  int priority = 0;
  int seq = 0;
  int after_seq = -1;
  ScheduledCollective c;
};

}  // namespace

void plan_fsdp2(StepPlan& sp, const ShardedContext& ctx) {
  DDPSIM_ASSERT(ctx.workload != nullptr && ctx.hardware != nullptr, "incomplete context");
  const model::Workload& w = *ctx.workload;
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
  const Fsdp2Mesh mesh = fsdp2_mesh(where, cfg, n);
  const Fsdp2Dtypes dt = fsdp2_dtypes(where, ctx.training, cfg);
  const std::vector<Fsdp2Group> groups = fsdp2_groups(w, cfg.units);
  const int S = mesh.shard;
  const int R = mesh.replicate;

  begin_sharded_plan(sp, model::Strategy::kFsdp2, S);
  if (cfg.cpu_offload) {
    // The optimizer steps the host's copy on the CPU: the bytes the GPU's optimizer would move
    // (optimizer_s at HBM rate) at this rank's share of the host's memory bandwidth.
    const int per_host = std::min(n, ctx.hardware->gpus_per_host > 0 ? ctx.hardware->gpus_per_host
                                                                     : ctx.cluster.gpus_per_node);
    sp.optimizer_s *=
        ctx.memory_bytes_per_s / (cfg.cpu_offload->host_memory_bytes_per_s / per_host);
  }
  // The unsharded parameters and the gradients autograd gives them share param_dtype.
  const double param_bytes = model::dtype_bytes(dt.param);
  const double grad_bytes = param_bytes;
  const double reduce_bytes = model::dtype_bytes(dt.reduce);
  const double orig_bytes = model::dtype_bytes(dt.orig);
  sp.wire_scale = reduce_bytes / grad_bytes;
  std::int64_t total = 0;
  for (const Fsdp2Group& g : groups) total += g.elements;
  const int k = sp.grad_accumulation;
  sp.grad_bytes_total =
      static_cast<double>(total) * grad_bytes * (cfg.requires_gradient_sync ? k : 1);
  if (n <= 1) return;  // one GPU: nothing to gather or reduce

  const int L = static_cast<int>(w.layers.size());
  const int end_op = micro_batch_end_op(L);
  const int G = static_cast<int>(groups.size());
  const double mem_rate = ctx.memory_bytes_per_s;
  // CPUOffloadPolicy (FSDPParam with offload_to_cpu): each all-gather first copies the group's
  // shard host-to-device (all_gather_inputs: .to(device, non_blocking=True)), each
  // reduce-scatter's shard goes device-to-host after it (foreach_reduce: new_sharded_grad.to(cpu,
  // non_blocking=pin_memory)); both over the GPU's PCIe path. Without pinned memory the
  // device-to-host copy is synchronous: the CPU thread, and so the next kernel, waits for it.
  const auto& offload = cfg.cpu_offload;
  const double pcie_rate = ctx.hardware->pcie.bandwidth;
  const auto shard_copy_s = [&](const Fsdp2Group& g) {
    return offload ? static_cast<double>(g.elements) / S * orig_bytes / pcie_rate : 0.0;
  };
  const bool post_forward_group = mesh.post_forward > 1 && mesh.post_forward < S;
  const bool regather = mesh.post_forward > 1;  // false / 1: the parameters stay unsharded

  std::map<std::tuple<int, int, double>, CollectiveCost> memo;
  auto cost = [&](int stream, model::CollectiveOp c, double bytes) {
    auto [it, inserted] = memo.try_emplace({stream, static_cast<int>(c), bytes});
    if (inserted) {
      const model::CollectiveBandwidths& bw = stream == 1   ? ctx.replicate_bandwidths
                                              : stream == 2 ? ctx.post_forward_bandwidths
                                                            : ctx.group_bandwidths;
      it->second = collective_cost(c, bw, *ctx.hardware, bytes, par.algorithm);
    }
    return it->second;
  };
  std::vector<Pending> pending;
  auto add = [&](int gate, int priority, int after_seq, ScheduledCollective c) {
    DDPSIM_ASSERT(0 <= c.gate_op && c.gate_op <= c.block_op && c.block_op <= end_op,
                  "a collective blocking an op before its gate");
    const int seq = static_cast<int>(pending.size());
    pending.push_back({gate, priority, seq, after_seq, std::move(c)});
    return seq;
  };
  auto make = [&](int stream, model::CollectiveOp kind, CommPhase phase, double bytes,
                  CommScope scope, int gate, int block, const Fsdp2Group& g, std::string name) {
    ScheduledCollective c = scheduled_collective(kind, phase, bytes, cost(stream, kind, bytes),
                                                 scope, gate, block, std::move(name));
    c.cost.layer = g.layers.front();
    c.cost.tensors = g.tensors;
    c.stream = stream;
    return c;
  };
  // Ops: a group's forward begins at its first layer's forward (the root's at the model's
  // first op: its pre-forward runs before any child's); its backward begins at its last layer's
  // backward (the root's at the first backward op) and ends after its first layer's.
  auto fwd_arrival = [&](const Fsdp2Group& g) { return g.root ? 0 : forward_op(g.layers.front()); };
  auto bwd_arrival = [&](const Fsdp2Group& g) {
    return g.root ? backward_op(L - 1, L) : backward_op(g.layers.back(), L);
  };
  auto bwd_done = [&](const Fsdp2Group& g) { return backward_op(g.layers.front(), L) + 1; };
  // Compute-stream kernels: each all-gather's copy-out before the group's first op
  // (split_with_sizes_copy: read + write of the gathered parameters), each reduce-scatter's
  // copy-in after its backward (chunk_cat: read the gradient, write the reduce dtype).
  auto copy_out_s = [&](const Fsdp2Group& g) {
    return 2.0 * param_bytes * static_cast<double>(g.elements) / mem_rate;
  };
  auto first = [](const Fsdp2Group& g) { return static_cast<std::size_t>(g.layers.front()); };
  auto last = [](const Fsdp2Group& g) { return static_cast<std::size_t>(g.layers.back()); };

  // Forward all-gathers, pre-forward order.
  const int ahead = std::max(cfg.forward_prefetch, 1) + 1;
  for (int j = 0; j < G; ++j) {
    const Fsdp2Group& g = groups[static_cast<std::size_t>(j)];
    const int gate = j - ahead >= 0 ? fwd_arrival(groups[static_cast<std::size_t>(j - ahead)]) : 0;
    const double bytes = static_cast<double>(g.elements) * param_bytes;
    // A shard group of one rank (HSDP with mesh.shard 1) gathers nothing: unshard() only
    // copies the shard (FSDPParamGroup.wait_for_unshard, world_size == 1).
    if (S > 1) {
      ScheduledCollective ag = make(0, model::CollectiveOp::kAllGather, CommPhase::kForward, bytes,
                                    CommScope::kEveryMicroBatch, gate, fwd_arrival(g), g,
                                    fmt::format("all_gather fwd {}", g.name));
      ag.overhead_s = shard_copy_s(g);
      add(gate, 0, -1, std::move(ag));
    }
    sp.layer_fwd_s[g.root ? 0 : first(g)] += copy_out_s(g);
  }
  // Backward, post-forward order reversed: the root (no all-gather: it keeps its parameters),
  // then the units from the last. Prefetch depth d: group j gathers when the backward reaches
  // group j + d (the root's pre-backward, at the first backward op, for the last ones).
  std::vector<int> order;  // backward order of group indices
  for (int j = 0; j < G; ++j) {
    if (groups[static_cast<std::size_t>(j)].root) order.push_back(j);
  }
  for (int j = G - 1; j >= 0; --j) {
    if (!groups[static_cast<std::size_t>(j)].root) order.push_back(j);
  }
  const int d = cfg.backward_prefetch;
  const CommScope grad_scope =
      cfg.requires_gradient_sync ? CommScope::kEveryMicroBatch : CommScope::kLastMicroBatch;
  const CommScope ar_scope = cfg.requires_gradient_sync && cfg.requires_all_reduce
                                 ? CommScope::kEveryMicroBatch
                                 : CommScope::kLastMicroBatch;
  const int B = static_cast<int>(order.size());
  // Reduce-scatters: issued after the group's backward; the compute stream's next
  // post_backward waits for it (the next unit's), the root's in the final callback.
  auto next_unit_done = [&](int pos) {
    for (int q = pos + 1; q < B; ++q) {
      const Fsdp2Group& g = groups[static_cast<std::size_t>(order[static_cast<std::size_t>(q)])];
      if (!g.root) return bwd_done(g);
    }
    return end_op;
  };
  for (int pos = 0; pos < B; ++pos) {
    const Fsdp2Group& g = groups[static_cast<std::size_t>(order[static_cast<std::size_t>(pos)])];
    if (!g.root && regather && S > 1) {
      // Issued by the pre-backward of the group d places earlier in backward order (the
      // first group's for the first ones; d = 0: its own).
      const int by = std::max(pos - d, 0);
      const int gate =
          bwd_arrival(groups[static_cast<std::size_t>(order[static_cast<std::size_t>(by)])]);
      const double bytes = static_cast<double>(g.elements) * param_bytes;
      ScheduledCollective ag = make(post_forward_group ? 2 : 0, model::CollectiveOp::kAllGather,
                                    CommPhase::kBackward, bytes, CommScope::kEveryMicroBatch, gate,
                                    bwd_arrival(g), g, fmt::format("all_gather bwd {}", g.name));
      // An integer reshard gathers from the post-forward shard kept on the GPU.
      if (!post_forward_group) ag.overhead_s = shard_copy_s(g);
      add(gate, 1, -1, std::move(ag));
      sp.layer_bwd_s[last(g)] += copy_out_s(g);
    }
  }
  // fp16 reduces divide before and after (_get_gradient_divide_factors: NCCL's AVG only for
  // fp32/bf16); the shard is cast to the parameters' dtype when the reduce dtype differs.
  const bool fp16_divides = dt.reduce == DType::kFp16;
  for (int pos = 0; pos < B; ++pos) {
    const Fsdp2Group& g = groups[static_cast<std::size_t>(order[static_cast<std::size_t>(pos)])];
    const double e = static_cast<double>(g.elements);
    const int gate = g.root ? end_op : bwd_done(g);
    const int block = g.root ? end_op : next_unit_done(pos);
    const double bytes = e * reduce_bytes;
    ScheduledCollective rs =
        make(0, model::CollectiveOp::kReduceScatter, CommPhase::kBackward, bytes, grad_scope, gate,
             block, g, fmt::format("reduce_scatter {}", g.name));
    rs.cost.grad_bytes = static_cast<std::int64_t>(e * grad_bytes);
    double pass = fp16_divides ? 2.0 * reduce_bytes + 2.0 * reduce_bytes / S : 0.0;
    if (dt.reduce != dt.orig) pass += (reduce_bytes + orig_bytes) / S;
    rs.overhead_s = pass * e / mem_rate + shard_copy_s(g);
    if (offload && !offload->pin_memory) rs.block_op = gate;
    // One rank: foreach_reduce copies the input to the output instead of reduce-scattering.
    const int rs_seq = S > 1 ? add(gate, 0, -1, std::move(rs)) : -1;
    // chunk_cat on the compute stream, right after the group's backward (the root's in the
    // final callback: charged to the last backward op).
    sp.layer_bwd_s[g.root ? 0 : first(g)] += (grad_bytes + reduce_bytes) * e / mem_rate;
    if (R > 1) {
      ScheduledCollective ar =
          make(1, model::CollectiveOp::kAllReduce, CommPhase::kBackward, bytes / S, ar_scope, gate,
               end_op, g, fmt::format("all_reduce replicas {}", g.name));
      add(gate, 0, rs_seq, std::move(ar));
    }
  }
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.gate, a.priority, a.seq) < std::tie(b.gate, b.priority, b.seq);
  });
  std::vector<int> index_of(pending.size(), -1);
  for (std::size_t i = 0; i < pending.size(); ++i) {
    index_of[static_cast<std::size_t>(pending[i].seq)] = static_cast<int>(i);
  }
  sp.schedule.reserve(pending.size());
  for (Pending& p : pending) {
    if (p.after_seq >= 0) p.c.after = index_of[static_cast<std::size_t>(p.after_seq)];
    sp.schedule.push_back(std::move(p.c));
  }
  sp.warnings.push_back(fmt::format(
      "fsdp2: {} groups ({}), mesh {} shard x {} replicate, reshard_after_forward {}, "
      "all-gather {} / reduce {}, forward prefetch {}, backward prefetch {}{}{}",
      G, model::fsdp2_units_name(cfg.units), S, R,
      !cfg.reshard_after_forward ? std::string("false")
      : post_forward_group       ? std::to_string(mesh.post_forward)
                                 : std::string("true"),
      model::dtype_name(dt.param), model::dtype_name(dt.reduce), cfg.forward_prefetch, d,
      cfg.requires_gradient_sync ? "" : "; gradients reduced in the last micro-batch only",
      offload ? fmt::format("; CPU offload over {:.0f} GB/s PCIe{}, optimizer on the CPU",
                            pcie_rate / 1e9, offload->pin_memory ? "" : " (not pinned)")
              : std::string()));
}

}  // namespace ddpsim::sim
