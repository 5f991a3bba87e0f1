// builders/transformer.hpp: transformers from a Hugging Face config.json as Workloads.
//
// GPT2LMHeadModel ("gpt2"), LlamaForCausalLM ("llama", "mistral") and BertModel with pooler
// ("bert"): one layer per transformer block plus embeddings, final norm and head, every matrix
// product a GEMM of its real shape, activations after Korthikanti et al. 2022 (transformer.cpp
// gives the derivations; builders.hpp the conventions every builder follows). Parameter counts
// are tested against published totals (GPT-2 small 124,439,808; Llama-2-7B 6,738,415,616).
//
//   Workload g = build_hf_transformer(json::parse(text), "config.json", 1024);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "model/workload/workload.hpp"

namespace ddpsim::model {

/// Decoder-only transformer (GPT-2 and Llama families) or encoder (BERT) from a Hugging Face
/// config.json. `file` is only used in error messages. seq_len defaults to the config's maximum
/// positions. `attention` says how attention runs (model.attention; workload.hpp AttentionImpl):
/// fused kernels keep no s x s scores. Bad or missing keys throw InputError naming file and JSON
/// pointer.
Workload build_hf_transformer(const nlohmann::json& config, const std::string& file,
                              std::optional<std::int64_t> seq_len,
                              AttentionImpl attention = AttentionImpl::kSdpa);

}  // namespace ddpsim::model
