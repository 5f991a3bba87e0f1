// workload.hpp: what is trained, at the granularity the framework sees it.
//
// A Workload is an ordered list of parameter tensors (in model.parameters() order, as PyTorch
// registers them) and of layers, each layer holding the operations it runs: forward GEMMs and
// the two backward GEMMs of each (input gradient, weight gradient) with their exact M, N, K,
// transposes and batch scaling, memory-bound element-wise ops, and the activation bytes kept for
// backward. PyTorch never splits a tensor across buckets, PowerSGD needs each matrix's shape and
// calibration needs each GEMM's shape, so a lump of parameters per layer is not enough.
//
// Shapes are stored per sample; `at_batch(b)` gives the shape the library runs at micro-batch b.
//
//   Workload w = build_mlp({1024, 4096, 1024});
//   w.param_count();                  // 1024*4096 + 4096 + 4096*1024 + 1024
//   w.layers[0].gemms[0].at_batch(32) // {m=32, n=4096, k=1024}: Y = X W^T
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::model {

/// Element types of tensors and of GEMM operands.
enum class DType { kFp32, kFp16, kBf16, kFp8, kInt64 };

/// Bytes per element.
int dtype_bytes(DType t);
/// "fp32", "fp16", "bf16", "fp8", "int64".
const char* dtype_name(DType t);
/// Inverse of dtype_name; std::nullopt for an unknown name.
std::optional<DType> parse_dtype(const std::string& name);

/// One parameter tensor, e.g. "layer1.0.conv1.weight" of shape {64, 64, 1, 1}.
struct ParamTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  DType dtype =
      DType::kFp32;  ///< dtype as declared in the model (training precision may change it)
  int layer = 0;     ///< index into Workload::layers
  /// Index of the tensor this one is tied to (e.g. lm_head.weight -> wte.weight), or -1.
  /// A tied tensor is the same Parameter: it is not counted, not bucketed, has no gradient of
  /// its own; its layer still runs the GEMMs that use it.
  int tied_to = -1;

  /// The product of the extents, saturating at INT64_MAX when it overflows (a hostile config's
  /// 9e18 x 768 embedding): check_model_size() then refuses the model with the user's pointer
  /// instead of a wrapped, negative size.
  std::int64_t numel() const;
  /// True for matrices (2-D or more) that PowerSGD may compress; 1-D tensors never are.
  bool is_matrix() const { return shape.size() >= 2; }
};

/// Which pass a GEMM belongs to.
enum class GemmRole { kForward, kInputGrad, kWeightGrad };
const char* gemm_role_name(GemmRole r);

/// How attention runs (scenario key model.attention). PyTorch's scaled_dot_product_attention
/// (sdpa, what Hugging Face models call by default) and the flash-attn package (flash) run one
/// fused kernel: the s x s scores live in on-chip memory only, nothing of size s^2 is written or
/// kept for backward, and the backward recomputes QK^T. eager materialises the scores, streams
/// them through softmax and dropout and keeps them (Korthikanti et al. 2022's 5as^2).
/// triton is the Triton port of FlashAttention that MosaicML's MPT runs with attn_impl: triton
/// (llm-foundry llmfoundry/models/layers/flash_attn_triton.py): fused like flash, nothing of size
/// s^2 kept, at its own (slower) kernel rate.
enum class AttentionImpl { kSdpa, kFlash, kEager, kTriton };
/// "sdpa", "flash", "eager", "triton".
const char* attention_impl_name(AttentionImpl a);
/// Inverse of attention_impl_name; std::nullopt for an unknown name.
std::optional<AttentionImpl> parse_attention_impl(const std::string& name);

/// Which kernel runs a GEMM: a library GEMM (cuBLAS, BLAS), or one matrix product inside a fused
/// attention kernel (costed at the attention kernel's measured rate, never by a GEMM profile).
enum class GemmKernel { kLibrary, kFusedAttention };

/// Which dimension grows with the micro-batch size.
enum class BatchDim { kM, kN, kK, kCount };
/// "m", "n", "k" or "count" (model files' and profiles' `batch_dim`); nullopt otherwise.
std::optional<BatchDim> parse_batch_dim(const std::string& name);

/// Shape of one GEMM (C[M,N] = op(A)[M,K] * op(B)[K,N], `count` independent instances).
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0, count = 1;
  bool trans_a = false, trans_b = false;
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(count);
  }
  bool operator==(const GemmShape&) const = default;
};

/// A GEMM of a layer, stored per sample.
struct Gemm {
  std::string name;  ///< e.g. "fc1.fwd", "fc1.dgrad", "fc1.wgrad"
  GemmRole role = GemmRole::kForward;
  GemmShape per_sample;  ///< the shape at batch 1 (the batch dimension at its per-sample extent)
  BatchDim batch_dim = BatchDim::kM;  ///< which extent is multiplied by the micro-batch
  GemmKernel kernel = GemmKernel::kLibrary;
  /// FLOPs the kernel really executes per model FLOP of this product: a causal fused kernel skips
  /// the masked half of the scores (0.5), a fused backward recomputes QK^T (its four products
  /// execute 5/4 of their model FLOPs). Model FLOPs (MFU's convention) stay dense.
  double executed_flop_factor = 1.0;
  GemmShape at_batch(std::int64_t batch) const;
  double flops_per_sample() const { return per_sample.flops(); }
};

/// A memory-bound operation (activation function, norm, softmax, residual add, loss...).
struct ElementwiseOp {
  std::string name;
  GemmRole role = GemmRole::kForward;  ///< kForward, or kInputGrad for its backward
  double bytes_per_sample = 0;         ///< bytes read + written per sample
  double flops_per_sample = 0;
  /// Kernels it launches (a composite such as HF's RMSNorm runs several): each pays the GPU's
  /// per-kernel floor (GpuSpec::kernel_floor_s) on top of its bytes.
  int kernels = 1;
  /// Under torch.compile (training.compile): what the op costs once Inductor has fused it with
  /// its neighbours into one kernel that reads the region's inputs once and writes its outputs
  /// once (its intermediates stay in registers); 0 kernels when it joins a kernel another op
  /// of the region launches. -1: as in eager (no fusion the builder can state).
  double compiled_bytes_per_sample = -1;
  int compiled_kernels = -1;
};

/// A layer: the unit of compute scheduling (forward in order, backward in reverse).
struct Layer {
  std::string name;
  std::string kind;      ///< "linear", "conv", "attention", "mlp", "norm", "embedding", ...
  int first_tensor = 0;  ///< index of its first parameter tensor in Workload::tensors
  int tensor_count = 0;  ///< its parameter tensors are [first_tensor, first_tensor + count)
  std::vector<Gemm> gemms;
  std::vector<ElementwiseOp> elementwise;
  double activation_bytes_per_sample = 0;  ///< saved for backward, in the compute dtype's bytes
                                           ///< as built (fp32 unless the builder says otherwise)
  double buffer_bytes = 0;                 ///< registered buffers (BatchNorm running stats), fp32
  /// A FLOP count given directly (layers of the "layers" scenario form have no GEMM shapes).
  /// When > 0 it replaces the GEMMs' forward FLOPs; backward is 2x forward.
  double explicit_fwd_flops_per_sample = 0;
  /// A convolution's input + output elements per sample (0 for other layers), and whether its
  /// backward computes the input gradient: what cuDNN transposes when the tensors are NCHW
  /// (simulator/analytic/kernel_rates.hpp nchw_transpose_bytes).
  double conv_io_elements_per_sample = 0;
  bool conv_input_grad = false;

  double fwd_flops_per_sample() const;
  double bwd_flops_per_sample() const;
};

/// The whole model.
struct Workload {
  std::string name;
  std::string source;  ///< where the architecture comes from (paper, HF repo, torchvision)
  std::vector<ParamTensor> tensors;
  std::vector<Layer> layers;
  std::int64_t seq_len = 1;  ///< tokens per sample for sequence models, 1 otherwise
  /// The element type activation_bytes_per_sample was counted in (transformer builders follow
  /// Korthikanti et al. 2022 with 16-bit activations; the MLP and CNN builders count fp32).
  DType activation_dtype = DType::kFp32;
  /// How the attention of a transformer runs; std::nullopt for models without attention.
  std::optional<AttentionImpl> attention;
  /// Per-head width and causality of that attention (the shape a fused kernel's measured rate
  /// depends on); 0 / false for models without attention.
  std::int64_t attention_head_dim = 0;
  bool attention_causal = false;
  /// The order in which the gradients of the bucketed tensors (untied ones) become ready in
  /// backward, as indices into `tensors`; empty: the reverse of `tensors` (what DDP assumes).
  /// DDP rebuilds its buckets in the measured order after the first iteration, which is not
  /// always the reverse (nn.LayerNorm's weight gradient is ready before its bias's; a module
  /// registered before the modules it runs after). Exported models carry it
  /// (builders/torch_export.hpp).
  std::vector<int> grad_ready_order;

  /// Trainable parameters, counting tied tensors once.
  /// Saturates at INT64_MAX like ParamTensor::numel().
  std::int64_t param_count() const;
  double fwd_flops_per_sample() const;
  double bwd_flops_per_sample() const;
  double activation_bytes_per_sample() const;
  double buffer_bytes() const;
  bool has_buffers() const { return buffer_bytes() > 0; }
  /// Checks the invariants (layer ranges cover the tensors in order, tied_to points backwards,
  /// grad_ready_order empty or a permutation of the untied tensors).
  void check() const;
};

/// The largest model ddpsim plans: 10^15 trainable parameters, 500x the largest dense model
/// published (Llama 3.1 405B; GPT-4-class mixtures are reported near 1.8e12). At 16 bytes per
/// parameter (fp32 weights, gradients and two Adam moments) its state is 1.6e16 bytes, below
/// 2^53: byte counts stay exact in a double and within int64 after any per-GPU division.
inline constexpr std::int64_t kMaxModelParameters = 1'000'000'000'000'000;

/// Refuses a model whose parameter count (or one tensor's size) passes kMaxModelParameters or
/// overflows int64 in the product of its extents, as an InputError naming `file` and
/// `pointer` (the user's key: "/model/hf_config", "/model/mlp/widths", ...). Every front end's
/// workload passes here (model/scenario/scenario_sections.cpp build_workload).
void check_model_size(const Workload& w, const std::string& file, const std::string& pointer);

/// Helper for builders: appends a tensor to `w` in layer `layer` and returns its index.
int add_tensor(Workload& w, int layer, std::string name, std::vector<std::int64_t> shape,
               DType dtype = DType::kFp32);

/// Helper for builders: appends the three GEMMs of a dense layer Y[b*rows, out] = X[b*rows, in]
/// W^T (PyTorch nn.Linear layout, W is [out, in]) applied to `rows` rows per sample:
///   forward  Y  = X  W^T : M = b*rows, N = out, K = in
///   dgrad    dX = dY W   : M = b*rows, N = in,  K = out   (omitted when needs_input_grad=false)
///   wgrad    dW = dY^T X : M = out,    N = in,  K = b*rows
/// Backward FLOPs are therefore exactly 2x forward unless the input needs no gradient (the first
/// layer of a network: autograd does not compute dX for the input batch).
void add_linear_gemms(Layer& layer, const std::string& name, std::int64_t rows, std::int64_t in,
                      std::int64_t out, bool needs_input_grad = true);

}  // namespace ddpsim::model
