// DeepSpeed config import and apply_import_patch (the PyTorch knobs are in torch_import.cpp).
// What each key means and its code default come from the reference notes (ecosystem.md §3, read
// from DeepSpeed 0.16.5); the why of each mapping is next to it.
#include "model/imports/deepspeed_import.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "model/error.hpp"
#include "model/imports/detail/import_reader.hpp"
#include "model/json_file.hpp"
#include "model/scenario/scenario.hpp"
#include "model/schema.hpp"
#include "model/units.hpp"

namespace ddpsim::model {

using nlohmann::json;

using namespace detail;

namespace {

// ---- DeepSpeed -------------------------------------------------------------------------------

std::optional<std::int64_t> opt_integer(Reader& r, const json& obj, const char* key,
                                        std::int64_t min) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  return r.integer(*it, std::string("/") + key, min);
}

// Precision strings DeepSpeed accepts for communication_data_type (runtime/config.py DtypeEnum
// aliases), mapped to the scenario's dtype names.
std::optional<std::string> deepspeed_dtype(const std::string& s) {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> table = {
      {{"fp16", "float16", "half", "torch.float16"}, "fp16"},
      {{"bf16", "bfloat16", "torch.bfloat16"}, "bf16"},
      {{"fp32", "float32", "float", "torch.float32"}, "fp32"}};
  for (const auto& [names, out] : table) {
    if (std::find(names.begin(), names.end(), s) != names.end()) return out;
  }
  return std::nullopt;
}

void import_zero(Reader& r, const json& config, json& par, int& stage, bool& overlap_given) {
  stage = 0;
  overlap_given = false;
  auto it = config.find("zero_optimization");
  if (it == config.end() || it->is_null()) return;
  const std::string zp = "/zero_optimization";
  if (it->is_boolean()) {
    // Legacy form: true meant stage 1 (DeepSpeed's get_zero_optimization for a bool).
    stage = it->get<bool>() ? 1 : 0;
    r.warn(zp,
           "the boolean form is DeepSpeed's legacy syntax: read as stage " + std::to_string(stage));
    return;
  }
  const json& z = r.object_at(config, "zero_optimization", zp);
  if (auto s = z.find("stage"); s != z.end()) {
    if (s->is_boolean() || !s->is_number_integer() || s->get<std::int64_t>() < 0 ||
        s->get<std::int64_t>() > 3) {
      r.fail(zp + "/stage", "0, 1, 2 or 3 (ZeRO stage)", *s);
    }
    stage = static_cast<int>(s->get<std::int64_t>());
  }
  // ZeRO-Offload (zero/offload_config.py): device "cpu" -> parallelism.offload; NVMe
  // (ZeRO-Infinity) is refused. offload_param is stage 3's (DeepSpeed ignores it below).
  bool offload_optimizer = false, offload_param = false;
  for (const char* key : {"offload_optimizer", "offload_param"}) {
    auto o = z.find(key);
    if (o == z.end() || o->is_null()) continue;
    const std::string op = zp + "/" + key;
    if (!o->is_object()) r.fail(op, "an object", *o);
    auto d = o->find("device");
    const std::string device =
        d == o->end() || d->is_null() ? "none" : r.string(*d, op + "/device");
    if (device == "none") continue;
    if (device != "cpu") {
      r.fail_text(op + "/device",
                  "\"none\" or \"cpu\": ZeRO-Infinity's NVMe offload is not modelled by ddpsim",
                  "\"" + device + "\"");
    }
    (std::string(key) == "offload_optimizer" ? offload_optimizer : offload_param) = true;
    for (const auto& [k, v] : o->items()) {
      if (k == "device" || k == "pin_memory") continue;
      r.warn(op + "/" + k, kNotModelled);
    }
  }
  for (const char* key : {"cpu_offload", "cpu_offload_params"}) {
    auto o = z.find(key);
    if (o != z.end() && !o->is_null() && r.boolean(*o, zp + "/" + key)) {
      (std::string(key) == "cpu_offload" ? offload_optimizer : offload_param) = true;
    }
  }
  if (offload_param && stage < 3) {
    r.warn(zp + "/offload_param", "ignored at stage " + std::to_string(stage) +
                                      " (DeepSpeed offloads parameters at stage 3 only)");
    offload_param = false;
  }
  if (offload_param && !offload_optimizer) {
    r.fail_text(zp + "/offload_optimizer/device",
                "\"cpu\" beside offload_param (ddpsim models parameter offload with the "
                "optimizer's)",
                "\"none\"");
  }
  if (offload_optimizer) {
    par["offload"]["param"] = offload_param;
    r.warn(zp + "/offload_optimizer",
           "ZeRO-Offload: parallelism.offload needs host_adam_params_per_s, DeepSpeedCPUAdam's "
           "rate on your host (the base scenario gives it; no preset invents one)");
  }
  if (auto o = z.find("overlap_comm"); o != z.end() && !o->is_null()) {
    par["overlap"] = r.boolean(*o, zp + "/overlap_comm");
    overlap_given = true;
  }
  // zero/config.py use_multi_rank_bucket_allreduce (default true): ZeRO-1/2 all-reduce each
  // bucket instead of one reduce per owning rank (stage_1_and_2.py average_tensor).
  if (auto o = z.find("use_multi_rank_bucket_allreduce"); o != z.end() && !o->is_null()) {
    par["use_multi_rank_bucket_allreduce"] = r.boolean(*o, zp + "/use_multi_rank_bucket_allreduce");
  }
  // Element counts, as DeepSpeed reads them (int(5e8)); the scenario keys keep elements.
  for (const char* key : {"reduce_bucket_size", "allgather_bucket_size"}) {
    if (auto o = z.find(key); o != z.end() && !o->is_null()) {
      par[key] = r.integer(*o, zp + "/" + key, 1);
    }
  }
  // Knobs whose DeepSpeed default is what ddpsim models: silent at the default, a warning when
  // changed (contiguous_gradients false re-copies gradients; reduce_scatter false all-reduces;
  // allgather_partitions false broadcasts partitions one by one).
  for (const char* key : {"contiguous_gradients", "reduce_scatter", "allgather_partitions"}) {
    if (auto o = z.find(key); o != z.end() && !o->is_null()) {
      if (!r.boolean(*o, zp + "/" + key)) {
        r.warn(zp + "/" + key,
               "false is not modelled (ddpsim models DeepSpeed's default, true); the prediction "
               "assumes true");
      }
    }
  }
  r.sweep_rest(
      z, zp,
      {"stage", "offload_optimizer", "offload_param", "cpu_offload", "cpu_offload_params",
       "overlap_comm", "use_multi_rank_bucket_allreduce", "reduce_bucket_size",
       "allgather_bucket_size", "contiguous_gradients", "reduce_scatter", "allgather_partitions"},
      {"stage3_gather_16bit_weights_on_model_save", "stage3_gather_fp16_weights_on_model_save",
       "gather_16bit_weights_on_model_save", "elastic_checkpoint", "load_from_fp32_weights",
       "cpu_offload_use_pin_memory", "ignore_unused_parameters", "legacy_stage1",
       "log_trace_cache_warnings"},
      kNotModelled);
}

// fp16 / bf16 (alias "bfloat16") -> precision.
std::string import_precision(Reader& r, const json& config) {
  bool fp16 = false, bf16 = false;
  if (auto it = config.find("fp16"); it != config.end() && !it->is_null()) {
    const json& f = r.object_at(config, "fp16", "/fp16");
    if (auto e = f.find("enabled"); e != f.end()) fp16 = r.boolean(*e, "/fp16/enabled");
    r.sweep_rest(f, "/fp16", {"enabled"},
                 // Dynamic loss scaling: a check for inf/nan per step, no modelled cost.
                 {"loss_scale", "initial_scale_power", "loss_scale_window", "hysteresis",
                  "consecutive_hysteresis", "min_loss_scale"},
                 kNotModelled);
  }
  std::string bf_key;
  for (const char* key : {"bf16", "bfloat16"}) {
    if (auto it = config.find(key); it != config.end() && !it->is_null()) {
      bf_key = key;
      const json& b = r.object_at(config, key, std::string("/") + key);
      if (auto e = b.find("enabled"); e != b.end()) {
        bf16 = r.boolean(*e, std::string("/") + key + "/enabled");
      }
      r.sweep_rest(b, std::string("/") + key, {"enabled"}, {}, kNotModelled);
    }
  }
  if (fp16 && bf16) {
    r.fail_text("/" + bf_key + "/enabled",
                "false when fp16.enabled is true (DeepSpeed refuses both at once)", "true");
  }
  // DeepSpeed's fp16/bf16 modes keep 16-bit parameters and gradients and fp32 master weights
  // in the optimizer: the scenario's "fp16"/"bf16" (not amp_*, which is autocast).
  return fp16 ? "fp16" : bf16 ? "bf16" : "fp32";
}

// optimizer.type -> training.optimizer. DeepSpeed lower-cases the type. "Adam" runs in AdamW
// mode unless params.adam_w_mode is false (runtime/config.py ADAM_W_MODE_DEFAULT = True).
std::optional<std::string> import_optimizer(Reader& r, const json& config,
                                            std::optional<double>& lr,
                                            std::optional<std::string>& impl) {
  auto it = config.find("optimizer");
  if (it == config.end() || it->is_null()) return std::nullopt;
  const json& o = r.object_at(config, "optimizer", "/optimizer");
  json params = json::object();
  if (auto p = o.find("params"); p != o.end() && !p->is_null()) {
    params = r.object_at(o, "params", "/optimizer/params");
  }
  if (auto l = params.find("lr"); l != params.end()) {
    lr = r.positive_number(*l, "/optimizer/params/lr");
  }
  bool torch_adam = false;
  if (auto ta = params.find("torch_adam"); ta != params.end() && !ta->is_null()) {
    torch_adam = r.boolean(*ta, "/optimizer/params/torch_adam");
  }
  for (const auto& [k, v] : params.items()) {
    // Hyperparameters (betas, eps, weight_decay, ...) change no byte and no FLOP count.
    if (k != "lr" && k != "torch_adam") r.ignore("/optimizer/params/" + escape_pointer_token(k));
  }
  r.sweep_rest(o, "/optimizer", {"type", "params"}, {}, kNotModelled);
  auto t = o.find("type");
  if (t == o.end()) {
    r.warn("/optimizer", "no \"type\": training.optimizer is left unchanged");
    return std::nullopt;
  }
  std::string type = r.string(*t, "/optimizer/type");
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // deepspeed/runtime/engine.py _configure_basic_optimizer: Adam and AdamW run as DeepSpeed's
  // FusedAdam (one fused kernel) unless torch_adam, which takes torch.optim.Adam / AdamW (foreach
  // by default on CUDA).
  if (type == "adam" || type == "adamw") impl = torch_adam ? "foreach" : "fused";
  if (type == "adam") {
    auto w = params.find("adam_w_mode");
    const bool adamw = w == params.end() || r.boolean(*w, "/optimizer/params/adam_w_mode");
    return adamw ? "adamw" : "adam";
  }
  if (type == "adamw") return "adamw";
  if (type == "sgd") {
    auto m = params.find("momentum");
    const bool momentum = m != params.end() && m->is_number() && m->get<double>() != 0.0;
    return momentum ? "momentum" : "sgd";
  }
  // Same optimizer-state bytes as a modelled optimizer; the difference is said once.
  if (type == "lamb" || type == "fusedlamb") {
    r.warn("/optimizer/type",
           "\"" + t->get<std::string>() +
               "\" is modelled as adam (two fp32 states per parameter, as LAMB keeps); its "
               "per-layer trust-ratio norms are not");
    return "adam";
  }
  if (type == "onebitadam" || type == "zerooneadam" || type == "onebitlamb") {
    r.warn("/optimizer/type",
           "\"" + t->get<std::string>() +
               "\" compresses gradient communication to 1 bit after its warmup; ddpsim models it "
               "as adam with uncompressed communication");
    return "adam";
  }
  if (type == "lion" || type == "adagrad") {
    r.warn("/optimizer/type",
           "\"" + t->get<std::string>() + "\" keeps one state per parameter: modelled as momentum");
    return "momentum";
  }
  r.warn("/optimizer/type", "\"" + t->get<std::string>() +
                                "\" is not a modelled optimizer: training.optimizer is left "
                                "unchanged");
  return std::nullopt;
}

struct Warmup {
  std::optional<std::int64_t> steps;
  std::optional<double> max_lr;
};

Warmup import_scheduler(Reader& r, const json& config) {
  Warmup w;
  auto it = config.find("scheduler");
  if (it == config.end() || it->is_null()) return w;
  const json& s = r.object_at(config, "scheduler", "/scheduler");
  r.sweep_rest(s, "/scheduler", {"type", "params"}, {}, kNotModelled);
  auto t = s.find("type");
  if (t == s.end()) {
    r.warn("/scheduler", "no \"type\": no warmup imported");
    return w;
  }
  const std::string type = r.string(*t, "/scheduler/type");
  json params = json::object();
  if (auto p = s.find("params"); p != s.end() && !p->is_null()) {
    params = r.object_at(s, "params", "/scheduler/params");
  }
  if (type != "WarmupLR" && type != "WarmupDecayLR") {
    r.warn("/scheduler/type", "\"" + type +
                                  "\" is not imported (only WarmupLR and WarmupDecayLR map onto "
                                  "training.lr.warmup_steps); it does not change step time");
    return w;
  }
  // deepspeed/runtime/lr_schedules.py WarmupLR: warmup_num_steps defaults to 1000 and is used
  // as max(2, warmup_num_steps).
  std::int64_t steps = 1000;
  if (auto n = params.find("warmup_num_steps"); n != params.end()) {
    steps = r.integer(*n, "/scheduler/params/warmup_num_steps", 0);
  }
  w.steps = std::max<std::int64_t>(2, steps);
  if (auto m = params.find("warmup_max_lr"); m != params.end()) {
    w.max_lr = r.positive_number(*m, "/scheduler/params/warmup_max_lr");
  }
  // WarmupLR ramps from warmup_min_lr (default 0) along a log curve by default; ddpsim's warmup
  // is Goyal et al.'s linear ramp from the base rate (simulator/prediction/lr_schedule.hpp). The
  // shape of the warmup changes no step time, but the difference is said.
  std::string shape = "log";
  if (auto wt = params.find("warmup_type"); wt != params.end()) {
    shape = r.string(*wt, "/scheduler/params/warmup_type");
  }
  double min_lr = 0;
  if (auto m = params.find("warmup_min_lr"); m != params.end()) {
    if (!m->is_number() || m->get<double>() < 0) {
      r.fail(std::string("/scheduler/params/warmup_min_lr"), "a number >= 0", *m);
    }
    min_lr = m->get<double>();
  }
  r.warn("/scheduler/params",
         type + " ramps " + (shape == "linear" ? "linearly" : "along a log curve") +
             " from warmup_min_lr = " + shown(json(min_lr)) +
             "; ddpsim's warmup (`ddpsim lr`) ramps linearly from training.lr.base (Goyal et "
             "al.): only warmup_num_steps is imported");
  if (type == "WarmupDecayLR") {
    r.warn("/scheduler/params/total_num_steps",
           "the linear decay after warmup is not part of ddpsim's schedule (no effect on step "
           "time)");
  }
  for (const auto& [k, v] : params.items()) {
    if (k != "warmup_num_steps" && k != "warmup_max_lr" && k != "warmup_type" &&
        k != "warmup_min_lr" && k != "total_num_steps") {
      r.ignore("/scheduler/params/" + escape_pointer_token(k));
    }
  }
  return w;
}

}  // namespace

namespace {

// DeepSpeed's batch products, checked: nullopt when int64 overflows (a config's 2^32 x 2^32 x 8
// wrapped to "= 0" in the message).
std::optional<std::int64_t> product(std::initializer_list<std::int64_t> factors) {
  std::int64_t p = 1;
  for (std::int64_t f : factors) {
    if (__builtin_mul_overflow(p, f, &p)) return std::nullopt;
  }
  return p;
}

std::string product_text(std::optional<std::int64_t> v) {
  return v ? std::to_string(*v) : "more than 9223372036854775807 (int64 overflows)";
}

// A product the batch rule needs as a value: refused at `pointer` when it overflows.
std::int64_t checked_product(std::initializer_list<std::int64_t> factors, const std::string& file,
                             const std::string& pointer, const std::string& what) {
  const std::optional<std::int64_t> p = product(factors);
  if (!p)
    throw InputError(file, pointer, what + " of at most 9223372036854775807", product_text(p));
  return *p;
}

}  // namespace

DeepSpeedBatch resolve_deepspeed_batch(std::optional<std::int64_t> train,
                                       std::optional<std::int64_t> micro,
                                       std::optional<std::int64_t> acc,
                                       std::optional<std::int64_t> world, const std::string& file) {
  DeepSpeedBatch b;
  b.world_size = world;
  if (world && *world < 1) throw InputError(file, "", "a world size >= 1", std::to_string(*world));
  const std::string world_hint =
      " needs the data-parallel world size: pass --gpus N or --scenario BASE.json with "
      "cluster.gpus";
  if (train && micro && acc) {
    if (!world) {
      // Implied world size: DeepSpeed would assert train == micro x acc x world.
      const std::optional<std::int64_t> per_world_or = product({*micro, *acc});
      const std::int64_t per_world = per_world_or.value_or(0);
      if (!per_world_or || *train % per_world != 0) {
        throw InputError(file, "/train_batch_size",
                         "a multiple of train_micro_batch_size_per_gpu x "
                         "gradient_accumulation_steps = " +
                             std::to_string(*micro) + " x " + std::to_string(*acc) + " = " +
                             product_text(per_world_or) +
                             " (DeepSpeed: train_batch_size = micro x accumulation x world size)",
                         std::to_string(*train));
      }
      b.world_size = *train / per_world;
    }
    b.train_batch_size = *train;
    b.micro_batch_per_gpu = *micro;
    b.grad_accumulation = *acc;
  } else if (train && micro) {
    if (!world)
      throw InputError(file, "/gradient_accumulation_steps", "a value: deriving it" + world_hint);
    b.train_batch_size = *train;
    b.micro_batch_per_gpu = *micro;
    b.grad_accumulation = *train / *micro / *world;  // _set_batch_related_parameters
  } else if (train && acc) {
    if (!world)
      throw InputError(file, "/train_micro_batch_size_per_gpu",
                       "a value: deriving it" + world_hint);
    b.train_batch_size = *train;
    b.grad_accumulation = *acc;
    b.micro_batch_per_gpu = *train / *world / *acc;
  } else if (micro && acc) {
    b.micro_batch_per_gpu = *micro;
    b.grad_accumulation = *acc;
    b.train_batch_size =
        world ? checked_product({*micro, *acc, *world}, file, "/train_micro_batch_size_per_gpu",
                                "a global batch micro x accumulation x world size")
              : 0;
  } else if (train) {
    if (!world)
      throw InputError(file, "/train_micro_batch_size_per_gpu",
                       "a value: deriving it" + world_hint);
    b.train_batch_size = *train;
    b.grad_accumulation = 1;
    b.micro_batch_per_gpu = *train / *world;
  } else if (micro) {
    b.micro_batch_per_gpu = *micro;
    b.grad_accumulation = 1;
    b.train_batch_size =
        world ? checked_product({*micro, *world}, file, "/train_micro_batch_size_per_gpu",
                                "a global batch micro x world size")
              : 0;
  } else {
    throw InputError(file, "/train_micro_batch_size_per_gpu",
                     "train_micro_batch_size_per_gpu or train_batch_size (DeepSpeed needs one of "
                     "them)",
                     "neither");
  }
  // _batch_assertion: every number > 0 and the product rule.
  if (b.micro_batch_per_gpu < 1) {
    throw InputError(file, "/train_batch_size",
                     "at least world size x gradient_accumulation_steps = " +
                         product_text(product({b.world_size.value_or(1), b.grad_accumulation})) +
                         " so that the derived micro-batch is >= 1",
                     std::to_string(b.train_batch_size));
  }
  if (b.grad_accumulation < 1) {
    throw InputError(file, "/train_batch_size",
                     "at least train_micro_batch_size_per_gpu x world size = " +
                         product_text(product({b.micro_batch_per_gpu, b.world_size.value_or(1)})) +
                         " so that the derived gradient_accumulation_steps is >= 1",
                     std::to_string(b.train_batch_size));
  }
  const std::optional<std::int64_t> rule =
      b.world_size ? product({b.micro_batch_per_gpu, b.grad_accumulation, *b.world_size})
                   : std::nullopt;
  if (b.world_size && b.train_batch_size != 0 && (!rule || b.train_batch_size != *rule)) {
    throw InputError(file, "/train_batch_size",
                     "train_micro_batch_size_per_gpu x gradient_accumulation_steps x world size "
                     "= " +
                         std::to_string(b.micro_batch_per_gpu) + " x " +
                         std::to_string(b.grad_accumulation) + " x " +
                         std::to_string(*b.world_size) + " = " + product_text(rule) +
                         " (DeepSpeed's batch rule)",
                     std::to_string(b.train_batch_size));
  }
  return b;
}

ImportResult import_deepspeed_config(const json& config, const std::string& file,
                                     std::optional<std::int64_t> world_size) {
  if (!config.is_object()) throw InputError(file, "", "a DeepSpeed config object", shown(config));
  Reader r(file);
  json training = json::object(), par = json::object(), cluster = json::object();

  const DeepSpeedBatch b = resolve_deepspeed_batch(
      opt_integer(r, config, "train_batch_size", 1),
      opt_integer(r, config, "train_micro_batch_size_per_gpu", 1),
      opt_integer(r, config, "gradient_accumulation_steps", 1), world_size, file);
  training["per_gpu_batch"] = b.micro_batch_per_gpu;
  training["grad_accumulation"] = b.grad_accumulation;
  if (!world_size && b.world_size) cluster["gpus"] = *b.world_size;

  int stage = 0;
  bool overlap_given = false;
  import_zero(r, config, par, stage, overlap_given);
  static const char* const kStrategy[] = {"ddp", "zero1", "zero2", "zero3"};
  par["strategy"] = kStrategy[stage];

  const std::string precision = import_precision(r, config);
  training["precision"] = precision;
  if (stage == 0) {
    // Stage 0: engine.allreduce_gradients -> buffered_allreduce_fallback after the backward,
    // buffers of MEMORY_OPT_ALLREDUCE_SIZE = 5e8 elements of the gradient dtype.
    const double grad_bytes = precision == "fp32" ? 4.0 : 2.0;
    par["bucket_cap_mb"] = 5e8 * grad_bytes / kMiB;
    if (!overlap_given) par["overlap"] = false;
    for (const char* key : {"reduce_bucket_size", "allgather_bucket_size"}) {
      if (par.contains(key)) {
        r.warn(std::string("/zero_optimization/") + key,
               "used by ZeRO stages 1-3 only; at stage 0 DeepSpeed all-reduces in 5e8-element "
               "buffers");
      }
    }
  } else if (!overlap_given) {
    // zero/config.py overlap_comm_valid: None -> True for stage 3, False otherwise.
    par["overlap"] = stage == 3;
  }

  if (auto it = config.find("communication_data_type"); it != config.end() && !it->is_null()) {
    const std::string s = r.string(*it, "/communication_data_type");
    const auto d = deepspeed_dtype(s);
    if (!d) r.fail(std::string("/communication_data_type"), "fp16, bf16 or fp32", *it);
    training["grad_reduce_dtype"] = *d;
  }

  std::optional<double> lr;
  std::optional<std::string> impl;
  if (auto o = import_optimizer(r, config, lr, impl)) training["optimizer"] = *o;
  if (impl) training["optimizer_impl"] = *impl;
  const Warmup w = import_scheduler(r, config);
  if (w.max_lr) {
    if (lr && *lr != *w.max_lr) {
      r.warn("/scheduler/params/warmup_max_lr",
             "differs from optimizer.params.lr; the scheduler's rate is the one DeepSpeed "
             "trains at after warmup and becomes training.lr.base");
    }
    lr = w.max_lr;
  }
  if (lr) {
    if (b.train_batch_size > 0) {
      // The rate was set for this global batch: scaling rules (linear, sqrt) start from it.
      json l = {{"base", *lr}, {"base_batch", b.train_batch_size}};
      if (w.steps) l["warmup_steps"] = *w.steps;
      training["lr"] = l;
    } else {
      r.warn("/optimizer/params/lr",
             "training.lr is not imported: its base_batch is train_batch_size, which needs the "
             "world size (pass --gpus N or --scenario BASE.json with cluster.gpus)");
    }
  } else if (w.steps) {
    r.warn("/scheduler/params/warmup_num_steps",
           "no learning rate (optimizer.params.lr or scheduler.params.warmup_max_lr): "
           "training.lr is not imported");
  }

  // activation_checkpointing configures deepspeed.checkpointing.checkpoint (runtime/
  // activation_checkpointing/checkpointing.py configure), which a model calls per transformer
  // block: full recomputation of each block, training.activation_checkpointing.
  if (auto ac = config.find("activation_checkpointing"); ac != config.end() && !ac->is_null()) {
    if (!ac->is_object()) r.fail("/activation_checkpointing", "an object", *ac);
    training["activation_checkpointing"] = true;
    r.warn("/activation_checkpointing",
           "imported as training.activation_checkpointing = true: the section configures "
           "deepspeed.checkpointing, which the model must call per block (a Hugging Face "
           "Trainer model checkpoints with gradient_checkpointing instead)");
    for (const auto& [k, v] : ac->items()) {
      const std::string p = "/activation_checkpointing/" + escape_pointer_token(k);
      if (k == "partition_activations" || k == "contiguous_memory_optimization" ||
          k == "synchronize_checkpoint_boundary" || k == "number_checkpoints" || k == "profile") {
        if (k == "partition_activations" && v == json(true)) {
          r.warn(p,
                 "splits checkpoints across model-parallel ranks: no effect without model "
                 "parallelism, which ddpsim does not model");
        } else {
          r.ignore(p);
        }
      } else if (k == "cpu_checkpointing" && v == json(true)) {
        r.warn(p,
               "checkpoints offloaded to CPU memory are not modelled: their PCIe copies "
               "are not charged and their GPU memory is still counted");
      } else if (k != "cpu_checkpointing") {
        r.warn(p, "not modelled");
      }
    }
  }

  r.sweep_rest(config, "",
               {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                "zero_optimization", "fp16", "bf16", "bfloat16", "optimizer", "scheduler",
                "communication_data_type", "activation_checkpointing"},
               // Logging, monitoring, profiling output and checkpoint paths: no effect on a step.
               {"steps_per_print", "wall_clock_breakdown", "dump_state", "memory_breakdown",
                "tensorboard", "wandb", "csv_monitor", "comet", "comms_logger", "flops_profiler",
                "checkpoint", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer",
                "dataloader_drop_last", "timers", "monitor_config"},
               kNotModelled);

  ImportResult out = std::move(r.result);
  out.patch = json::object();
  if (!cluster.empty()) out.patch["cluster"] = cluster;
  out.patch["training"] = training;
  out.patch["parallelism"] = par;
  return out;
}

ImportResult import_deepspeed_file(const std::string& path,
                                   std::optional<std::int64_t> world_size) {
  return import_deepspeed_config(read_json_file(path), path, world_size);
}

json apply_import_patch(const json& base, const json& patch) {
  json out = base;
  out.merge_patch(patch);
  return out;
}

}  // namespace ddpsim::model
