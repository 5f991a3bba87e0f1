// PyTorch DDP/FSDP knob import (torch_import.hpp documents the mapping). What each knob
// means and its code default come from the reference notes (ecosystem.md §1-§2, read from the
// PyTorch sources); the why of each mapping is next to it.
#include "model/imports/torch_import.hpp"

#include <string>

#include "model/error.hpp"
#include "model/imports/deepspeed_import.hpp"
#include "model/imports/detail/import_reader.hpp"
#include "model/json_file.hpp"
#include "model/scenario/scenario.hpp"
#include "model/units.hpp"

namespace ddpsim::model {

using nlohmann::json;
using namespace detail;

// ---- PyTorch knobs ---------------------------------------------------------------------------

namespace {

// torch dtype spellings -> scenario dtype names; nullopt for null (None).
std::optional<std::string> torch_dtype(Reader& r, const json& v, const std::string& pointer) {
  if (v.is_null()) return std::nullopt;
  const std::string s = r.string(v, pointer);
  static const std::vector<std::pair<std::vector<std::string>, std::string>> table = {
      {{"torch.bfloat16", "bfloat16", "bf16"}, "bf16"},
      {{"torch.float16", "float16", "fp16", "half", "torch.half"}, "fp16"},
      {{"torch.float32", "float32", "fp32", "float", "torch.float"}, "fp32"}};
  for (const auto& [names, out] : table) {
    if (std::find(names.begin(), names.end(), s) != names.end()) return out;
  }
  r.fail(pointer, "torch.float32, torch.bfloat16, torch.float16 or null", v);
}

void import_ddp(Reader& r, const json& d, json& training, json& par) {
  (void)training;
  const std::string dp = "/ddp";
  par["strategy"] = "ddp";
  if (auto it = d.find("bucket_cap_mb"); it != d.end() && !it->is_null()) {
    par["bucket_cap_mb"] = r.positive_number(*it, dp + "/bucket_cap_mb");
  }
  for (const char* key :
       {"gradient_as_bucket_view", "static_graph", "find_unused_parameters", "broadcast_buffers"}) {
    if (auto it = d.find(key); it != d.end()) par[key] = r.boolean(*it, dp + "/" + key);
  }
  if (auto it = d.find("comm_hook"); it != d.end() && !it->is_null()) {
    const std::string hook = r.string(*it, dp + "/comm_hook");
    if (hook == "allreduce_hook") {
      par["comm_hook"] = "none";
    } else if (hook == "fp16_compress_hook") {
      par["comm_hook"] = "fp16";
    } else if (hook == "bf16_compress_hook") {
      par["comm_hook"] = "bf16";
    } else if (hook == "powerSGD_hook") {
      // PowerSGDState(matrix_approximation_rank=1, ...): the other state knobs keep PyTorch's
      // defaults in ddpsim (simulator/analytic/analytic.hpp kPowerSgd*).
      std::int64_t rank = 1;
      if (auto s = d.find("powerSGD_state"); s != d.end() && !s->is_null()) {
        const json& st = r.object_at(d, "powerSGD_state", dp + "/powerSGD_state");
        if (auto m = st.find("matrix_approximation_rank"); m != st.end()) {
          rank = r.integer(*m, dp + "/powerSGD_state/matrix_approximation_rank", 1);
          if (rank > 9999) {
            r.fail(dp + "/powerSGD_state/matrix_approximation_rank", "an integer 1..9999", *m);
          }
        }
        r.sweep_rest(st, dp + "/powerSGD_state", {"matrix_approximation_rank"}, {},
                     "ddpsim uses PyTorch's default for this PowerSGDState argument");
      }
      par["comm_hook"] = "powersgd:" + std::to_string(rank);
    } else {
      r.fail(dp + "/comm_hook",
             "allreduce_hook, fp16_compress_hook, bf16_compress_hook or powerSGD_hook", *it);
    }
  }
  r.sweep_rest(d, dp,
               {"bucket_cap_mb", "gradient_as_bucket_view", "static_graph",
                "find_unused_parameters", "broadcast_buffers", "comm_hook", "powerSGD_state"},
               {"device_ids", "output_device", "dim", "process_group", "check_reduction",
                "init_sync", "delay_all_reduce_named_params", "param_to_hook_all_reduce"},
               kNotModelled);
}

void import_fsdp(Reader& r, const json& f, json& training, json& par) {
  const std::string fp = "/fsdp";
  std::string strategy = "FULL_SHARD";  // sharding_strategy=None -> FULL_SHARD (api.py)
  if (auto it = f.find("sharding_strategy"); it != f.end() && !it->is_null()) {
    strategy = r.string(*it, fp + "/sharding_strategy");
    // "ShardingStrategy.FULL_SHARD" as printed by Python is accepted too.
    const std::string prefix = "ShardingStrategy.";
    if (strategy.rfind(prefix, 0) == 0) strategy = strategy.substr(prefix.size());
  }
  if (strategy == "FULL_SHARD") {
    par["strategy"] = "fsdp_full_shard";
  } else if (strategy == "SHARD_GRAD_OP") {
    par["strategy"] = "fsdp_shard_grad_op";
  } else if (strategy == "HYBRID_SHARD") {
    par["strategy"] = "fsdp_hybrid";
  } else if (strategy == "NO_SHARD") {
    // NO_SHARD: all-reduce of the gradients after the backward, like DDP (api.py docstring).
    par["strategy"] = "ddp";
    r.warn(fp + "/sharding_strategy",
           "NO_SHARD is modelled as DDP (replicated parameters, gradient all-reduce)");
  } else {
    r.fail_text(fp + "/sharding_strategy",
                "FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD or NO_SHARD (_HYBRID_SHARD_ZERO2 is not "
                "modelled)",
                "\"" + strategy + "\"");
  }
  if (auto it = f.find("backward_prefetch"); it != f.end()) {
    std::string v = it->is_null() ? "None" : r.string(*it, fp + "/backward_prefetch");
    const std::string prefix = "BackwardPrefetch.";
    if (v.rfind(prefix, 0) == 0) v = v.substr(prefix.size());
    if (v == "BACKWARD_PRE") {
      par["fsdp_prefetch"] = "backward_pre";
    } else if (v == "BACKWARD_POST") {
      par["fsdp_prefetch"] = "backward_post";
    } else if (v == "None") {
      par["fsdp_prefetch"] = "none";
    } else {
      r.fail(fp + "/backward_prefetch", "BACKWARD_PRE, BACKWARD_POST or null", *it);
    }
  }
  if (auto it = f.find("forward_prefetch"); it != f.end() && !it->is_null()) {
    if (r.boolean(*it, fp + "/forward_prefetch")) {
      r.warn(fp + "/forward_prefetch",
             "true is not modelled (the FSDP docstring: only useful for CPU-bound workloads)");
    }
  }
  if (auto it = f.find("limit_all_gathers"); it != f.end() && !it->is_null()) {
    if (!r.boolean(*it, fp + "/limit_all_gathers")) {
      r.warn(fp + "/limit_all_gathers",
             "false is not modelled: ddpsim counts two FSDP units in flight, the rate limiter's "
             "bound (the default, true)");
    }
  }
  if (auto it = f.find("cpu_offload"); it != f.end() && !it->is_null()) {
    bool offload = false;
    std::string p = fp + "/cpu_offload";
    if (it->is_boolean()) {
      offload = it->get<bool>();
    } else {
      const json& c = r.object_at(f, "cpu_offload", p);
      if (auto o = c.find("offload_params"); o != c.end()) {
        p += "/offload_params";
        offload = r.boolean(*o, p);
      }
    }
    if (offload) r.fail_text(p, "false: FSDP CPU offload is not modelled by ddpsim", "true");
  }
  if (auto it = f.find("mixed_precision"); it != f.end() && !it->is_null()) {
    const std::string mp = fp + "/mixed_precision";
    const json& m = r.object_at(f, "mixed_precision", mp);
    std::optional<std::string> param, reduce;
    if (auto p = m.find("param_dtype"); p != m.end())
      param = torch_dtype(r, *p, mp + "/param_dtype");
    if (auto p = m.find("reduce_dtype"); p != m.end()) {
      reduce = torch_dtype(r, *p, mp + "/reduce_dtype");
    }
    // FSDP keeps the sharded parameters (and so the optimizer's master copy) in fp32 and
    // computes in param_dtype: the bytes of autocast, not of DeepSpeed's 16-bit parameters.
    if (!param || *param == "fp32") {
      training["precision"] = "fp32";
    } else {
      training["precision"] = *param == "bf16" ? "amp_bf16" : "amp_fp16";
    }
    // Gradients are reduced in reduce_dtype, falling back to param_dtype (MixedPrecision doc).
    if (reduce || param) training["grad_reduce_dtype"] = reduce ? *reduce : *param;
    if (auto k = m.find("keep_low_precision_grads"); k != m.end() && !k->is_null()) {
      if (r.boolean(*k, mp + "/keep_low_precision_grads")) {
        r.warn(mp + "/keep_low_precision_grads",
               "true is not modelled: gradients are counted in fp32");
      }
    }
    r.sweep_rest(m, mp, {"param_dtype", "reduce_dtype", "keep_low_precision_grads"},
                 {"buffer_dtype", "cast_forward_inputs", "cast_root_forward_inputs",
                  "_module_classes_to_ignore"},
                 kNotModelled);
  }
  if (auto it = f.find("auto_wrap_policy"); it != f.end() && !it->is_null()) {
    r.warn(fp + "/auto_wrap_policy",
           "ddpsim wraps each transformer block (or largest layer) as one FSDP unit, as "
           "transformer_auto_wrap_policy does; other policies are not modelled");
  }
  r.sweep_rest(f, fp,
               {"sharding_strategy", "backward_prefetch", "forward_prefetch", "limit_all_gathers",
                "cpu_offload", "mixed_precision", "auto_wrap_policy"},
               {"process_group", "device_id", "sync_module_states", "param_init_fn",
                "ignored_modules", "ignored_states", "use_orig_params"},
               kNotModelled);
}

}  // namespace

ImportResult import_torch_knobs(const json& knobs, const std::string& file) {
  if (!knobs.is_object())
    throw InputError(file, "", "an object {\"ddp\": {...}} or {\"fsdp\": {...}}", shown(knobs));
  Reader r(file);
  const bool ddp = knobs.contains("ddp"), fsdp = knobs.contains("fsdp");
  if (ddp == fsdp) {
    throw InputError(file, ddp ? "/fsdp" : "",
                     "exactly one of \"ddp\" (DistributedDataParallel arguments) or \"fsdp\" "
                     "(FullyShardedDataParallel arguments)",
                     ddp ? "both" : "neither");
  }
  json training = json::object(), par = json::object();
  if (ddp) {
    import_ddp(r, r.object_at(knobs, "ddp", "/ddp"), training, par);
  } else {
    import_fsdp(r, r.object_at(knobs, "fsdp", "/fsdp"), training, par);
  }
  for (const auto& [k, v] : knobs.items()) {
    if (k != "ddp" && k != "fsdp") {
      throw InputError(file, "/" + escape_pointer_token(k),
                       "only \"ddp\" or \"fsdp\" at the top level", "\"" + k + "\"");
    }
  }
  ImportResult out = std::move(r.result);
  out.patch = json::object();
  if (!training.empty()) out.patch["training"] = training;
  out.patch["parallelism"] = par;
  return out;
}

ImportResult import_torch_knobs_file(const std::string& path) {
  return import_torch_knobs(read_json_file(path), path);
}

}  // namespace ddpsim::model
