// Per-GPU memory model. Derivations and sources are given beside each term; the assumptions (the
// CUDA context size, NCCL channel count and fragmentation fraction) are named in memory.hpp.
#include "simulator/prediction/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "simulator/prediction/fsdp2.hpp"

namespace ddpsim::sim {

using model::Optimizer;
using model::Precision;
using model::Strategy;

const char* zero_stage_name(ZeroStage s) {
  switch (s) {
    case ZeroStage::kBaseline:
      return "baseline";
    case ZeroStage::kOs:
      return "Pos";
    case ZeroStage::kOsG:
      return "Pos+g";
    case ZeroStage::kOsGP:
      return "Pos+g+p";
  }
  return "?";
}

ZeroStage zero_stage(Strategy s) {
  switch (s) {
    case Strategy::kDdp:
      return ZeroStage::kBaseline;
    case Strategy::kZero1:
      return ZeroStage::kOs;
    case Strategy::kZero2:
    case Strategy::kFsdpShardGradOp:
      return ZeroStage::kOsG;
    case Strategy::kZero3:
    case Strategy::kFsdpFullShard:
    case Strategy::kFsdpHybrid:
    case Strategy::kFsdp2:
      return ZeroStage::kOsGP;
  }
  return ZeroStage::kBaseline;
}

// ZeRO sec. 5.1: parameters and gradients in fp16 (2 + 2 bytes), K bytes of optimizer state;
// each stage divides the partitioned states by N_d.
double model_state_bytes_per_gpu(double psi, double k_optimizer_bytes, ZeroStage stage, int n_d) {
  if (n_d < 1) throw std::invalid_argument("model_state_bytes_per_gpu: n_d must be >= 1");
  const double n = n_d;
  switch (stage) {
    case ZeroStage::kBaseline:
      return (2.0 + 2.0 + k_optimizer_bytes) * psi;
    case ZeroStage::kOs:
      return 2.0 * psi + 2.0 * psi + k_optimizer_bytes * psi / n;
    case ZeroStage::kOsG:
      return 2.0 * psi + (2.0 + k_optimizer_bytes) * psi / n;
    case ZeroStage::kOsGP:
      return (2.0 + 2.0 + k_optimizer_bytes) * psi / n;
  }
  return 0;
}

// Table in memory.hpp. fp32 / autocast: the parameters and their .grad are fp32 (PyTorch
// autocast never changes parameter dtypes), Adam keeps exp_avg and exp_avg_sq (4 + 4), SGD with
// momentum one momentum_buffer (4). bf16/fp16 with fp32 master weights (Megatron / DeepSpeed,
// ZeRO sec. 3.1: "fp32 copy of the parameters, momentum and variance", K = 12): 16-bit
// parameters and gradients, optimizer = 4 master + the fp32 states.
StateBytesPerParam state_bytes_per_param(Optimizer o, Precision p) {
  const bool master = p == Precision::kBf16 || p == Precision::kFp16;
  StateBytesPerParam b;
  b.params = master ? 2.0 : 4.0;
  b.grads = master ? 2.0 : 4.0;
  double states = 0;
  switch (o) {
    case Optimizer::kSgd:
      states = 0;
      break;
    case Optimizer::kMomentum:
      states = 4;
      break;
    case Optimizer::kAdam:
    case Optimizer::kAdamW:
      states = 8;
      break;
  }
  b.optimizer = (master ? 4.0 : 0.0) + states;
  return b;
}

namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("estimate_memory: ") + what);
}

bool is_block(const model::Layer& l) { return l.kind == "transformer_block"; }

/// h from the [V, h] word embedding of the first "embedding" layer; 0 when there is none.
double derive_hidden(const model::Workload& w) {
  for (const model::Layer& l : w.layers) {
    if (l.kind != "embedding" || l.tensor_count < 1) continue;
    const model::ParamTensor& t = w.tensors[static_cast<std::size_t>(l.first_tensor)];
    if (t.shape.size() == 2) return static_cast<double>(t.shape[1]);
  }
  return 0;
}

/// Parameters of the largest Layer (tied tensors are not the layer's own storage).
double largest_layer_params(const model::Workload& w) {
  double best = 0;
  for (const model::Layer& l : w.layers) {
    double n = 0;
    for (int i = l.first_tensor; i < l.first_tensor + l.tensor_count; ++i) {
      const model::ParamTensor& t = w.tensors[static_cast<std::size_t>(i)];
      if (t.tied_to < 0) n += static_cast<double>(t.numel());
    }
    best = std::max(best, n);
  }
  return best;
}

int shard_group(const MemoryInputs& in);

// FSDP2's buffers (fsdp2.hpp says when each exists), in the policy's dtypes:
//  - forward: the all-gather outputs in flight (the current group's is freed only at the next
//    group's copy-out; implicit prefetching: 2, set_modules_to_forward_prefetch(k): k + 1) plus
//    the current group's unsharded parameters;
//  - backward: the current group's unsharded parameters and gradients, the prefetched groups'
//    (backward_prefetch d) parameters, and the previous group's reduce-scatter input in the
//    reduce dtype (kept until its reduce-scatter ends: comm_ctx.reduce_scatter_state);
//  - whatever outlives the forward: the root's unsharded parameters (the root never reshards
//    after forward); with reshard_after_forward false every unit's, with an integer g a 1/g
//    shard of every unit's;
//  - set_requires_gradient_sync(False) over several micro-batches: every unsharded gradient
//    accumulated in the reduce dtype; set_requires_all_reduce(False): the reduce-scattered
//    shards in the reduce dtype.
// The larger of the forward and backward transients is added to what outlives the forward.
double fsdp2_buffer_bytes(const MemoryInputs& in, std::vector<std::string>& notes) {
  const model::Workload& w = *in.workload;
  model::TrainingConfig t;
  t.precision = in.precision;
  t.optimizer = in.optimizer;
  t.grad_reduce_dtype = in.grad_reduce_dtype;
  const Fsdp2Dtypes dt = fsdp2_dtypes("<memory>", t, in.fsdp2);
  const double pb = model::dtype_bytes(dt.param);
  const double rb = model::dtype_bytes(dt.reduce);
  const double tp = in.tensor_parallel;
  // Unsharded parameters in param_dtype, except float8 weights all-gathered in fp8 (1 byte):
  // `*_g` the gathered bytes over pb, elements that cost pb bytes each.
  const bool fp8_gather = in.float8 && in.float8->fsdp_float8_all_gather;
  const std::vector<double> f8 = fp8_gather ? model::float8_weight_elements(w, *in.float8)
                                            : std::vector<double>(w.layers.size(), 0.0);
  double root = 0, unit = 0, units_total = 0, root_g = 0, unit_g = 0, units_total_g = 0;
  double unresharded_g = 0;  // groups that never reshard after forward (torchtitan's tail)
  const std::vector<Fsdp2Group> groups = fsdp2_groups(w, in.fsdp2.units);
  for (const Fsdp2Group& g : groups) {
    const double e = static_cast<double>(g.elements) / tp;
    double fp8 = 0;
    for (int l : g.layers) fp8 += f8[static_cast<std::size_t>(l)] / tp;
    const double eg = e - fp8 + fp8 / pb;
    if (g.root) {
      root = e;
      root_g = eg;
    } else {
      unit = std::max(unit, e);
      unit_g = std::max(unit_g, eg);
      units_total += e;
      (g.reshard ? units_total_g : unresharded_g) += eg;
    }
  }
  const double largest_g = std::max(unit_g, root_g);
  // No more gathers in flight than there are groups.
  const int groups_count = std::max(1, static_cast<int>(groups.size()));
  const int gathers = std::min(std::max(in.fsdp2.forward_prefetch, 1) + 1, groups_count);
  const int prefetched = std::min(in.fsdp2.backward_prefetch, groups_count - 1);
  const double fwd = (gathers + 1) * largest_g * pb;
  const double bwd = (1 + prefetched) * unit_g * pb + unit * pb + unit * rb;
  double kept = (root_g + unresharded_g) * pb;
  // The parameters a group keeps from forward to backward: 1/post_forward of them (false or 1:
  // all; the whole shard group: nothing beyond the shard).
  const Fsdp2Mesh mesh = fsdp2_mesh("<memory>", in.fsdp2, in.dp_size);
  const int s = mesh.shard;
  if (mesh.post_forward < s) kept += units_total_g * pb / mesh.post_forward;
  double accumulated = 0;
  if (in.grad_accumulation > 1 && !in.fsdp2.requires_gradient_sync) {
    accumulated = (units_total + root) * rb;
  } else if (in.grad_accumulation > 1 && !in.fsdp2.requires_all_reduce && s < in.dp_size) {
    accumulated = (units_total + root) * rb / s;
  }
  notes.push_back(fmt::format(
      "FSDP2: root kept unsharded {:.3g} GB, forward in flight {:.3g} GB, backward in flight "
      "{:.3g} GB, post-forward parameters {:.3g} GB, accumulated gradients {:.3g} GB",
      root_g * pb / 1e9, fwd / 1e9, bwd / 1e9, (kept - root_g * pb) / 1e9, accumulated / 1e9));
  return kept + std::max(fwd, bwd) + accumulated;
}

int shard_group(const MemoryInputs& in) {
  switch (in.strategy) {
    case Strategy::kDdp:
      return 1;
    case Strategy::kFsdpHybrid:
      return std::min(in.gpus_per_node, in.dp_size);
    case Strategy::kFsdp2:
      return fsdp2_mesh("<memory>", in.fsdp2, in.dp_size).shard;
    default:
      return in.dp_size;
  }
}

}  // namespace

double activation_bytes(const MemoryInputs& in) {
  require(in.workload != nullptr, "workload is null");
  require(in.micro_batch >= 1 && in.tensor_parallel >= 1, "micro_batch and tensor_parallel >= 1");
  const model::Workload& w = *in.workload;
  const double cbytes = model::dtype_bytes(model::compute_dtype(in.precision));
  // The builders count activations in w.activation_dtype (16-bit for transformers following
  // Korthikanti, fp32 for the MLP and CNN builders); the saved tensors are in the compute dtype.
  // The ratio is applied to every byte, dropout masks and fp32 logits included: a small
  // over-count in fp32 training (masks are 1 byte, logits already 4) and under-count of logits
  // in 16-bit training of MLP/CNN workloads, which have none.
  const double scale = cbytes / model::dtype_bytes(w.activation_dtype);
  const double b = static_cast<double>(in.micro_batch);
  const double t = in.tensor_parallel;
  const double s = static_cast<double>(w.seq_len);
  const double h = in.hidden_size > 0 ? in.hidden_size : derive_hidden(w);

  const model::ActivationCheckpointing& ac = in.activation_checkpointing;
  const bool checkpointing = ac.enabled() && h > 0;
  // Blocks not checkpointed keep everything (`kept_whole`); a checkpointed one keeps its input
  // (and, op-selective, the outputs torchtitan's policy saves) and, during its backward, its
  // recomputed activations beside them: the peak adds the largest such difference.
  double other = 0, kept_whole = 0, kept_checkpoints = 0, recompute_peak = 0;
  int block = 0;
  for (const model::Layer& l : w.layers) {
    double a = l.activation_bytes_per_sample * scale * b;
    if (t > 1 && h > 0) {
      // Korthikanti Table 2 (tensor parallel, no sequence parallel): a block keeps
      // sbh(10 + 24/t + 5as/(ht)): 10sbh (norm inputs, dropout masks, the attention input) is
      // replicated, the rest is split t ways. The lm_head's logits are vocabulary-parallel.
      if (is_block(l)) {
        const double replicated = std::min(a, 10.0 * s * h * b * scale);
        a = replicated + (a - replicated) / t;
      } else if (l.name == "lm_head") {
        const double input = std::min(a, 2.0 * s * h * b * scale);
        a = input + (a - input) / t;
      }
    }
    if (!is_block(l)) {
      other += a;
      continue;
    }
    if (!checkpointing || !model::checkpoints_block(ac, block++)) {
      kept_whole += a;
      continue;
    }
    // The checkpoint's input, s*b*h in the compute dtype (Korthikanti sec. 5: 2sbhL in 16-bit);
    // replicated across tensor-parallel ranks.
    double kept = cbytes * s * h * b;
    if (ac.mode == model::CheckpointMode::kSelectiveOp) {
      const model::OpCheckpointPolicy p =
          in.op_policies ? (*in.op_policies)[static_cast<std::size_t>(&l - w.layers.data())]
                         : model::op_policy(w, l);
      kept += (p.saved_elements_per_sample * cbytes + p.saved_fp32_bytes_per_sample) * b / t;
    }
    kept = std::min(kept, a);
    kept_checkpoints += kept;
    recompute_peak = std::max(recompute_peak, a - kept);
  }
  return other + kept_whole + kept_checkpoints + recompute_peak;
}

MemoryEstimate estimate_memory(const MemoryInputs& in) {
  require(in.workload != nullptr, "workload is null");
  require(in.dp_size >= 1 && in.gpus_per_node >= 1 && in.tensor_parallel >= 1,
          "dp_size, gpus_per_node and tensor_parallel must be >= 1");
  require(in.micro_batch >= 1, "micro_batch must be >= 1");
  require(in.fsdp_units_in_flight >= 1, "fsdp_units_in_flight must be >= 1");
  require(in.fragmentation_fraction >= 0, "fragmentation_fraction must be >= 0");
  const model::Workload& w = *in.workload;
  MemoryEstimate m;

  const double psi = static_cast<double>(w.param_count()) / in.tensor_parallel;
  const ZeroStage stage = zero_stage(in.strategy);
  const int n = shard_group(in);
  const StateBytesPerParam bpp = state_bytes_per_param(in.optimizer, in.precision);
  const bool master = in.precision == Precision::kBf16 || in.precision == Precision::kFp16;
  const bool autocast = in.precision == Precision::kAmpBf16 || in.precision == Precision::kAmpFp16;
  const double nd = n;

  // Model states (ZeRO sec. 5.1 generalised to the per-(optimizer, precision) table).
  m.params_bytes = bpp.params * psi / (stage == ZeroStage::kOsGP ? nd : 1.0);
  m.grads_bytes = bpp.grads * psi / (stage >= ZeroStage::kOsG ? nd : 1.0);
  m.optimizer_bytes = bpp.optimizer * psi / (stage >= ZeroStage::kOs ? nd : 1.0);
  m.notes.push_back(fmt::format(
      "model states: {} over {} rank(s), {}+{}+{} bytes/param ({} {}), psi = {:.4g} per GPU",
      zero_stage_name(stage), n, bpp.params, bpp.grads, bpp.optimizer,
      model::precision_name(in.precision), model::optimizer_name(in.optimizer), psi));

  if (in.strategy == Strategy::kFsdp2 && in.fsdp2.cpu_offload) {
    // CPUOffloadPolicy: the sharded states live in host memory (pinned when pin_memory).
    m.notes.push_back(fmt::format(
        "FSDP2 CPU offload: sharded parameters, gradients and optimizer states in host memory, "
        "{:.3g} GB per rank",
        m.model_state_bytes() / 1e9));
    m.params_bytes = m.grads_bytes = m.optimizer_bytes = 0;
  }

  if (in.zero_offload && (in.strategy == Strategy::kZero1 || in.strategy == Strategy::kZero2 ||
                          in.strategy == Strategy::kZero3)) {
    // ZeRO-Offload: DeepSpeedCPUAdam's states (and the fp32 master weights) live in pinned host
    // memory; offload_param moves the 16-bit partitions there too.
    m.notes.push_back(
        fmt::format("ZeRO-Offload: optimizer states{} in host memory, {:.3g} GB per rank",
                    in.zero_offload->param ? " and parameter partitions" : "",
                    (m.optimizer_bytes + (in.zero_offload->param ? m.params_bytes : 0.0)) / 1e9));
    m.optimizer_bytes = 0;
    if (in.zero_offload->param) m.params_bytes = 0;
  }

  // Activations.
  m.activation_bytes = activation_bytes(in);
  const double h = in.hidden_size > 0 ? in.hidden_size : derive_hidden(w);
  const bool has_blocks = std::any_of(w.layers.begin(), w.layers.end(), is_block);
  if (in.activation_checkpointing.enabled() && !(has_blocks && h > 0)) {
    m.notes.push_back(
        "activation checkpointing requested but the workload has no transformer blocks with a "
        "known hidden size: activations counted without it");
  }

  // Buffers.
  const double unit =
      (in.largest_unit_params > 0 ? in.largest_unit_params : largest_layer_params(w)) /
      in.tensor_parallel;
  double buffers = w.buffer_bytes();  // registered module buffers (BatchNorm stats), fp32
  switch (in.strategy) {
    case Strategy::kDdp:
      // DDP's Reducer copies every gradient into flat bucket tensors (as large as all the
      // gradients) unless gradient_as_bucket_view makes .grad a view of the bucket (PyTorch DDP
      // docs: "the saved memory size will be equal to the total gradients size").
      if (in.dp_size > 1 && !in.gradient_as_bucket_view) {
        buffers += bpp.grads * psi;
        m.notes.push_back("DDP bucket copy of all gradients (gradient_as_bucket_view=false)");
      }
      break;
    case Strategy::kZero1:
    case Strategy::kZero2:
      // DeepSpeed stage 1/2: one contiguous reduce bucket (reduce_bucket_size elements of
      // gradients) and the all-gather bucket for the updated partitions (allgather_bucket_size
      // elements of parameters), each no larger than the model.
      buffers += std::min(in.reduce_bucket_elements, psi) * bpp.grads +
                 std::min(in.allgather_bucket_elements, psi) * bpp.params;
      m.notes.push_back("DeepSpeed reduce + all-gather buckets");
      break;
    case Strategy::kZero3:
      // Stage 3: the gathered modules in flight (current + prefetched) and the reduce bucket.
      buffers += in.fsdp_units_in_flight * unit * bpp.params +
                 std::min(in.reduce_bucket_elements, psi) * bpp.grads;
      m.notes.push_back("ZeRO-3 gathered modules in flight + reduce bucket");
      break;
    case Strategy::kFsdpFullShard:
    case Strategy::kFsdpHybrid:
      // limit_all_gathers: at most fsdp_units_in_flight unsharded units; in backward one unit's
      // full-size gradient exists until its reduce-scatter.
      buffers += in.fsdp_units_in_flight * unit * bpp.params + unit * bpp.grads;
      m.notes.push_back("FSDP unsharded units in flight + one unsharded unit gradient");
      break;
    case Strategy::kFsdp2:
      buffers += fsdp2_buffer_bytes(in, m.notes);
      break;
    case Strategy::kFsdpShardGradOp:
      // Parameters are not resharded after forward: at the start of backward every unit is
      // unsharded, so params_bytes is the full bpp.params * psi (the Pos+g count). Without a
      // separate fp32 master (fp32/amp), FSDP keeps the local shard beside the unsharded flat
      // parameter: bpp.params * psi / N more. With bf16/fp16 the shard is the fp32 master,
      // already in optimizer_bytes.
      if (!master) buffers += bpp.params * psi / nd;
      buffers += unit * bpp.grads;
      m.notes.push_back(
          "FSDP SHARD_GRAD_OP: full parameters held from forward to backward (+ local shard)");
      break;
  }
  if (autocast && !(in.strategy == Strategy::kFsdp2 && in.fsdp2.param_dtype)) {
    // Autocast casts each fp32 weight to 16 bits for the GEMMs; the cast is cached for the
    // autocast region (aten/src/ATen/autocast_mode.cpp cached_casts) and saved for backward by
    // the matmul, so a 16-bit copy of the (unsharded) weights lives from forward to backward.
    const double cbytes = model::dtype_bytes(model::compute_dtype(in.precision));
    buffers += cbytes * psi;
    m.notes.push_back("autocast 16-bit weight copies held until backward");
  }
  if (in.comm_hook_bytes > 0) {
    buffers += in.comm_hook_bytes;
    m.notes.push_back(fmt::format("communication hook state {:.0f} bytes", in.comm_hook_bytes));
  }
  m.buffer_bytes = buffers;

  if (in.include_runtime) {
    m.runtime_bytes = in.cuda_context_bytes;
    if (in.dp_size * in.tensor_parallel > 1) {
      // ecosystem.md 5.4: per channel and peer, one buffer per protocol:
      // Simple 4 MiB + LL 524,288 B + LL128 4,915,200 B.
      const double per_conn = 4194304.0 + 524288.0 + 4915200.0;
      m.runtime_bytes += static_cast<double>(in.nccl_channels) * in.nccl_peers * per_conn;
    }
    m.fragmentation_bytes =
        in.fragmentation_fraction * (m.model_state_bytes() + m.activation_bytes + m.buffer_bytes);
    m.notes.push_back(
        fmt::format("runtime: CUDA context {:.0f} MiB (assumption) + NCCL {} channels x {} peers; "
                    "fragmentation {:.0f}% of allocated (assumption)",
                    in.cuda_context_bytes / 1048576.0, in.nccl_channels, in.nccl_peers,
                    100 * in.fragmentation_fraction));
  }
  return m;
}

bool fits(const MemoryEstimate& m, double capacity_bytes, double margin_fraction) {
  return m.total() <= capacity_bytes * (1.0 - margin_fraction);
}

}  // namespace ddpsim::sim
