#include "model/builders/mlp.hpp"

#include <utility>

#include "model/error.hpp"

namespace ddpsim::model {

Workload build_mlp(const MlpOptions& opts) {
  DDPSIM_ASSERT(opts.widths.size() >= 2, "an MLP needs at least an input and an output width");
  Workload w;
  w.name = "mlp";
  w.source = "ddpsim MLP builder: nn.Sequential of nn.Linear with element-wise activations";
  const std::size_t n_linear = opts.widths.size() - 1;
  for (std::size_t i = 0; i < n_linear; ++i) {
    const std::int64_t in = opts.widths[i];
    const std::int64_t out = opts.widths[i + 1];
    Layer l;
    l.name = "fc" + std::to_string(i);
    l.kind = "linear";
    w.layers.push_back(std::move(l));
    const int li = static_cast<int>(w.layers.size()) - 1;
    add_tensor(w, li, "fc" + std::to_string(i) + ".weight", {out, in});
    if (opts.bias) add_tensor(w, li, "fc" + std::to_string(i) + ".bias", {out});
    Layer& layer = w.layers.back();
    // The first layer's input is the data batch, which needs no gradient.
    add_linear_gemms(layer, layer.name, 1, in, out, /*needs_input_grad=*/i > 0);
    // Saved for backward: the layer's input (for the weight gradient), fp32.
    layer.activation_bytes_per_sample = 4.0 * static_cast<double>(in);
    const bool last = i + 1 == n_linear;
    if (!last && opts.activation != "none") {
      // Activation forward reads and writes `out` floats; backward reads grad + saved, writes grad.
      layer.elementwise.push_back({layer.name + "." + opts.activation, GemmRole::kForward,
                                   8.0 * static_cast<double>(out), static_cast<double>(out)});
      layer.elementwise.push_back({layer.name + "." + opts.activation + ".bwd",
                                   GemmRole::kInputGrad, 12.0 * static_cast<double>(out),
                                   static_cast<double>(out)});
      layer.activation_bytes_per_sample += 4.0 * static_cast<double>(out);
    }
  }
  w.check();
  return w;
}

Workload build_from_layers(const std::vector<LumpLayer>& layers) {
  Workload w;
  w.name = "layers";
  w.source = "scenario-provided layer list (one parameter tensor per layer)";
  for (const LumpLayer& in : layers) {
    Layer l;
    l.name = in.name;
    l.kind = "lump";
    l.explicit_fwd_flops_per_sample = in.fwd_flops_per_sample;
    l.activation_bytes_per_sample = in.activation_bytes_per_sample;
    w.layers.push_back(std::move(l));
    const int li = static_cast<int>(w.layers.size()) - 1;
    if (in.params > 0) add_tensor(w, li, in.name + ".weight", {in.params});
  }
  w.check();
  return w;
}

}  // namespace ddpsim::model
