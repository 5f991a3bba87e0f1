// torchtitan job files (TOML) -> scenario keys (torchtitan_import.hpp says what maps to what).
#include "model/imports/torchtitan_import.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <map>
#include <set>
#include <sstream>

#include "model/error.hpp"
#include "model/imports/detail/import_reader.hpp"
#include "model/trace_file.hpp"

namespace ddpsim::model {

using nlohmann::json;

namespace {

json to_json(const toml::node& n) {
  if (const auto* t = n.as_table()) {
    json o = json::object();
    for (const auto& [k, v] : *t) o[std::string(k.str())] = to_json(v);
    return o;
  }
  if (const auto* a = n.as_array()) {
    json arr = json::array();
    for (const auto& v : *a) arr.push_back(to_json(v));
    return arr;
  }
  if (const auto* s = n.as_string()) return s->get();
  if (const auto* i = n.as_integer()) return i->get();
  if (const auto* f = n.as_floating_point()) return f->get();
  if (const auto* b = n.as_boolean()) return b->get();
  std::ostringstream text;  // dates and times
  n.visit([&](const auto& v) { text << v; });
  return text.str();
}

// One TOML value: `section.key`, or nullptr.
const json* at(const json& doc, const std::string& section, const std::string& key) {
  const auto s = doc.find(section);
  if (s == doc.end() || !s->is_object()) return nullptr;
  const auto k = s->find(key);
  return k == s->end() ? nullptr : &*k;
}

// The sections and keys that cannot change step time or memory.
const std::set<std::string> kNoEffectSections = {
    "job",  "profiling",       "metrics",           "checkpoint",   "validation",
    "comm", "fault_tolerance", "memory_estimation", "lr_scheduler", "ft"};

// torchtitan's module names (torchtitan/models/llama3/model/model.py: output, attention.wq,
// feed_forward.w1, ...) as the Hugging Face names ddpsim's workloads carry.
std::string hf_module_name(std::string fqn) {
  static const std::pair<const char*, const char*> kNames[] = {{"output", "lm_head"},
                                                               {"attention.wq", "self_attn.q_proj"},
                                                               {"attention.wk", "self_attn.k_proj"},
                                                               {"attention.wv", "self_attn.v_proj"},
                                                               {"attention.wo", "self_attn.o_proj"},
                                                               {"feed_forward.w1", "mlp.gate_proj"},
                                                               {"feed_forward.w2", "mlp.down_proj"},
                                                               {"feed_forward.w3", "mlp.up_proj"},
                                                               {"attention", "self_attn"},
                                                               {"feed_forward", "mlp"},
                                                               {"tok_embeddings", "embed_tokens"}};
  for (const auto& [from, to] : kNames) {
    const std::string f = from;
    for (std::size_t p = fqn.find(f); p != std::string::npos; p = fqn.find(f, p + 1)) {
      const bool start = p == 0 || fqn[p - 1] == '.';
      const bool end = p + f.size() == fqn.size() || fqn[p + f.size()] == '.';
      if (start && end) {
        fqn.replace(p, f.size(), to);
        p += std::string(to).size() - 1;
      }
    }
  }
  return fqn;
}

class TorchtitanImporter {
 public:
  TorchtitanImporter(const json& job, const std::string& file, std::optional<std::int64_t> world)
      : doc_(job), r_(file), world_(world) {}

  ImportResult run() {
    if (!doc_.is_object()) r_.fail_text("", "a TOML job file with tables", "no tables");
    read_model();
    read_parallelism();
    read_batch();
    read_precision();
    read_checkpointing();
    read_compile();
    read_float8();
    read_optimizer();
    sweep();
    return std::move(r_.result);
  }

 private:
  json& patch() { return r_.result.patch; }
  void handled(const std::string& section, const std::string& key) {
    handled_.insert(section + "." + key);
  }
  const json* get(const std::string& section, const std::string& key) {
    const json* v = at(doc_, section, key);
    if (v != nullptr) handled(section, key);
    return v;
  }
  // The first of (section, key) pairs present: the current name first, then older ones.
  const json* get_any(std::initializer_list<std::pair<const char*, const char*>> names,
                      std::string* where) {
    for (const auto& [s, k] : names) {
      if (const json* v = get(s, k)) {
        *where = std::string(s) + "." + k;
        return v;
      }
    }
    return nullptr;
  }
  // Counts in a job file: at most 2^24 (batches, degrees and sequence lengths past any cluster;
  // products of two stay far inside int64).
  static constexpr std::int64_t kMaxCount = std::int64_t{1} << 24;
  std::int64_t integer(const json& v, const std::string& path, std::int64_t min,
                       std::int64_t max = kMaxCount) {
    if (!v.is_number_integer() || v.is_number_unsigned() || v.get<std::int64_t>() < min ||
        v.get<std::int64_t>() > max) {
      r_.fail(path, "an integer from " + std::to_string(min) + " to " + std::to_string(max), v);
    }
    return v.get<std::int64_t>();
  }
  std::string string(const json& v, const std::string& path) { return r_.string(v, path); }

  void read_model() {
    const json* name = get("model", "name");
    const json* flavor = get("model", "flavor");
    const std::string n = name ? string(*name, "model.name") : "llama3";
    const std::string f = flavor ? string(*flavor, "model.flavor") : "debugmodel";
    static const std::map<std::pair<std::string, std::string>, std::string> kPresets = {
        {{"llama3", "8B"}, "llama-3.1-8b"},
        {{"llama3", "70B"}, "llama-3.1-70b"},
        {{"llama3", "405B"}, "llama-3.1-405b"},
        {{"llama3", "debugmodel"}, "torchtitan-llama3-debugmodel"},
        {{"llama2", "7B"}, "llama-2-7b"},
        {{"llama2", "13B"}, "llama-2-13b"},
        {{"llama2", "70B"}, "llama-2-70b"}};
    // torchtitan called Llama 3 "llama" until it added Llama 2 beside it (mid-2024 files).
    const std::string family = n == "llama" ? "llama3" : n;
    const auto it = kPresets.find({family, f});
    if (it == kPresets.end()) {
      std::string known;
      for (const auto& [k, v] : kPresets)
        known += (known.empty() ? "" : ", ") + k.first + " " + k.second;
      r_.fail_text(flavor ? "model.flavor" : "model.name",
                   "a torchtitan model ddpsim's zoo holds (" + known + ")",
                   "\"" + n + "\" flavor \"" + f + "\"");
    }
    patch()["model"]["preset"] = it->second;
    for (const char* k : {"tokenizer_path", "hf_assets_path", "norm_type"}) {
      if (get("model", k)) r_.ignore(std::string("model.") + k);
    }
  }

  void read_parallelism() {
    std::string where;
    if (world_ && (*world_ < 1 || *world_ > kMaxCount)) {
      r_.fail_text("cluster.gpus", "a world size from 1 to 2^24", std::to_string(*world_));
    }
    for (const char* k : {"tensor_parallel_degree", "pipeline_parallel_degree",
                          "context_parallel_degree", "expert_parallel_degree"}) {
      for (const char* s : {"parallelism", "training", "experimental"}) {
        if (const json* v = get(s, k)) {
          const std::string path = std::string(s) + "." + k;
          if (integer(*v, path, 1) > 1) {
            r_.fail_text(path,
                         "1: ddpsim models data parallelism (FSDP2, HSDP, DDP) only, not tensor, "
                         "pipeline, context or expert parallelism",
                         v->dump());
          }
        }
      }
    }
    replicate_ = 1;
    if (const json* v = get_any({{"parallelism", "data_parallel_replicate_degree"},
                                 {"training", "data_parallel_replicate_degree"}},
                                &where)) {
      replicate_ = integer(*v, where, 1);
    }
    std::int64_t shard = -1;
    std::string shard_path = "parallelism.data_parallel_shard_degree";
    if (const json* v = get_any({{"parallelism", "data_parallel_shard_degree"},
                                 {"training", "data_parallel_shard_degree"},
                                 {"training", "data_parallel_degree"}},
                                &where)) {
      shard_path = where;
      shard = v->is_number_integer() && v->get<std::int64_t>() == -1 ? -1 : integer(*v, where, 1);
    }
    // Mid-2024: data_parallel_type "ddp" replicated instead of sharding.
    bool ddp = false;
    if (const json* t = get("training", "data_parallel_type")) {
      ddp = string(*t, "training.data_parallel_type") == "ddp";
    }
    if (shard == -1) {
      if (!world_) {
        r_.fail_text(shard_path,
                     "a degree, or the job's world size (--gpus N, or --scenario BASE with "
                     "cluster.gpus): -1 takes every rank the other degrees leave",
                     "-1");
      }
      if (*world_ % replicate_ != 0) {
        r_.fail_text(shard_path,
                     fmt::format("a world size ({}) divisible by data_parallel_replicate_degree "
                                 "({})",
                                 *world_, replicate_),
                     "-1");
      }
      shard = *world_ / replicate_;
    }
    dp_ = replicate_ * shard;
    if (dp_ > kMaxCount) {
      r_.fail_text(shard_path, "a data-parallel degree of at most 2^24",
                   fmt::format("replicate {} x shard {}", replicate_, shard));
    }
    if (world_ && *world_ != dp_) {
      r_.fail_text(shard_path,
                   fmt::format("degrees whose product is the world size {} (ddpsim models "
                               "data parallelism only)",
                               *world_),
                   fmt::format("replicate {} x shard {} = {}", replicate_, shard, dp_));
    }
    patch()["cluster"]["gpus"] = dp_;
    if (ddp) {
      patch()["parallelism"]["strategy"] = "ddp";
      return;
    }
    if (shard == 1 && replicate_ > 1) {
      // torchtitan's replicate(): DDP with bucket_cap_mb 100 (parallelize.py apply_ddp).
      patch()["parallelism"]["strategy"] = "ddp";
      patch()["parallelism"]["bucket_cap_mb"] = 100;
      return;
    }
    fsdp2_ = true;
    patch()["parallelism"]["strategy"] = "fsdp2";
    json& f = patch()["parallelism"]["fsdp2"];
    f["mesh"] = {{"shard", shard}, {"replicate", replicate_}};
    if (const json* v = get("parallelism", "fsdp_reshard_after_forward")) {
      const std::string policy = string(*v, "parallelism.fsdp_reshard_after_forward");
      if (policy == "never") {
        f["reshard_after_forward"] = false;
      } else if (policy != "default" && policy != "always") {
        r_.fail("parallelism.fsdp_reshard_after_forward", "\"default\", \"always\" or \"never\"",
                *v);
      }
    }
    // Files with a [parallelism] table (torchtitan from 2025) come from the apply_fsdp that
    // wraps tok_embeddings, every block and [norm, output] (not resharded after forward);
    // mid-2024 files from the one that wrapped the blocks, the rest in the root's group.
    if (doc_.contains("parallelism")) {
      f["units"] = "torchtitan";
    } else {
      r_.warn("training.data_parallel_degree",
              "a mid-2024 job: torchtitan then kept its last block unsharded after forward, "
              "which parallelism.fsdp2.units \"blocks\" does not model (it reshards every "
              "block; the embeddings, final norm and output stay in the root's group)");
    }
  }

  void read_batch() {
    std::string where;
    std::int64_t local = 8;  // torchtitan's default (job_config.py local_batch_size)
    if (const json* v =
            get_any({{"training", "local_batch_size"}, {"training", "batch_size"}}, &where)) {
      local = integer(*v, where, 1);
    }
    patch()["training"]["per_gpu_batch"] = local;
    std::int64_t accumulation = 1;
    if (const json* g = get("training", "global_batch_size")) {
      const std::int64_t global =
          g->is_number_integer() && g->get<std::int64_t>() == -1
              ? local * dp_
              : integer(*g, "training.global_batch_size", 1, std::int64_t{1} << 50);
      // torchtitan/train.py: global_batch_size % (local_batch_size x dp degree) == 0.
      if (global % (local * dp_) != 0) {
        r_.fail_text("training.global_batch_size",
                     fmt::format("a multiple of local_batch_size x data-parallel degree ({} x {})",
                                 local, dp_),
                     std::to_string(global));
      }
      accumulation = global / (local * dp_);
    }
    patch()["training"]["grad_accumulation"] = accumulation;
    global_batch_ = local * dp_ * accumulation;
    if (const json* s = get("training", "seq_len")) {
      patch()["model"]["seq_len"] = integer(*s, "training.seq_len", 1);
    } else {
      patch()["model"]["seq_len"] = 2048;  // job_config.py's default
      r_.warn("training.seq_len", "absent: torchtitan's default 2048 tokens");
    }
  }

  void read_precision() {
    std::string param = "bfloat16", reduce = "float32";
    if (const json* v = get("training", "mixed_precision_param")) {
      param = string(*v, "training.mixed_precision_param");
    }
    if (const json* v = get("training", "mixed_precision_reduce")) {
      reduce = string(*v, "training.mixed_precision_reduce");
    }
    const auto dtype = [&](const std::string& s, const char* path) -> std::string {
      if (s == "bfloat16") return "bf16";
      if (s == "float32") return "fp32";
      if (s == "float16") return "fp16";
      r_.fail_text(path, "\"bfloat16\", \"float16\" or \"float32\"", "\"" + s + "\"");
    };
    const std::string p = dtype(param, "training.mixed_precision_param");
    const std::string rd = dtype(reduce, "training.mixed_precision_reduce");
    if (const json* v = get("training", "dtype")) {
      if (string(*v, "training.dtype") != "float32") {
        r_.warn("training.dtype",
                "parameters stored in " + v->get<std::string>() +
                    " are not modelled: fp32 parameters under mixed precision are");
      }
    }
    patch()["training"]["precision"] = p == "fp32" ? "fp32" : "amp_" + p;
    if (fsdp2_ && p != "fp32") {
      patch()["parallelism"]["fsdp2"]["mixed_precision"] = {{"param_dtype", p},
                                                            {"reduce_dtype", rd}};
    }
    if (const json* v = get("training", "enable_cpu_offload");
        v && r_.boolean(*v, "training.enable_cpu_offload")) {
      r_.fail_text("training.enable_cpu_offload",
                   "false, or a base scenario with parallelism.fsdp2.cpu_offload and its "
                   "host_memory_gbytes_per_s (ddpsim does not invent a host copy rate)",
                   "true");
    }
  }

  void read_checkpointing() {
    // torchtitan's defaults: mode "selective", selective_ac_option "2" (job_config.py).
    std::string mode = "selective", option = "2";
    const json* m = get("activation_checkpoint", "mode");
    const json* o = get("activation_checkpoint", "selective_ac_option");
    if (m) mode = string(*m, "activation_checkpoint.mode");
    if (o) option = string(*o, "activation_checkpoint.selective_ac_option");
    if (!m) {
      r_.warn("activation_checkpoint.mode",
              "absent: torchtitan's default, selective with option \"" + option + "\"");
    }
    json& ac = patch()["training"]["activation_checkpointing"];
    if (mode == "none") {
      ac = false;
    } else if (mode == "full") {
      ac = true;
    } else if (mode == "selective") {
      if (option == "op") {
        ac = {{"mode", "selective"}, {"option", "op"}};
      } else {
        // "K" (a string in the TOML): every K-th block. torchtitan checkpoints every block for
        // 0 (`if not ac_freq or count % ac_freq == 0`), as K = 1 does.
        const bool digits = !option.empty() && option.size() <= 6 &&
                            option.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) {
          r_.fail_text("activation_checkpoint.selective_ac_option",
                       "\"op\" or a non-negative integer", "\"" + option + "\"");
        }
        ac = {{"mode", "selective"}, {"option", std::max(std::stoi(option), 1)}};
      }
    } else {
      r_.fail_text("activation_checkpoint.mode", "\"none\", \"full\" or \"selective\"",
                   "\"" + mode + "\"");
    }
  }

  void read_compile() {
    bool compile = false;
    if (const json* v = get("training", "compile")) compile = r_.boolean(*v, "training.compile");
    if (const json* v = get("compile", "enable")) {
      compile = r_.boolean(*v, "compile.enable");
      bool model = true;  // components default ["model", "loss"]
      if (const json* c = get("compile", "components")) {
        model = c->is_array() && std::find(c->begin(), c->end(), json("model")) != c->end();
      }
      compile = compile && model;
    }
    for (const char* k : {"backend", "components"}) {
      if (get("compile", k)) r_.ignore(std::string("compile.") + k);
    }
    if (compile) patch()["training"]["compile"] = true;
  }

  void read_float8() {
    bool on = false;
    if (const json* c = get("model", "converters")) {
      if (!c->is_array()) r_.fail("model.converters", "an array of converter names", *c);
      for (const json& x : *c) {
        const std::string name = string(x, "model.converters");
        if (name == "float8" || name == "quantize.linear.float8") {
          on = true;
        } else {
          r_.fail_text("model.converters", "\"float8\" (the one converter ddpsim models)",
                       "\"" + name + "\"");
        }
      }
    }
    if (const json* v = get("float8", "enable_float8_linear")) {
      on = on || r_.boolean(*v, "float8.enable_float8_linear");
    }
    // [quantize.linear.float8] (TOML nests it), or the mid-2024 [float8] table.
    const json* table = nullptr;
    std::string prefix;
    if (const auto q = doc_.find("quantize"); q != doc_.end() && q->is_object()) {
      handled_.insert("quantize");
      if (q->contains("linear") && q->at("linear").contains("float8")) {
        table = &q->at("linear").at("float8");
        prefix = "quantize.linear.float8.";
      }
    }
    if (table == nullptr && doc_.contains("float8")) {
      table = &doc_.at("float8");
      prefix = "float8.";
    }
    if (!on) {
      if (table != nullptr) {
        r_.ignore(prefix.substr(0, prefix.size() - 1));
        handled_.insert("float8");
      }
      return;
    }
    json f = {{"recipe", "tensorwise"}};
    if (table != nullptr) {
      handled_.insert("float8");
      if (!table->is_object()) r_.fail(prefix.substr(0, prefix.size() - 1), "a table", *table);
      for (const auto& [k, v] : table->items()) {
        const std::string path = prefix + k;
        if (k == "enable_fsdp_float8_all_gather") {
          f["fsdp_float8_all_gather"] = r_.boolean(v, path);
        } else if (k == "precompute_float8_dynamic_scale_for_fsdp") {
          f["precompute_scale"] = r_.boolean(v, path);
        } else if (k == "recipe_name") {
          f["recipe"] = string(v, path);
        } else if (k == "filter_fqns") {
          if (!v.is_array()) r_.fail(path, "an array of module names", v);
          json names = json::array();
          for (const json& n : v) names.push_back(hf_module_name(string(n, path)));
          f["filter_fqns"] = names;
        } else if (k == "emulate") {
          if (r_.boolean(v, path)) {
            r_.fail_text(path, "false (emulated float8 runs its matmuls in high precision)",
                         "true");
          }
        } else if (k == "enable_float8_linear") {
          // read above
        } else {
          r_.warn(path, detail::kNotModelled);
        }
      }
    }
    patch()["training"]["float8"] = f;
  }

  void read_optimizer() {
    if (const json* v = get("optimizer", "name")) {
      const std::string n = string(*v, "optimizer.name");
      if (n == "AdamW") {
        patch()["training"]["optimizer"] = "adamw";
      } else if (n == "Adam") {
        patch()["training"]["optimizer"] = "adam";
      } else {
        r_.fail_text("optimizer.name", "\"AdamW\" or \"Adam\"", "\"" + n + "\"");
      }
    } else {
      patch()["training"]["optimizer"] = "adamw";  // job_config.py's default
    }
    std::string impl;
    if (const json* v = get("optimizer", "implementation")) {
      impl = string(*v, "optimizer.implementation");
      if (impl == "for-loop") impl = "for_loop";
      if (impl != "fused" && impl != "foreach" && impl != "for_loop") {
        r_.fail("optimizer.implementation", "\"fused\", \"foreach\" or \"for-loop\"", *v);
      }
    } else if (const json* fused = get("optimizer", "fused")) {
      impl = r_.boolean(*fused, "optimizer.fused") ? "fused" : "foreach";
    } else if (doc_.contains("optimizer")) {
      impl = "fused";  // job_config.py (238fa9953): implementation = "fused"
    }
    if (!impl.empty()) patch()["training"]["optimizer_impl"] = impl;
    std::string where;
    if (const json* lr = get("optimizer", "lr")) {
      patch()["training"]["lr"] = {{"base", r_.positive_number(*lr, "optimizer.lr")},
                                   {"base_batch", global_batch_}};
      if (const json* w =
              get_any({{"lr_scheduler", "warmup_steps"}, {"training", "warmup_steps"}}, &where)) {
        patch()["training"]["lr"]["warmup_steps"] = integer(*w, where, 0, std::int64_t{1} << 40);
      }
    }
    for (const char* k : {"eps", "beta1", "beta2", "weight_decay", "early_step_in_backward"}) {
      if (get("optimizer", k)) r_.ignore(std::string("optimizer.") + k);
    }
  }

  // Every key not read: ignored when it cannot change step time or memory, else a warning.
  void sweep() {
    static const std::set<std::string> kNoEffectTraining = {
        "dataset",      "dataset_path",       "steps",
        "seed",         "deterministic",      "gc_freq",
        "warmup_steps", "data_parallel_type", "enable_loss_parallel"};
    for (const auto& [section, table] : doc_.items()) {
      if (handled_.count(section) != 0) continue;
      if (kNoEffectSections.count(section) != 0 || !table.is_object()) {
        r_.ignore(section);
        continue;
      }
      for (const auto& [k, v] : table.items()) {
        const std::string path = section + "." + k;
        if (handled_.count(path) != 0) continue;
        if (section == "training" && kNoEffectTraining.count(k) != 0) {
          r_.ignore(path);
        } else if ((section == "parallelism" || section == "experimental" ||
                    section == "training") &&
                   (k.starts_with("pipeline_parallel") || k.starts_with("context_parallel") ||
                    k.starts_with("tensor_parallel") || k.starts_with("expert_") ||
                    k == "enable_async_tensor_parallel" || k == "disable_loss_parallel")) {
          // Knobs of parallelism whose degree is 1 (above 1 was refused).
          r_.ignore(path);
        } else {
          r_.warn(path, detail::kNotModelled);
        }
      }
    }
  }

  const json& doc_;
  detail::Reader r_;
  std::optional<std::int64_t> world_;
  std::set<std::string> handled_;
  std::int64_t replicate_ = 1, dp_ = 1, global_batch_ = 1;
  bool fsdp2_ = false;
};

}  // namespace

json parse_toml_text(const std::string& text, const std::string& name) {
  try {
    const toml::table t = toml::parse(text, name);
    return to_json(t);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw InputError(name, "", "valid TOML",
                     fmt::format("{} at line {}, column {}", std::string(e.description()),
                                 where.line, where.column));
  }
}

json read_toml_file(const std::string& path) {
  return parse_toml_text(read_measurement_text(path, "torchtitan job file"), path);
}

ImportResult import_torchtitan_config(const json& job, const std::string& file,
                                      std::optional<std::int64_t> world_size) {
  return TorchtitanImporter(job, file, world_size).run();
}

ImportResult import_torchtitan_file(const std::string& path,
                                    std::optional<std::int64_t> world_size) {
  return import_torchtitan_config(read_toml_file(path), path, world_size);
}

}  // namespace ddpsim::model
