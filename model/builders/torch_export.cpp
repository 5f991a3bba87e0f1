#include "model/builders/torch_export.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/builders/detail/torch_ops.hpp"
#include "model/error.hpp"
#include "model/schema.hpp"

namespace ddpsim::model {

using nlohmann::json;

namespace {

constexpr const char* kFormat = "ddpsim_torch/1";
// /2: /1 plus the captured aten ops of one training step (ops, ops_capture).
constexpr const char* kFormatOps = "ddpsim_torch/2";

// One row per key of the config: pointer, type, required, minimum (numbers: the value; none:
// -1), allowed strings, help.
struct ConfigKey {
  const char* pointer;
  KeyType type;
  bool required;
  double minimum;
  std::vector<std::string> allowed;
  const char* help;
};

const KeyTable& config_keys() {
  static const KeyTable table = [] {
    using enum KeyType;
    const std::vector<std::string> dtypes = {"fp32", "fp16", "bf16"};
    const std::vector<ConfigKey> rows = {
        {"/format", kString, true, -1, {kFormat, kFormatOps}, "the exporter's format"},
        {"/torch_version", kString, false, -1, {}, "the PyTorch that ran the module"},
        {"/example_batch", kInteger, true, 1, {}, "samples in the example inputs"},
        {"/activation_dtype", kString, false, -1, dtypes, "dtype of the saved activations"},
        {"/layers", kArray, true, -1, {}, "modules in named_modules() order"},
        {"/layers/*", kObject, false, -1, {}, "one module"},
        {"/layers/*/name", kString, true, -1, {}, "the module's name"},
        {"/layers/*/module", kString, false, -1, {}, "its class"},
        {"/layers/*/kind", kString, false, -1, {}, "linear, conv, attention, norm, ..."},
        {"/layers/*/calls", kInteger, false, 0, {}, "forward calls in one step"},
        {"/layers/*/gemms", kArray, false, -1, {}, "its forward matrix products, per sample"},
        {"/layers/*/gemms/*", kObject, false, -1, {}, "C[m,n] = A[m,k] B[k,n], count times"},
        {"/layers/*/gemms/*/name", kString, true, -1, {}, "the product's name"},
        {"/layers/*/gemms/*/m", kInteger, true, 0, {}, "rows of A and C per sample"},
        {"/layers/*/gemms/*/n", kInteger, true, 0, {}, "columns of B and C per sample"},
        {"/layers/*/gemms/*/k", kInteger, true, 0, {}, "the reduced extent per sample"},
        {"/layers/*/gemms/*/count", kInteger, true, 1, {}, "independent instances per sample"},
        {"/layers/*/gemms/*/batch_dim",
         kString,
         true,
         -1,
         {"m", "n", "k", "count"},
         "the extent the batch multiplies"},
        {"/layers/*/gemms/*/a_grad", kBoolean, true, -1, {}, "A's gradient is computed"},
        {"/layers/*/gemms/*/b_grad", kBoolean, true, -1, {}, "B's gradient is computed"},
        {"/layers/*/gemms/*/b_is_weight", kBoolean, true, -1, {}, "B is a parameter"},
        {"/layers/*/other_flops_per_sample", kNumber, false, 0, {}, "FLOPs not in gemms"},
        {"/layers/*/elementwise_bytes_per_sample", kNumber, false, 0, {}, "forward bytes moved"},
        {"/layers/*/elementwise_flops_per_sample", kNumber, false, 0, {}, "their FLOPs"},
        {"/layers/*/activation_bytes_per_sample", kNumber, false, 0, {}, "kept for backward"},
        {"/tensors", kArray, true, -1, {}, "parameters in named_parameters() order"},
        {"/tensors/*", kObject, false, -1, {}, "one parameter"},
        {"/tensors/*/name", kString, true, -1, {}, "its qualified name"},
        {"/tensors/*/module", kString, false, -1, {}, "the module that owns it"},
        {"/tensors/*/layer", kInteger, true, 0, {}, "index of its layer"},
        {"/tensors/*/shape", kArray, true, -1, {}, "its shape"},
        {"/tensors/*/shape/*", kInteger, false, 0, {}, "an extent"},
        {"/tensors/*/dtype", kString, true, -1, dtypes, "its dtype"},
        {"/tensors/*/requires_grad", kBoolean, true, -1, {}, "DDP buckets it"},
        {"/tensors/*/tied_to", kInteger, false, 0, {}, "the earlier listing of this Parameter"},
        {"/buffers", kArray, false, -1, {}, "registered buffers"},
        {"/buffers/*", kObject, false, -1, {}, "one buffer"},
        {"/buffers/*/name", kString, true, -1, {}, "its qualified name"},
        {"/buffers/*/layer", kInteger, true, 0, {}, "index of its layer"},
        {"/buffers/*/shape", kArray, false, -1, {}, "its shape"},
        {"/buffers/*/shape/*", kInteger, false, 0, {}, "an extent"},
        {"/buffers/*/dtype", kString, false, -1, {}, "its dtype"},
        {"/buffers/*/bytes", kInteger, true, 0, {}, "its size"},
        {"/grad_ready_order", kArray, false, -1, {}, "tensor indices, gradient-ready order"},
        {"/grad_ready_order/*", kInteger, false, 0, {}, "a tensor index"},
        {"/notes", kArray, false, -1, {}, "what the exporter could not capture"},
        {"/notes/*", kString, false, -1, {}, "one note"},
        {"/ops", kArray, false, -1, {}, "the aten ops of one training step (format /2)"},
        {"/ops/*", kObject, false, -1, {}, "one op"},
        {"/ops/*/op", kString, true, -1, {}, "aten::name"},
        {"/ops/*/overload", kString, false, -1, {}, "the overload"},
        {"/ops/*/phase",
         kString,
         true,
         -1,
         {"forward", "backward", "recompute", "optimizer"},
         "when it runs"},
        {"/ops/*/module", kString, true, -1, {}, "the module it is charged to"},
        {"/ops/*/kind",
         kString,
         true,
         -1,
         {"gemm", "conv", "attention", "view", "alloc", "fill", "copy", "reduction", "elementwise"},
         "what kind of kernel"},
        {"/ops/*/inputs", kArray, false, -1, {}, "its tensor arguments"},
        {"/ops/*/inputs/*", kObject, false, -1, {}, "one tensor"},
        {"/ops/*/inputs/*/shape", kArray, false, -1, {}, "its shape"},
        {"/ops/*/inputs/*/shape/*", kInteger, false, 0, {}, "an extent"},
        {"/ops/*/inputs/*/stride", kArray, false, -1, {}, "its strides"},
        {"/ops/*/inputs/*/stride/*", kInteger, false, 0, {}, "a stride"},
        {"/ops/*/inputs/*/dtype", kString, false, -1, {}, "its dtype"},
        {"/ops/*/outputs", kArray, false, -1, {}, "its results"},
        {"/ops/*/outputs/*", kObject, false, -1, {}, "one tensor"},
        {"/ops/*/outputs/*/shape", kArray, false, -1, {}, "its shape"},
        {"/ops/*/outputs/*/shape/*", kInteger, false, 0, {}, "an extent"},
        {"/ops/*/outputs/*/stride", kArray, false, -1, {}, "its strides"},
        {"/ops/*/outputs/*/stride/*", kInteger, false, 0, {}, "a stride"},
        {"/ops/*/outputs/*/dtype", kString, false, -1, {}, "its dtype"},
        {"/ops/*/bytes_read", kNumber, true, 0, {}, "bytes it reads"},
        {"/ops/*/bytes_written", kNumber, true, 0, {}, "bytes it writes"},
        {"/ops/*/flops", kNumber, true, 0, {}, "its FLOPs"},
        {"/ops/*/gemm", kObject, false, -1, {}, "C[m,n] = A[m,k] B[k,n], count times"},
        {"/ops/*/gemm/m", kInteger, true, 0, {}, "rows of A and C"},
        {"/ops/*/gemm/n", kInteger, true, 0, {}, "columns of B and C"},
        {"/ops/*/gemm/k", kInteger, true, 0, {}, "the reduced extent"},
        {"/ops/*/gemm/count", kInteger, true, 1, {}, "batched instances"},
        {"/ops/*/gemm/a", kString, true, -1, {"N", "T"}, "A transposed"},
        {"/ops/*/gemm/b", kString, true, -1, {"N", "T"}, "B transposed"},
        {"/ops/*/engine", kBoolean, false, -1, {}, "run by the autograd engine"},
        {"/ops_capture", kObject, false, -1, {}, "the capture's totals (free form)"},
    };
    KeyTable t;
    t.name = "torch_export config";
    for (const ConfigKey& row : rows) {
      KeySpec& k = t.keys.emplace_back();
      k.pointer = row.pointer;
      k.type = row.type;
      k.required = row.required;
      if (row.minimum >= 0) k.minimum = row.minimum;
      // Indices and counts are read into int, extents are cuBLAS's int m, n, k: at most
      // INT32_MAX, refused instead of truncated (what several extents multiply up to is
      // check_model_size's).
      if (row.type == KeyType::kInteger) k.maximum = 2147483647.0;
      k.allowed = row.allowed;
      k.help = row.help;
      if (std::string(row.pointer) == "/ops_capture") k.pattern = "free";
    }
    return t;
  }();
  return table;
}

// The batch dimension of a backward GEMM whose extents are the forward's permuted so that
// (M, N, K) of it are the forward's (`from_m`, `from_n`, `from_k`).
BatchDim permuted(BatchDim forward, BatchDim from_m, BatchDim from_n, BatchDim from_k) {
  if (forward == BatchDim::kCount) return BatchDim::kCount;
  if (forward == from_m) return BatchDim::kM;
  if (forward == from_n) return BatchDim::kN;
  DDPSIM_ASSERT(forward == from_k, "a GEMM's batch dimension is one of its extents");
  return BatchDim::kK;
}

void add_product_gemms(Layer& layer, const json& g) {
  const std::string name = layer.name + "." + g.at("name").get<std::string>();
  const std::int64_t m = g.at("m").get<std::int64_t>();
  const std::int64_t n = g.at("n").get<std::int64_t>();
  const std::int64_t k = g.at("k").get<std::int64_t>();
  const std::int64_t count = g.at("count").get<std::int64_t>();
  // The schema admits m, n, k and count only.
  const BatchDim dim =
      parse_batch_dim(g.at("batch_dim").get<std::string>()).value_or(BatchDim::kCount);
  // The transposes are nn.Linear's (add_linear_gemms): B is stored [n, k].
  layer.gemms.push_back({name + ".fwd", GemmRole::kForward, {m, n, k, count, false, true}, dim});
  if (g.at("a_grad").get<bool>()) {
    // dA[m,k] = dC[m,n] B^T[n,k]
    layer.gemms.push_back({name + ".dgrad",
                           GemmRole::kInputGrad,
                           {m, k, n, count, false, false},
                           permuted(dim, BatchDim::kM, BatchDim::kK, BatchDim::kN)});
  }
  if (g.at("b_grad").get<bool>()) {
    // dB^T[n,k] = dC^T[n,m] A[m,k]
    const GemmRole role =
        g.at("b_is_weight").get<bool>() ? GemmRole::kWeightGrad : GemmRole::kInputGrad;
    layer.gemms.push_back({name + ".wgrad",
                           role,
                           {n, k, m, count, true, false},
                           permuted(dim, BatchDim::kN, BatchDim::kK, BatchDim::kM)});
  }
}

Layer make_layer(const json& l) {
  Layer layer;
  layer.name = l.at("name").get<std::string>();
  layer.kind = l.value("kind", std::string("module"));
  if (l.contains("gemms")) {
    for (const json& g : l.at("gemms")) add_product_gemms(layer, g);
  }
  const double other = l.value("other_flops_per_sample", 0.0);
  if (other > 0) {
    layer.elementwise.push_back({layer.name + ".other", GemmRole::kForward, 0, other});
    layer.elementwise.push_back({layer.name + ".other.bwd", GemmRole::kInputGrad, 0, 2 * other});
  }
  const double bytes = l.value("elementwise_bytes_per_sample", 0.0);
  const double flops = l.value("elementwise_flops_per_sample", 0.0);
  if (bytes > 0 || flops > 0) {
    layer.elementwise.push_back({layer.name + ".elementwise", GemmRole::kForward, bytes, flops});
    layer.elementwise.push_back(
        {layer.name + ".elementwise.bwd", GemmRole::kInputGrad, 1.5 * bytes, flops});
  }
  layer.activation_bytes_per_sample = l.value("activation_bytes_per_sample", 0.0);
  return layer;
}

int layer_index(const json& entry, const std::string& file, const std::string& pointer,
                std::size_t layers) {
  const int li = entry.at("layer").get<int>();
  if (li >= static_cast<int>(layers)) {
    throw InputError(file, pointer + "/layer", "a layer index below " + std::to_string(layers),
                     std::to_string(li));
  }
  return li;
}

}  // namespace

Workload build_torch_export(const json& config, const std::string& file) {
  validate(config, config_keys(), file);
  Workload w;
  w.activation_dtype = *parse_dtype(config.value("activation_dtype", std::string("fp32")));
  for (const json& l : config.at("layers")) w.layers.push_back(make_layer(l));

  // File index -> workload index (-1: left out, it does not require grad).
  const json& tensors = config.at("tensors");
  std::vector<int> index_of(tensors.size(), -1);
  int last_layer = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const json& t = tensors[i];
    const std::string pointer = "/tensors/" + std::to_string(i);
    const int li = layer_index(t, file, pointer, w.layers.size());
    if (li < last_layer) {
      throw InputError(
          file, pointer + "/layer",
          "layers in the order of the tensors (at least " + std::to_string(last_layer) + ")",
          std::to_string(li));
    }
    last_layer = li;
    int tied = -1;
    if (t.contains("tied_to")) {
      const auto target = t.at("tied_to").get<std::size_t>();
      if (target >= i || tensors[target].contains("tied_to")) {
        throw InputError(file, pointer + "/tied_to", "the index of an earlier, untied tensor",
                         std::to_string(target));
      }
      tied = index_of[target];
      if (tied < 0) continue;  // tied to a frozen parameter: frozen too
    } else if (!t.at("requires_grad").get<bool>()) {
      continue;
    }
    std::vector<std::int64_t> shape = t.at("shape").get<std::vector<std::int64_t>>();
    index_of[i] = add_tensor(w, li, t.at("name").get<std::string>(), std::move(shape),
                             *parse_dtype(t.at("dtype").get<std::string>()));
    w.tensors.back().tied_to = tied;
  }

  if (config.contains("buffers")) {
    const json& buffers = config.at("buffers");
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      const int li =
          layer_index(buffers[i], file, "/buffers/" + std::to_string(i), w.layers.size());
      w.layers[static_cast<std::size_t>(li)].buffer_bytes += buffers[i].at("bytes").get<double>();
    }
  }

  if (config.contains("grad_ready_order")) {
    std::vector<int> untied;
    for (std::size_t i = 0; i < w.tensors.size(); ++i) {
      if (w.tensors[i].tied_to < 0) untied.push_back(static_cast<int>(i));
    }
    const json& order = config.at("grad_ready_order");
    for (std::size_t i = 0; i < order.size(); ++i) {
      const auto at = order[i].get<std::size_t>();
      if (at >= index_of.size() || index_of[at] < 0 ||
          w.tensors[static_cast<std::size_t>(index_of[at])].tied_to >= 0) {
        throw InputError(file, "/grad_ready_order/" + std::to_string(i),
                         "the index of an untied tensor that requires grad", std::to_string(at));
      }
      w.grad_ready_order.push_back(index_of[at]);
    }
    std::vector<int> sorted = w.grad_ready_order;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != untied) {
      throw InputError(file, "/grad_ready_order",
                       "every untied tensor that requires grad exactly once (" +
                           std::to_string(untied.size()) + " of them)",
                       std::to_string(order.size()) + " entries");
    }
  }
  if (config.at("format").get<std::string>() == kFormatOps && !config.contains("ops")) {
    throw InputError(file, "/ops", "the captured ops (format " + std::string(kFormatOps) + ")",
                     "nothing");
  }
  if (config.contains("ops")) {
    if (config.at("format").get<std::string>() != kFormatOps) {
      throw InputError(file, "/format", std::string("\"") + kFormatOps + "\" with an ops array",
                       config.at("format").dump());
    }
    detail::apply_captured_ops(w, config.at("ops"), config.at("example_batch").get<std::int64_t>(),
                               file, "/ops");
  }
  w.check();
  return w;
}

}  // namespace ddpsim::model
