#include "model/workload/float8.hpp"

namespace ddpsim::model {

const char* float8_recipe_name(Float8Recipe r) {
  switch (r) {
    case Float8Recipe::kTensorwise:
      return "tensorwise";
    case Float8Recipe::kRowwise:
      return "rowwise";
    case Float8Recipe::kRowwiseWithGwHp:
      return "rowwise_with_gw_hp";
  }
  return "tensorwise";
}

std::optional<Float8Recipe> parse_float8_recipe(const std::string& name) {
  for (Float8Recipe r :
       {Float8Recipe::kTensorwise, Float8Recipe::kRowwise, Float8Recipe::kRowwiseWithGwHp}) {
    if (name == float8_recipe_name(r)) return r;
  }
  return std::nullopt;
}

std::string gemm_module(const Gemm& g) {
  const auto dot = g.name.rfind('.');
  return dot == std::string::npos ? g.name : g.name.substr(0, dot);
}

std::vector<bool> float8_gemms(const Layer& l, const Float8Config& c) {
  std::vector<bool> out(l.gemms.size(), false);
  // The converted modules, decided on their forward GEMM (nn.Linear: Y = X W^T, W [out, in]:
  // M rows, N = out, K = in, B transposed).
  std::vector<std::string> converted;
  for (const Gemm& g : l.gemms) {
    if (g.role != GemmRole::kForward || g.kernel != GemmKernel::kLibrary) continue;
    if (g.per_sample.count != 1 || !g.per_sample.trans_b || g.per_sample.trans_a) continue;
    if (g.per_sample.n % 16 != 0 || g.per_sample.k % 16 != 0) continue;
    const std::string module = gemm_module(g);
    bool filtered = false;
    for (const std::string& f : c.filter_fqns) {
      filtered = filtered || (!f.empty() && module.find(f) != std::string::npos);
    }
    if (!filtered) converted.push_back(module);
  }
  for (std::size_t i = 0; i < l.gemms.size(); ++i) {
    const Gemm& g = l.gemms[i];
    if (g.kernel != GemmKernel::kLibrary) continue;
    const std::string module = gemm_module(g);
    for (const std::string& m : converted) out[i] = out[i] || m == module;
  }
  return out;
}

std::vector<double> float8_weight_elements(const Workload& w, const Float8Config& c,
                                           std::vector<int>* weights) {
  std::vector<double> out(w.layers.size(), 0.0);
  if (weights != nullptr) weights->assign(w.layers.size(), 0);
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const Layer& l = w.layers[i];
    const std::vector<bool> f8 = float8_gemms(l, c);
    const auto owned = [&](const std::string& module) {
      for (int t = l.first_tensor; t < l.first_tensor + l.tensor_count; ++t) {
        const ParamTensor& p = w.tensors[static_cast<std::size_t>(t)];
        if (p.name == module + ".weight") return p.tied_to < 0;
      }
      return false;
    };
    for (std::size_t j = 0; j < l.gemms.size(); ++j) {
      const Gemm& g = l.gemms[j];
      // The weight [out, in] = [N, K] of the forward GEMM; a tied weight is the owner's group's
      // (and its embedding reads it in high precision).
      if (f8[j] && g.role == GemmRole::kForward && owned(gemm_module(g))) {
        out[i] += static_cast<double>(g.per_sample.n) * static_cast<double>(g.per_sample.k);
        if (weights != nullptr) ++(*weights)[i];
      }
    }
  }
  return out;
}

CastCost float8_cast_cost(bool compiled) {
  return compiled ? CastCost{5.0, 2} : CastCost{29.0, 11};
}

}  // namespace ddpsim::model
