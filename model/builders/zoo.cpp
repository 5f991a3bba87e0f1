#include "model/builders/zoo.hpp"

#include <filesystem>

#include "model/builders/cnn.hpp"
#include "model/builders/torch_export.hpp"
#include "model/builders/transformer.hpp"
#include "model/error.hpp"
#include "model/json_file.hpp"
#include "model/paths.hpp"
#include "model/schema.hpp"

namespace ddpsim::model {

using nlohmann::json;

const std::vector<std::string>& model_preset_names() {
  static const std::vector<std::string> names = {
      "resnet50",     "resnet101",     "vgg16",          "bert-large",
      "gpt2-xl",      "llama-2-7b",    "llama-2-13b",    "llama-2-70b",
      "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "torchtitan-llama3-debugmodel",
      "gpt3-175b"};
  return names;
}

namespace {

const KeyTable& model_file_keys() {
  static const KeyTable table = [] {
    KeyTable t;
    t.name = "model file";
    auto add = [&](std::string p, KeyType type, std::string help, bool required) {
      KeySpec k;
      k.pointer = std::move(p);
      k.type = type;
      k.help = std::move(help);
      k.required = required;
      return &t.keys.emplace_back(std::move(k));
    };
    add("/name", KeyType::kString, "model name", true);
    add("/description", KeyType::kString, "free text", false);
    add("/source", KeyType::kString, "paper, repository or file the architecture comes from", true);
    add("/builder", KeyType::kString, "which builder expands the config", true)->allowed = {
        "hf_transformer", "cnn", "torch_export"};
    add("/config", KeyType::kObject,
        "the builder's configuration (a Hugging Face config.json, a CNN architecture, or "
        "what python/ddpsim_torch exported)",
        true)
        ->pattern = "free";
    KeySpec* seq = add("/seq_len", KeyType::kInteger, "default tokens per sample", false);
    seq->minimum = 1;
    KeySpec* ep = add("/expected_params", KeyType::kInteger,
                      "the published parameter count, checked on every load", true);
    ep->minimum = 1;
    return t;
  }();
  return table;
}

}  // namespace

Workload load_model_file(const std::string& path, std::optional<std::int64_t> seq_len,
                         AttentionImpl attention) {
  const json doc = read_json_file(path);
  validate(doc, model_file_keys(), path);
  const std::string builder = doc.at("builder").get<std::string>();
  if (!seq_len && doc.contains("seq_len")) seq_len = doc.at("seq_len").get<std::int64_t>();
  Workload w;
  if (builder == "hf_transformer") {
    try {
      w = build_hf_transformer(doc.at("config"), path, seq_len, attention);
    } catch (const InputError& e) {
      // The builder reads a config.json; here the config sits under "/config".
      if (e.file() == path) throw e.rebased("/config");
      throw;
    }
  } else {
    if (seq_len) {
      // A CNN has no sequence, and an exported model's work per sample was measured on its
      // example inputs: a seq_len from the scenario is a mistake worth naming.
      throw InputError(path, "/builder",
                       "a sequence model (hf_transformer), because the scenario sets "
                       "model.seq_len",
                       "\"" + builder + "\"");
    }
    try {
      w = builder == "cnn" ? build_cnn(doc.at("config"), path)
                           : build_torch_export(doc.at("config"), path);
    } catch (const InputError& e) {
      if (builder == "torch_export" && e.file() == path) throw e.rebased("/config");
      throw;
    }
  }
  w.name = doc.at("name").get<std::string>();
  w.source = doc.at("source").get<std::string>();
  const auto expected = doc.at("expected_params").get<std::int64_t>();
  if (w.param_count() != expected) {
    throw InputError(path, "/expected_params",
                     "the builder's count " + std::to_string(w.param_count()) +
                         " (the file and its builder disagree)",
                     std::to_string(expected));
  }
  return w;
}

Workload load_model_preset(const std::string& name, const std::string& file,
                           const std::string& pointer, std::optional<std::int64_t> seq_len,
                           AttentionImpl attention) {
  const auto path = data_dir() / "models" / (name + ".json");
  if (!std::filesystem::exists(path)) {
    throw InputError(file, pointer, "a model preset in " + (data_dir() / "models").string(),
                     "\"" + name + "\"");
  }
  return load_model_file(path.string(), seq_len, attention);
}

}  // namespace ddpsim::model
