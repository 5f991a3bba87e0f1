#include "model/scenario/torch_workload.hpp"

#include <filesystem>
#include <string>

#include "model/error.hpp"
#include "model/json_file.hpp"
#include "model/workload/workload.hpp"

namespace ddpsim::model {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The model block the workload was built from, with what the Python module needs that tensor
// shapes do not say (activation, heads, epsilon, dropouts).
json source_json(const Scenario& s) {
  const json& m = s.doc.at("model");
  if (m.contains("mlp")) {
    json mlp = m.at("mlp");
    if (!mlp.contains("bias")) mlp["bias"] = true;
    if (!mlp.contains("activation")) mlp["activation"] = "relu";
    return {{"mlp", mlp}};
  }
  if (m.contains("hf_config")) {
    fs::path p = m.at("hf_config").get<std::string>();
    if (p.is_relative()) p = fs::path(s.file).parent_path() / p;
    return {{"hf_config", read_json_file(p.string())},
            {"attention",
             s.workload->attention ? attention_impl_name(*s.workload->attention) : "none"}};
  }
  throw UnsupportedError(s.file +
                         ": /model: the torch runner builds \"mlp\" and \"hf_config\" (gpt2) "
                         "models; got " +
                         s.model_label);
}

}  // namespace

json torch_workload_json(const Scenario& s) {
  const Workload& w = *s.workload;
  json tensors = json::array(), layers = json::array();
  for (const ParamTensor& t : w.tensors) {
    tensors.push_back({{"name", t.name},
                       {"shape", t.shape},
                       {"numel", t.numel()},
                       {"dtype", dtype_name(t.dtype)},
                       {"layer", t.layer},
                       {"tied_to", t.tied_to}});
  }
  for (const Layer& l : w.layers) {
    layers.push_back({{"name", l.name},
                      {"kind", l.kind},
                      {"first_tensor", l.first_tensor},
                      {"tensor_count", l.tensor_count}});
  }
  return {{"name", w.name},           {"seq_len", w.seq_len}, {"buffer_bytes", w.buffer_bytes()},
          {"source", source_json(s)}, {"tensors", tensors},   {"layers", layers}};
}

}  // namespace ddpsim::model
