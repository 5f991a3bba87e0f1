// The Hugging Face Trainer's "auto" values in a DeepSpeed config (hf_auto.hpp).
#include "model/imports/hf_auto.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <vector>

#include "model/error.hpp"
#include "model/json_file.hpp"
#include "model/schema.hpp"

namespace ddpsim::model {

using nlohmann::json;

namespace {

// The value at `pointer` of `doc`, or null.
json at(const json* doc, const std::string& pointer) {
  if (doc == nullptr) return nullptr;
  const json::json_pointer p(pointer);
  return doc->contains(p) ? doc->at(p) : json();
}

// Every pointer whose value is the string "auto", in document order.
void find_autos(const json& v, const std::string& pointer, std::vector<std::string>& out) {
  if (v.is_string() && v.get<std::string>() == "auto") {
    out.push_back(pointer);
  } else if (v.is_object()) {
    for (const auto& [k, child] : v.items()) {
      find_autos(child, pointer + "/" + escape_pointer_token(k), out);
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      find_autos(v[i], pointer + "/" + std::to_string(i), out);
    }
  }
}

// hidden_size of the base scenario's model.hf_config (a path from the base's folder, or the
// config inline), n_embd for GPT-2's; null when the base names no config.
json hidden_size(const json* base, const std::string& base_file) {
  const json cfg_ref = at(base, "/model/hf_config");
  json cfg;
  if (cfg_ref.is_string()) {
    std::filesystem::path p(cfg_ref.get<std::string>());
    if (p.is_relative()) p = std::filesystem::path(base_file).parent_path() / p;
    cfg = read_json_file(p.string());
  } else if (cfg_ref.is_object()) {
    cfg = cfg_ref;
  }
  for (const char* k : {"hidden_size", "n_embd"}) {
    if (cfg.is_object() && cfg.contains(k) && cfg.at(k).is_number_integer()) return cfg.at(k);
  }
  return nullptr;
}

}  // namespace

json fill_hf_auto(const json& config, const std::string& file, const json* base,
                  const std::string& base_file, std::optional<std::int64_t> world_size,
                  std::vector<std::string>* notes) {
  std::vector<std::string> autos;
  find_autos(config, "", autos);
  if (autos.empty()) return config;
  // The Trainer fills only sections the file has (fill_match skips absent keys).
  const json base_precision = at(base, "/training/precision");
  for (const char* dtype : {"bf16", "fp16"}) {
    if (notes != nullptr && base_precision.is_string() &&
        base_precision.get<std::string>().find(dtype) != std::string::npos &&
        !config.contains(dtype)) {
      notes->push_back(file + ": /" + dtype + ": the base scenario trains in " +
                       base_precision.get<std::string>() + " but the config has no \"" + dtype +
                       "\" section for the Trainer to enable: DeepSpeed runs without it");
    }
  }

  const json micro = at(base, "/training/per_gpu_batch");
  const json accum = base != nullptr && !at(base, "/training/grad_accumulation").is_null()
                         ? at(base, "/training/grad_accumulation")
                         : (base != nullptr ? json(1) : json());
  const json precision = at(base, "/training/precision");
  const json lr = at(base, "/training/lr/base");
  const json warmup = at(base, "/training/lr").is_object()
                          ? (at(base, "/training/lr/warmup_steps").is_null()
                                 ? json(0)
                                 : at(base, "/training/lr/warmup_steps"))
                          : json();
  const json hidden = hidden_size(base, base_file);
  const bool zero3 = config.contains("zero_optimization") &&
                     config.at("zero_optimization").is_object() &&
                     config.at("zero_optimization").value("stage", json(0)) == json(3);

  // What the Trainer puts there, from the base, and what the base needs for it; a null value
  // with an empty need: the key changes no step (erased).
  struct Fill {
    json value;
    std::string need;
  };
  const auto half = [&](const char* which) -> Fill {
    if (!precision.is_string()) return {nullptr, "training.precision"};
    return {json(precision.get<std::string>().find(which) != std::string::npos), ""};
  };
  const auto squared = [&](double f) -> Fill {
    if (!hidden.is_number_integer()) return {nullptr, "model.hf_config with hidden_size"};
    const double h = hidden.get<double>();
    return {json(static_cast<std::int64_t>(std::floor(f * h * h))), ""};
  };
  const std::map<std::string, std::function<Fill()>> fills = {
      {"/train_micro_batch_size_per_gpu",
       [&] {
         return Fill{micro, "training.per_gpu_batch"};
       }},
      {"/gradient_accumulation_steps",
       [&] {
         return Fill{accum, "training.grad_accumulation"};
       }},
      {"/train_batch_size",
       [&]() -> Fill {
         if (!micro.is_number_integer() || !accum.is_number_integer() || !world_size) {
           return {nullptr, "training.per_gpu_batch and cluster.gpus (or --gpus)"};
         }
         return {json(*world_size * micro.get<std::int64_t>() * accum.get<std::int64_t>()), ""};
       }},
      {"/fp16/enabled", [&] { return half("fp16"); }},
      {"/bf16/enabled", [&] { return half("bf16"); }},
      {"/optimizer/params/lr",
       [&] {
         return Fill{lr, "training.lr.base"};
       }},
      {"/scheduler/params/warmup_max_lr",
       [&] {
         return Fill{lr, "training.lr.base"};
       }},
      {"/scheduler/params/warmup_num_steps",
       [&] {
         return Fill{warmup, "training.lr (its warmup_steps)"};
       }},
      {"/zero_optimization/reduce_bucket_size", [&] { return squared(1.0); }},
      {"/zero_optimization/stage3_prefetch_bucket_size",
       [&] {
         return zero3 ? squared(0.9) : Fill{nullptr, ""};
       }},
      {"/zero_optimization/stage3_param_persistence_threshold",
       [&]() -> Fill {
         if (!zero3) return {nullptr, ""};
         if (!hidden.is_number_integer()) return {nullptr, "model.hf_config with hidden_size"};
         return {json(10 * hidden.get<std::int64_t>()), ""};
       }},
  };
  // TrainingArguments' own settings that change no step: erased.
  static const char* const kNoStep[] = {"/gradient_clipping",
                                        "/optimizer/params/betas",
                                        "/optimizer/params/eps",
                                        "/optimizer/params/weight_decay",
                                        "/scheduler/params/warmup_min_lr",
                                        "/scheduler/params/total_num_steps",
                                        "/scheduler/params/warmup_type",
                                        "/amp/enabled",
                                        "/amp/opt_level"};

  json out = config;
  std::vector<std::string> missing;
  for (const std::string& p : autos) {
    const auto it = fills.find(p);
    const bool no_step = std::find(std::begin(kNoStep), std::end(kNoStep), p) != std::end(kNoStep);
    if (it == fills.end() && !no_step) {
      missing.push_back(p + " (not a key the Hugging Face Trainer fills)");
      continue;
    }
    const Fill f = no_step ? Fill{nullptr, ""} : it->second();
    const json::json_pointer jp(p);
    if (!f.value.is_null()) {
      out[jp] = f.value;
    } else if (f.need.empty()) {
      out[jp.parent_pointer()].erase(jp.back());
    } else {
      missing.push_back(p + " (from the base scenario's " + f.need + ")");
    }
  }
  if (!missing.empty()) {
    std::string rest;
    for (std::size_t i = 1; i < missing.size(); ++i) rest += "; also " + missing[i];
    throw InputError(file, missing.front().substr(0, missing.front().find(' ')),
                     "a value, or \"auto\" with a base scenario that fills it as the Hugging Face "
                     "Trainer does (--scenario BASE.json)",
                     "\"auto\" " + missing.front().substr(missing.front().find(' ') + 1) + rest);
  }
  return out;
}

}  // namespace ddpsim::model
