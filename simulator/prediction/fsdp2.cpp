#include "simulator/prediction/fsdp2.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "model/error.hpp"

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
  // torchtitan (torchtitan/models/llama3/infra/parallelize.py apply_fsdp at 238fa9953):
  // fully_shard(tok_embeddings), every block, fully_shard([norm, output]) with
  // reshard_after_forward only under the "always" policy, then the root (nothing left).
  int last_block = -1;
  for (int l = 0; l < L; ++l) {
    if (w.layers[static_cast<std::size_t>(l)].kind == "transformer_block") last_block = l;
  }
  Fsdp2Group tail;
  tail.name = "norm+output";
  tail.reshard = false;
  for (int l = 0; l < L; ++l) {
    const auto i = static_cast<std::size_t>(l);
    if (elements[i] == 0) continue;
    const std::string& kind = w.layers[i].kind;
    const bool titan = units == model::Fsdp2Units::kTorchtitan;
    const bool unit =
        units == model::Fsdp2Units::kLayers ||
        ((units == model::Fsdp2Units::kBlocks || titan) && kind == "transformer_block") ||
        (titan && kind == "embedding");
    const bool in_tail = titan && last_block >= 0 && l > last_block;
    Fsdp2Group& g = in_tail ? tail : unit ? own.emplace_back() : root;
    g.layers.push_back(l);
    g.elements += elements[i];
    g.tensors += tensors[i];
    if (unit && !in_tail) g.name = w.layers[i].name;
  }
  if (tail.elements > 0) own.push_back(std::move(tail));
  std::vector<Fsdp2Group> out;
  if (root.elements > 0) out.push_back(std::move(root));
  for (Fsdp2Group& g : own) out.push_back(std::move(g));
  return out;
}

Fsdp2Dtypes fsdp2_dtypes(const std::string& file, const model::TrainingConfig& t,
                         const model::Fsdp2Config& cfg) {
  Fsdp2Dtypes d;
  const DType compute = model::compute_dtype(t.precision);
  // The parameters' own dtype, which autograd gives their gradients (grad_dtype): fp32 and amp
  // keep fp32 parameters, bf16 / fp16 16-bit ones (memory.hpp's table says the same).
  d.orig = model::grad_dtype(t.precision);
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

}  // namespace ddpsim::sim
