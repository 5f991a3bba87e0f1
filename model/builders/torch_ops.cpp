#include "model/builders/detail/torch_ops.hpp"

#include <map>
#include <set>
#include <vector>

#include "model/error.hpp"

namespace ddpsim::model::detail {

using nlohmann::json;

namespace {

std::vector<std::int64_t> first_output_shape(const json& op) {
  if (!op.contains("outputs") || op.at("outputs").empty()) return {};
  const json& o = op.at("outputs").at(0);
  if (!o.contains("shape")) return {};
  return o.at("shape").get<std::vector<std::int64_t>>();
}

// Whether `shape` is the shape of one of `layer`'s parameters, or of its transpose.
bool is_parameter_shape(const Workload& w, const Layer& layer,
                        const std::vector<std::int64_t>& shape) {
  for (int t = layer.first_tensor; t < layer.first_tensor + layer.tensor_count; ++t) {
    const std::vector<std::int64_t>& p = w.tensors[static_cast<std::size_t>(t)].shape;
    if (p == shape) return true;
    if (p.size() == 2 && shape.size() == 2 && p[0] == shape[1] && p[1] == shape[0]) return true;
  }
  return false;
}

Gemm captured_gemm(const Workload& w, const Layer& layer, const json& op, GemmRole role,
                   std::int64_t b) {
  const json& g = op.at("gemm");
  GemmShape s{g.at("m").get<std::int64_t>(),       g.at("n").get<std::int64_t>(),
              g.at("k").get<std::int64_t>(),       g.at("count").get<std::int64_t>(),
              g.at("a").get<std::string>() == "T", g.at("b").get<std::string>() == "T"};
  if (role != GemmRole::kForward && is_parameter_shape(w, layer, first_output_shape(op))) {
    role = GemmRole::kWeightGrad;
  }
  BatchDim dim = BatchDim::kM;
  std::int64_t* extent = &s.m;
  if (role == GemmRole::kWeightGrad && s.k % b == 0) {
    dim = BatchDim::kK;
    extent = &s.k;
  } else if (s.count > 1 && s.count % b == 0) {
    dim = BatchDim::kCount;
    extent = &s.count;
  } else if (s.m % b == 0) {
    dim = BatchDim::kM;
    extent = &s.m;
  } else if (s.n % b == 0) {
    dim = BatchDim::kN;
    extent = &s.n;
  } else if (s.k % b == 0) {
    dim = BatchDim::kK;
    extent = &s.k;
  }
  *extent /= b;  // no extent divisible: the product does not grow with the batch (kM, kept)
  Gemm out;
  out.name = layer.name + "." + op.at("op").get<std::string>();
  out.role = role;
  out.per_sample = s;
  out.batch_dim = dim;
  return out;
}

}  // namespace

int apply_captured_ops(Workload& w, const json& ops, std::int64_t example_batch,
                       const std::string& file, const std::string& pointer) {
  if (w.layers.empty()) return 0;
  std::map<std::string, std::size_t> layer_of;
  for (std::size_t i = 0; i < w.layers.size(); ++i) layer_of.emplace(w.layers[i].name, i);
  // Layers whose products the capture cannot shape keep their /1 work.
  std::set<std::size_t> keeps_own;
  const auto layer_index = [&](const json& op) {
    auto it = layer_of.find(op.at("module").get<std::string>());
    return it == layer_of.end() ? w.layers.size() - 1 : it->second;
  };
  for (const json& op : ops) {
    const std::string kind = op.at("kind").get<std::string>();
    if (kind == "conv" || kind == "attention") keeps_own.insert(layer_index(op));
  }
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    if (keeps_own.count(i) != 0) continue;
    w.layers[i].gemms.clear();
    w.layers[i].elementwise.clear();
  }
  const double b = static_cast<double>(example_batch);
  int charged = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const json& op = ops[i];
    const std::string phase = op.at("phase").get<std::string>();
    if (phase == "optimizer") continue;
    const std::string kind = op.at("kind").get<std::string>();
    if (kind == "view" || kind == "alloc") continue;
    const std::size_t li = layer_index(op);
    if (keeps_own.count(li) != 0) continue;
    Layer& layer = w.layers[li];
    const GemmRole role = phase == "forward" ? GemmRole::kForward : GemmRole::kInputGrad;
    if (kind == "gemm") {
      if (!op.contains("gemm")) {
        throw InputError(file, pointer + "/" + std::to_string(i) + "/gemm",
                         "the product's extents (a gemm op)", "nothing");
      }
      layer.gemms.push_back(captured_gemm(w, layer, op, role, example_batch));
    } else {
      const double bytes = op.at("bytes_read").get<double>() + op.at("bytes_written").get<double>();
      layer.elementwise.push_back({layer.name + "." + op.at("op").get<std::string>(), role,
                                   bytes / b, op.at("flops").get<double>() / b});
    }
    ++charged;
  }
  return charged;
}

}  // namespace ddpsim::model::detail
