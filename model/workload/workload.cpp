#include "model/workload/workload.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "model/error.hpp"

namespace ddpsim::model {

int dtype_bytes(DType t) {
  switch (t) {
    case DType::kFp32:
      return 4;
    case DType::kFp16:
    case DType::kBf16:
      return 2;
    case DType::kFp8:
      return 1;
    case DType::kInt64:
      return 8;
  }
  DDPSIM_ASSERT(false, "unknown dtype");
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFp32:
      return "fp32";
    case DType::kFp16:
      return "fp16";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8:
      return "fp8";
    case DType::kInt64:
      return "int64";
  }
  DDPSIM_ASSERT(false, "unknown dtype");
}

std::optional<DType> parse_dtype(const std::string& name) {
  for (DType t : {DType::kFp32, DType::kFp16, DType::kBf16, DType::kFp8, DType::kInt64}) {
    if (name == dtype_name(t)) return t;
  }
  return std::nullopt;
}

const char* attention_impl_name(AttentionImpl a) {
  switch (a) {
    case AttentionImpl::kSdpa:
      return "sdpa";
    case AttentionImpl::kFlash:
      return "flash";
    case AttentionImpl::kEager:
      return "eager";
    case AttentionImpl::kTriton:
      return "triton";
  }
  DDPSIM_ASSERT(false, "unknown attention implementation");
}

std::optional<BatchDim> parse_batch_dim(const std::string& name) {
  if (name == "m") return BatchDim::kM;
  if (name == "n") return BatchDim::kN;
  if (name == "k") return BatchDim::kK;
  if (name == "count") return BatchDim::kCount;
  return std::nullopt;
}

std::optional<AttentionImpl> parse_attention_impl(const std::string& name) {
  for (AttentionImpl a : {AttentionImpl::kSdpa, AttentionImpl::kFlash, AttentionImpl::kEager,
                          AttentionImpl::kTriton}) {
    if (name == attention_impl_name(a)) return a;
  }
  return std::nullopt;
}

const char* gemm_role_name(GemmRole r) {
  switch (r) {
    case GemmRole::kForward:
      return "forward";
    case GemmRole::kInputGrad:
      return "input_grad";
    case GemmRole::kWeightGrad:
      return "weight_grad";
  }
  DDPSIM_ASSERT(false, "unknown gemm role");
}

std::int64_t ParamTensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) return -1;  // Workload::check() names it
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  }
  return n;
}

GemmShape Gemm::at_batch(std::int64_t batch) const {
  GemmShape s = per_sample;
  switch (batch_dim) {
    case BatchDim::kM:
      s.m *= batch;
      break;
    case BatchDim::kN:
      s.n *= batch;
      break;
    case BatchDim::kK:
      s.k *= batch;
      break;
    case BatchDim::kCount:
      s.count *= batch;
      break;
  }
  return s;
}

double Layer::fwd_flops_per_sample() const {
  if (explicit_fwd_flops_per_sample > 0) return explicit_fwd_flops_per_sample;
  double f = 0;
  for (const Gemm& g : gemms) {
    if (g.role == GemmRole::kForward) f += g.flops_per_sample();
  }
  for (const ElementwiseOp& e : elementwise) {
    if (e.role == GemmRole::kForward) f += e.flops_per_sample;
  }
  return f;
}

double Layer::bwd_flops_per_sample() const {
  if (explicit_fwd_flops_per_sample > 0) return 2.0 * explicit_fwd_flops_per_sample;
  double f = 0;
  for (const Gemm& g : gemms) {
    if (g.role != GemmRole::kForward) f += g.flops_per_sample();
  }
  for (const ElementwiseOp& e : elementwise) {
    if (e.role != GemmRole::kForward) f += e.flops_per_sample;
  }
  return f;
}

std::int64_t Workload::param_count() const {
  std::int64_t n = 0;
  for (const ParamTensor& t : tensors) {
    if (t.tied_to < 0 && __builtin_add_overflow(n, t.numel(), &n)) return INT64_MAX;
  }
  return n;
}

void check_model_size(const Workload& w, const std::string& file, const std::string& pointer) {
  const std::int64_t n = w.param_count();
  if (n <= kMaxModelParameters) return;
  char got[64];
  if (n == INT64_MAX) {
    std::snprintf(got, sizeof got, "more than 9.2e18 parameters (int64 overflows)");
  } else {
    std::snprintf(got, sizeof got, "%.3g parameters", static_cast<double>(n));
  }
  throw InputError(file, pointer, "a model of at most 1e15 parameters", got);
}

double Workload::fwd_flops_per_sample() const {
  double f = 0;
  for (const Layer& l : layers) f += l.fwd_flops_per_sample();
  return f;
}

double Workload::bwd_flops_per_sample() const {
  double f = 0;
  for (const Layer& l : layers) f += l.bwd_flops_per_sample();
  return f;
}

double Workload::activation_bytes_per_sample() const {
  double b = 0;
  for (const Layer& l : layers) b += l.activation_bytes_per_sample;
  return b;
}

double Workload::buffer_bytes() const {
  double b = 0;
  for (const Layer& l : layers) b += l.buffer_bytes;
  return b;
}

void Workload::check() const {
  int next = 0;
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const Layer& l = layers[li];
    DDPSIM_ASSERT(l.first_tensor == next || l.tensor_count == 0,
                  "layer " + l.name + " does not start where the previous layer ended");
    if (l.tensor_count > 0) next = l.first_tensor + l.tensor_count;
    for (int t = l.first_tensor; t < l.first_tensor + l.tensor_count; ++t) {
      DDPSIM_ASSERT(tensors[static_cast<std::size_t>(t)].layer == static_cast<int>(li),
                    "tensor " + tensors[static_cast<std::size_t>(t)].name + " in the wrong layer");
    }
  }
  DDPSIM_ASSERT(next == static_cast<int>(tensors.size()), "layers do not cover every tensor");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    DDPSIM_ASSERT(tensors[i].tied_to < static_cast<int>(i),
                  "tied_to must point to an earlier tensor");
    DDPSIM_ASSERT(tensors[i].numel() >= 0, "negative tensor size");
  }
  if (!grad_ready_order.empty()) {
    std::vector<int> untied;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].tied_to < 0) untied.push_back(static_cast<int>(i));
    }
    std::vector<int> sorted = grad_ready_order;
    std::sort(sorted.begin(), sorted.end());
    DDPSIM_ASSERT(sorted == untied, "grad_ready_order must list every untied tensor once");
  }
}

int add_tensor(Workload& w, int layer, std::string name, std::vector<std::int64_t> shape,
               DType dtype) {
  DDPSIM_ASSERT(layer >= 0 && layer < static_cast<int>(w.layers.size()), "no such layer");
  const int index = static_cast<int>(w.tensors.size());
  ParamTensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.layer = layer;
  w.tensors.push_back(std::move(t));
  Layer& l = w.layers[static_cast<std::size_t>(layer)];
  if (l.tensor_count == 0) l.first_tensor = index;
  ++l.tensor_count;
  return index;
}

void add_linear_gemms(Layer& layer, const std::string& name, std::int64_t rows, std::int64_t in,
                      std::int64_t out, bool needs_input_grad) {
  // nn.Linear stores W as [out, in] and computes Y = X W^T.
  layer.gemms.push_back(
      {name + ".fwd", GemmRole::kForward, {rows, out, in, 1, false, true}, BatchDim::kM});
  if (needs_input_grad) {
    layer.gemms.push_back(
        {name + ".dgrad", GemmRole::kInputGrad, {rows, in, out, 1, false, false}, BatchDim::kM});
  }
  layer.gemms.push_back(
      {name + ".wgrad", GemmRole::kWeightGrad, {out, in, rows, 1, true, false}, BatchDim::kK});
}

}  // namespace ddpsim::model
