// hf_auto.hpp: the Hugging Face Trainer's "auto" values in a DeepSpeed config, filled in as the
// Trainer fills them (transformers integrations/deepspeed.py HfTrainerDeepSpeedConfig.
// trainer_config_process / trainer_config_finalize), from a base scenario instead of
// TrainingArguments:
//   train_micro_batch_size_per_gpu <- training.per_gpu_batch
//   gradient_accumulation_steps    <- training.grad_accumulation (1 when the base leaves it out)
//   train_batch_size               <- world size x micro-batch x accumulation
//   fp16.enabled / bf16.enabled    <- training.precision "fp16" / "bf16"
//   optimizer.params.lr, scheduler.params.warmup_max_lr <- training.lr.base
//   scheduler.params.warmup_num_steps <- training.lr.warmup_steps
//   zero_optimization.reduce_bucket_size <- hidden_size^2, stage3_prefetch_bucket_size <-
//       0.9 hidden_size^2, stage3_param_persistence_threshold <- 10 hidden_size (the base's
//       model.hf_config's hidden_size)
//   gradient_clipping, optimizer betas / eps / weight_decay, scheduler warmup_min_lr and
//       total_num_steps, warmup_type: TrainingArguments' defaults (max_grad_norm 1.0, adam
//       betas 0.9 / 0.999, eps 1e-8, weight_decay 0, warmup_min_lr 0); they do not change a
//       step's time or memory.
// Every "auto" that cannot be filled is named in one InputError (the file, the first pointer,
// and the others with what would fill each).
//
//   json filled = fill_hf_auto(ds_config, "ds.json", &base_doc, "base.json", 64);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::model {

/// `config` with every "auto" filled from `base` (a scenario document; null: none) and
/// `world_size`; relative paths in `base` resolve from `base_file`'s folder.
/// `notes` (if given) receives one line per mismatch the Trainer would leave in place (a 16-bit
/// base whose config has no section for that dtype: DeepSpeed then runs fp32).
nlohmann::json fill_hf_auto(const nlohmann::json& config, const std::string& file,
                            const nlohmann::json* base, const std::string& base_file,
                            std::optional<std::int64_t> world_size,
                            std::vector<std::string>* notes = nullptr);

}  // namespace ddpsim::model
