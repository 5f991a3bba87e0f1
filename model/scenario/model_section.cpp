// The "model" section of a scenario (detail/model_section.hpp): the one form it gives built into
// a workload, with errors on the user's keys rather than the preset or config they name.
#include "model/scenario/detail/model_section.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/builders/mlp.hpp"
#include "model/builders/transformer.hpp"
#include "model/builders/zoo.hpp"
#include "model/error.hpp"
#include "model/scenario/detail/json_io.hpp"

namespace ddpsim::model::detail {

using nlohmann::json;

namespace {

/// A model.attention given for a model without attention (a CNN from the zoo) is a mistake to
/// name, not a key to ignore.
std::shared_ptr<const Workload> with_attention_checked(Workload w, const json& m,
                                                       const std::string& file) {
  if (m.contains("attention") && !w.attention) {
    throw InputError(file, "/model/attention",
                     "no attention for model \"" + w.name + "\" (it has no attention layers)",
                     m.at("attention").dump());
  }
  return std::make_shared<const Workload>(std::move(w));
}

std::shared_ptr<const Workload> build_unchecked_workload(const json& m, const std::string& file,
                                                         std::string& label) {
  int forms = 0;
  for (const char* k : {"preset", "file", "hf_config", "mlp", "layers"}) forms += m.contains(k);
  if (forms != 1) {
    throw InputError(file, "/model",
                     "exactly one of \"preset\", \"file\", \"hf_config\", \"mlp\", \"layers\"",
                     std::to_string(forms) + " of them");
  }
  std::optional<std::int64_t> seq_len;
  if (m.contains("seq_len")) seq_len = m.at("seq_len").get<std::int64_t>();
  if (seq_len && (m.contains("mlp") || m.contains("layers"))) {
    throw InputError(file, "/model/seq_len",
                     "no seq_len for \"mlp\" or \"layers\" models (a sample is one row)",
                     std::to_string(*seq_len));
  }
  // model.attention: how a transformer's attention runs (sdpa by default, what PyTorch and
  // Hugging Face run); a model without attention has nothing to apply it to.
  const auto attention = parse_attention_impl(get_or_default<std::string>(m, "/model/attention"));
  DDPSIM_ASSERT(attention.has_value(), "attention names are checked by the key table");
  if (m.contains("attention") && (m.contains("mlp") || m.contains("layers"))) {
    throw InputError(file, "/model/attention",
                     "no attention for \"mlp\" or \"layers\" models (they have no attention)",
                     m.at("attention").dump());
  }
  if (m.contains("preset")) {
    const auto name = m.at("preset").get<std::string>();
    label = "preset " + name;
    return with_attention_checked(
        load_model_preset(name, file, "/model/preset", seq_len, *attention), m, file);
  }
  if (m.contains("file")) {
    const auto path = require_file(file, "/model/file", m.at("file").get<std::string>());
    label = "file " + m.at("file").get<std::string>();
    return with_attention_checked(load_model_file(path, seq_len, *attention), m, file);
  }
  if (m.contains("hf_config")) {
    const auto path = require_file(file, "/model/hf_config", m.at("hf_config").get<std::string>());
    label = "hf_config " + m.at("hf_config").get<std::string>();
    const json cfg = read_cached(path);
    return std::make_shared<const Workload>(build_hf_transformer(cfg, path, seq_len, *attention));
  }
  if (m.contains("mlp")) {
    MlpOptions o;
    for (const json& w : m.at("mlp").at("widths")) o.widths.push_back(w.get<std::int64_t>());
    o.bias = get_or_default<bool>(m.at("mlp"), "/model/mlp/bias");
    o.activation = get_or_default<std::string>(m.at("mlp"), "/model/mlp/activation");
    label = "mlp";
    for (std::size_t i = 0; i < o.widths.size(); ++i) {
      label += (i == 0 ? " " : "-") + std::to_string(o.widths[i]);
    }
    return std::make_shared<const Workload>(build_mlp(o));
  }
  std::vector<LumpLayer> layers;
  for (const json& l : m.at("layers")) {
    layers.push_back({l.at("name").get<std::string>(), l.at("params").get<std::int64_t>(),
                      l.at("fwd_flops_per_sample").get<double>(),
                      get_or_default<double>(l, "/model/layers/*/activation_bytes_per_sample")});
  }
  label = "layers (" + std::to_string(layers.size()) + ")";
  return std::make_shared<const Workload>(build_from_layers(layers));
}

}  // namespace

std::shared_ptr<const Workload> build_workload(const json& m, const std::string& file,
                                               std::string& label) {
  std::shared_ptr<const Workload> w;
  try {
    w = build_unchecked_workload(m, file, label);
  } catch (const InputError& e) {
    // A seq_len the scenario gives is checked inside the preset or config it applies to
    // (n_positions bounds it there): the error is the user's key, with the model it does not
    // fit, not a key of a shipped preset file the user never wrote.
    if (m.contains("seq_len") && e.file() != file && e.pointer().ends_with("/seq_len")) {
      throw InputError(file, "/model/seq_len",
                       e.expected() + " of " + label + " (" + e.file() + ")", e.got());
    }
    if (m.contains("seq_len") && e.file() != file && e.pointer() == "/builder") {
      // A CNN or an exported model has no sequence: the scenario's seq_len is the mistake.
      throw InputError(file, "/model/seq_len",
                       "no seq_len for " + label + " (" + e.file() + " is built by " + e.got() +
                           ", not a sequence model)",
                       m.at("seq_len").dump());
    }
    throw;
  }
  // The user's key, not the builder's: "/model/hf_config", "/model/mlp/widths", "/model/layers".
  std::string pointer = "/model";
  for (const char* k : {"preset", "file", "hf_config", "mlp", "layers"}) {
    if (m.contains(k)) pointer += std::string("/") + k;
  }
  if (m.contains("mlp")) pointer += "/widths";
  check_model_size(*w, file, pointer);
  return w;
}

}  // namespace ddpsim::model::detail
