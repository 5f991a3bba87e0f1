// cnn.cpp: torchvision's ResNet and VGG as Workloads (see builders/cnn.hpp).
//
// Architectures follow torchvision/models/resnet.py (ResNet v1.5: the stride of a Bottleneck
// sits on its 3x3 conv) and torchvision/models/vgg.py, which implement He et al. 2015
// (arXiv:1512.03385) and Simonyan & Zisserman 2014 (arXiv:1409.1556).
#include "model/builders/cnn.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/error.hpp"
#include "model/schema.hpp"

namespace ddpsim::model {

namespace {

// The spec sits under "config" in a zoo file, so every pointer we report is relative to it.
const std::string kPrefix = "/config";

// Every count below is in fp32 bytes, the dtype torchvision models are built in.
constexpr double kF32 = 4.0;
// max_pool2d_with_indices returns its argmax as int64 and autograd keeps it for backward.
constexpr double kInt64 = 8.0;
// native_dropout's mask is a bool tensor, one byte per element.
constexpr double kBool = 1.0;

// Upper bound on the integer keys: large enough for any real network, small enough that the
// per-sample products (Ho*Wo*Cout*Cin*9) stay far from int64 overflow.
constexpr std::int64_t kMaxInt = std::int64_t{1} << 20;

struct CnnSpec {
  std::string architecture;
  std::int64_t depth = 0;
  std::int64_t num_classes = 1000;  // torchvision's defaults
  std::int64_t image_size = 224;
  std::int64_t in_channels = 3;
  bool batch_norm = false;
};

std::string pointer_to(const std::string& key) { return kPrefix + "/" + escape_pointer_token(key); }

std::int64_t get_int(const nlohmann::json& spec, const std::string& file, const std::string& key,
                     std::int64_t fallback, std::int64_t minimum) {
  auto it = spec.find(key);
  if (it == spec.end()) return fallback;
  const std::string expected =
      "an integer in [" + std::to_string(minimum) + ", " + std::to_string(kMaxInt) + "]";
  // 3.0 is not an integer here: a float depth or size is a mistake worth naming.
  if (!it->is_number_integer()) throw InputError(file, pointer_to(key), expected, it->dump());
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxInt)) {
    throw InputError(file, pointer_to(key), expected, it->dump());
  }
  const std::int64_t v = it->get<std::int64_t>();
  if (v < minimum || v > kMaxInt) throw InputError(file, pointer_to(key), expected, it->dump());
  return v;
}

std::string join(const std::set<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

// The "did you mean" of DESIGN.md: the closest known key within a third of the typed length.
std::string hint(const std::string& typed, const std::set<std::string>& keys) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, typed.size() / 3) + 1;
  for (const std::string& k : keys) {
    const std::size_t d = edit_distance(typed, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best.empty() ? std::string() : " (did you mean \"" + best + "\"?)";
}

CnnSpec parse_spec(const nlohmann::json& spec, const std::string& file) {
  if (!spec.is_object()) throw InputError(file, kPrefix, "an object", spec.dump());
  static const std::set<std::string> kResnetKeys = {"architecture", "depth", "num_classes",
                                                    "image_size", "in_channels"};
  static const std::set<std::string> kAllKeys = {"architecture", "depth",       "num_classes",
                                                 "image_size",   "in_channels", "batch_norm"};
  for (const auto& [key, value] : spec.items()) {
    if (kAllKeys.count(key) == 0) {
      throw InputError(file, pointer_to(key),
                       "one of the keys " + join(kAllKeys) + hint(key, kAllKeys),
                       "\"" + key + "\"");
    }
  }

  CnnSpec s;
  auto arch = spec.find("architecture");
  if (arch == spec.end()) {
    throw InputError(file, pointer_to("architecture"), "\"resnet\" or \"vgg\"", "nothing");
  }
  if (!arch->is_string() || (*arch != "resnet" && *arch != "vgg")) {
    throw InputError(file, pointer_to("architecture"), "\"resnet\" or \"vgg\"", arch->dump());
  }
  s.architecture = arch->get<std::string>();
  const bool resnet = s.architecture == "resnet";

  if (resnet) {
    for (const auto& [key, value] : spec.items()) {
      if (kResnetKeys.count(key) == 0) {
        // torchvision's ResNets always use BatchNorm: the key would be ignored or a lie.
        throw InputError(file, pointer_to(key),
                         "no \"" + key +
                             "\" for architecture resnet (keys: architecture, depth, "
                             "num_classes, image_size, in_channels)",
                         value.dump());
      }
    }
  }

  const std::string depths = resnet ? "one of 18, 34, 50, 101, 152" : "one of 11, 13, 16, 19";
  auto depth = spec.find("depth");
  if (depth == spec.end()) throw InputError(file, pointer_to("depth"), depths, "nothing");
  const std::set<std::int64_t> valid = resnet ? std::set<std::int64_t>{18, 34, 50, 101, 152}
                                              : std::set<std::int64_t>{11, 13, 16, 19};
  const bool in_range = depth->is_number_integer() &&
                        !(depth->is_number_unsigned() &&
                          depth->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxInt));
  if (!in_range || valid.count(depth->get<std::int64_t>()) == 0) {
    throw InputError(file, pointer_to("depth"), depths, depth->dump());
  }
  s.depth = depth->get<std::int64_t>();

  s.num_classes = get_int(spec, file, "num_classes", s.num_classes, 1);
  s.in_channels = get_int(spec, file, "in_channels", s.in_channels, 1);
  // VGG's five 2x2 max-pools each need a side >= 2, hence 32; ResNet's 7x7/2 stem with padding 3
  // and the strided layers after it yield a side >= 1 from any input.
  s.image_size = get_int(spec, file, "image_size", s.image_size, resnet ? 1 : 32);

  if (auto bn = spec.find("batch_norm"); bn != spec.end()) {
    if (!bn->is_boolean())
      throw InputError(file, pointer_to("batch_norm"), "true or false", bn->dump());
    s.batch_norm = bn->get<bool>();
  }
  return s;
}

// An activation tensor of one sample: C x H x W.
struct Act {
  std::int64_t c = 0, h = 0, w = 0;
  double numel() const {
    return static_cast<double>(c) * static_cast<double>(h) * static_cast<double>(w);
  }
};

// PyTorch's output size for conv and pooling without dilation or ceil_mode.
std::int64_t out_side(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p) {
  const std::int64_t o = (in + 2 * p - k) / s + 1;
  DDPSIM_ASSERT(in + 2 * p >= k && o >= 1,
                "spatial size collapsed; the spec check must prevent it");
  return o;
}

class CnnBuilder {
 public:
  Workload w;

  Layer& layer(int i) { return w.layers[static_cast<std::size_t>(i)]; }

  int add_layer(const std::string& name, const std::string& kind) {
    Layer l;
    l.name = name;
    l.kind = kind;
    w.layers.push_back(std::move(l));
    return static_cast<int>(w.layers.size()) - 1;
  }

  // nn.Conv2d, square kernel. The im2col view of a conv is a dense layer applied to each of the
  // Ho*Wo output positions: a row of im2col(X) holds the Cin*k*k inputs of one position and the
  // weight [Cout, Cin, k, k] is the matrix [Cout, Cin*k*k]. So the three GEMMs are exactly
  // add_linear_gemms with rows = Ho*Wo, in = Cin*k*k, out = Cout:
  //   fwd   M = Ho*Wo, N = Cout,    K = Cin*k*k  (batch scales M)
  //   dgrad M = Ho*Wo, N = Cin*k*k, K = Cout     (batch scales M; then col2im)
  //   wgrad M = Cout,  N = Cin*k*k, K = Ho*Wo    (batch scales K)
  // cuDNN picks implicit-GEMM or Winograd/FFT algorithms, but the im2col GEMM is the FLOP count
  // every published figure uses and the shape calibration measures.
  // `input_saved` is true when the input is a ReLU output that the ReLU already keeps for its
  // own backward (torchvision's ReLUs are inplace, so the conv saves the very same storage).
  Act conv(const std::string& name, const Act& x, std::int64_t cout, std::int64_t k,
           std::int64_t stride, std::int64_t pad, bool bias, bool needs_input_grad,
           bool input_saved) {
    const int li = add_layer(name, "conv");
    add_tensor(w, li, name + ".weight", {cout, x.c, k, k});
    if (bias) add_tensor(w, li, name + ".bias", {cout});
    const Act y{cout, out_side(x.h, k, stride, pad), out_side(x.w, k, stride, pad)};
    Layer& l = layer(li);
    add_linear_gemms(l, name, y.h * y.w, x.c * k * k, cout, needs_input_grad);
    l.conv_io_elements_per_sample = static_cast<double>(x.numel() + y.numel());
    l.conv_input_grad = needs_input_grad;
    // convolution_backward needs the input for the weight gradient.
    if (!input_saved) l.activation_bytes_per_sample += kF32 * x.numel();
    if (bias) {
      // at::convolution adds the bias after the cuDNN call: read + write of the output. Its
      // gradient is a reduction of dY over N, H, W: one read of dY.
      l.elementwise.push_back(
          {name + ".bias_add", GemmRole::kForward, 2 * kF32 * y.numel(), y.numel()});
      l.elementwise.push_back(
          {name + ".bias_grad", GemmRole::kInputGrad, kF32 * y.numel(), y.numel()});
    }
    return y;
  }

  // nn.BatchNorm2d in training mode, counted as PyTorch's native CUDA kernels run it:
  //   forward  batch_norm_stats (reads x) + batch_norm_elemt (reads x, writes y): 3 accesses;
  //   backward batch_norm_backward_reduce (reads dy, x) + batch_norm_backward_elemt (reads dy, x,
  //            writes dx): 5 accesses.
  // FLOPs per element, approximate and negligible next to the convs: forward 3 (sum, sum of
  // squares) + 2 (x*a + b with per-channel a, b); backward 4 (sum dy, sum dy*(x-mean)) + 6.
  // Saved for backward: the input (save_mean/save_invstd, 8*C bytes, are ignored: < 0.1%).
  int batch_norm(const std::string& name, const Act& x) {
    const int li = add_layer(name, "norm");
    add_tensor(w, li, name + ".weight", {x.c});
    add_tensor(w, li, name + ".bias", {x.c});
    Layer& l = layer(li);
    const double n = x.numel();
    l.elementwise.push_back({name + ".batch_norm", GemmRole::kForward, 3 * kF32 * n, 5 * n, 2});
    l.elementwise.push_back(
        {name + ".batch_norm.bwd", GemmRole::kInputGrad, 5 * kF32 * n, 10 * n, 2});
    l.activation_bytes_per_sample += kF32 * n;
    // running_mean and running_var (fp32, C each) and num_batches_tracked (one int64).
    l.buffer_bytes = 2 * kF32 * static_cast<double>(x.c) + kInt64;
    return li;
  }

  // An inplace ReLU folded into layer `li`. Forward reads and writes each element; backward
  // (threshold_backward) reads dY and the saved output and writes dX. It saves its output, which
  // the next conv reuses as its saved input (counted here, once).
  void relu(int li, const std::string& name, const Act& x) {
    Layer& l = layer(li);
    const double n = x.numel();
    l.elementwise.push_back({name + ".relu", GemmRole::kForward, 2 * kF32 * n, n});
    l.elementwise.push_back({name + ".relu.bwd", GemmRole::kInputGrad, 3 * kF32 * n, n});
    l.activation_bytes_per_sample += kF32 * n;
  }

  // nn.MaxPool2d: max_pool2d_with_indices reads X and writes Y plus int64 argmax indices; its
  // backward reads dY and the indices and writes dX. It saves its input (a ReLU output, already
  // counted by the ReLU) and the indices, which are counted here.
  Act max_pool(const std::string& name, const Act& x, std::int64_t k, std::int64_t s,
               std::int64_t p) {
    const int li = add_layer(name, "pool");
    const Act y{x.c, out_side(x.h, k, s, p), out_side(x.w, k, s, p)};
    Layer& l = layer(li);
    const double io = kF32 * (x.numel() + y.numel()) + kInt64 * y.numel();
    l.elementwise.push_back(
        {name + ".max_pool", GemmRole::kForward, io, static_cast<double>(k * k) * y.numel()});
    l.elementwise.push_back({name + ".max_pool.bwd", GemmRole::kInputGrad, io, y.numel()});
    l.activation_bytes_per_sample = kInt64 * y.numel();
    return y;
  }

  // nn.AdaptiveAvgPool2d: reads X, writes Y; backward reads dY, writes dX. `saved_input` is the
  // number of bytes its autograd node keeps (see the callers).
  Act avg_pool(const std::string& name, const Act& x, std::int64_t out, double saved_input) {
    const int li = add_layer(name, "pool");
    const Act y{x.c, out, out};
    Layer& l = layer(li);
    const double io = kF32 * (x.numel() + y.numel());
    l.elementwise.push_back({name + ".avg_pool", GemmRole::kForward, io, x.numel()});
    l.elementwise.push_back({name + ".avg_pool.bwd", GemmRole::kInputGrad, io, x.numel()});
    l.activation_bytes_per_sample = saved_input;
    return y;
  }

  // nn.Linear on a flattened input. addmm fuses the bias into the GEMM; the bias gradient (a
  // reduction of dY, `out` floats per sample) is negligible and not listed. Saves its input.
  int linear(const std::string& name, std::int64_t in, std::int64_t out) {
    const int li = add_layer(name, "linear");
    add_tensor(w, li, name + ".weight", {out, in});
    add_tensor(w, li, name + ".bias", {out});
    Layer& l = layer(li);
    add_linear_gemms(l, name, 1, in, out);
    l.activation_bytes_per_sample = kF32 * static_cast<double>(in);
    return li;
  }

  // nn.Dropout in training mode folded into layer `li`: native_dropout reads X, writes Y and a
  // bool mask; backward reads dY and the mask, writes dX. It saves the mask; its output is saved
  // by the next linear.
  void dropout(int li, const std::string& name, std::int64_t n) {
    Layer& l = layer(li);
    const double e = static_cast<double>(n);
    const double io = (2 * kF32 + kBool) * e;
    l.elementwise.push_back({name + ".dropout", GemmRole::kForward, io, e});
    l.elementwise.push_back({name + ".dropout.bwd", GemmRole::kInputGrad, io, e});
    l.activation_bytes_per_sample += kBool * e;
  }
};

// torchvision.models.resnet.Bottleneck (expansion 4) or BasicBlock (expansion 1). Registration
// order is conv1, bn1, conv2, bn2[, conv3, bn3], downsample: that is named_parameters() order and
// also forward order (downsample(x) is computed after bn3).
Act resnet_block(CnnBuilder& b, const std::string& name, const Act& x, std::int64_t planes,
                 std::int64_t stride, bool bottleneck, bool input_saved) {
  const std::int64_t expansion = bottleneck ? 4 : 1;
  const bool downsample = stride != 1 || x.c != planes * expansion;
  Act y;
  int last = 0;
  const int first_layer = static_cast<int>(b.w.layers.size());
  if (bottleneck) {
    Act h = b.conv(name + ".conv1", x, planes, 1, 1, 0, false, true, input_saved);
    int bn = b.batch_norm(name + ".bn1", h);
    b.relu(bn, name + ".bn1", h);
    // v1.5: the stride is on the 3x3 conv (torchvision's Bottleneck docstring).
    h = b.conv(name + ".conv2", h, planes, 3, stride, 1, false, true, true);
    bn = b.batch_norm(name + ".bn2", h);
    b.relu(bn, name + ".bn2", h);
    y = b.conv(name + ".conv3", h, planes * 4, 1, 1, 0, false, true, true);
    last = b.batch_norm(name + ".bn3", y);
  } else {
    Act h = b.conv(name + ".conv1", x, planes, 3, stride, 1, false, true, input_saved);
    const int bn = b.batch_norm(name + ".bn1", h);
    b.relu(bn, name + ".bn1", h);
    y = b.conv(name + ".conv2", h, planes, 3, 1, 1, false, true, true);
    last = b.batch_norm(name + ".bn2", y);
  }
  if (downsample) {
    // conv1x1 with the block's stride, then BatchNorm. Its input is the block input, which the
    // block's conv1 already saves (same tensor): not counted twice.
    const Act d = b.conv(name + ".downsample.0", x, planes * expansion, 1, stride, 0, false, true,
                         /*input_saved=*/true);
    last = b.batch_norm(name + ".downsample.1", d);
  }
  // out += identity (reads both, writes one; saves nothing), then the block's inplace ReLU.
  Layer& l = b.layer(last);
  l.elementwise.push_back({name + ".add", GemmRole::kForward, 3 * kF32 * y.numel(), y.numel()});
  b.relu(last, name, y);
  // The add's backward passes dY to both branches without a kernel, but the block input has two
  // consumers (conv1 and identity/downsample), so autograd sums their gradients into one buffer
  // (reads two, writes one) once conv1's dgrad, the last of the block's backward, is done.
  b.layer(first_layer)
      .elementwise.push_back(
          {name + ".grad_accumulate", GemmRole::kInputGrad, 3 * kF32 * x.numel(), x.numel()});
  return y;
}

Workload build_resnet(const CnnSpec& s) {
  struct Cfg {
    bool bottleneck;
    std::array<int, 4> blocks;
  };
  Cfg cfg{};
  switch (s.depth) {
    case 18:
      cfg = {false, {2, 2, 2, 2}};
      break;
    case 34:
      cfg = {false, {3, 4, 6, 3}};
      break;
    case 50:
      cfg = {true, {3, 4, 6, 3}};
      break;
    case 101:
      cfg = {true, {3, 4, 23, 3}};
      break;
    case 152:
      cfg = {true, {3, 8, 36, 3}};
      break;
    default:
      DDPSIM_ASSERT(false, "resnet depth was validated");
  }
  CnnBuilder b;
  b.w.name = "resnet" + std::to_string(s.depth);
  b.w.source =
      "He et al. 2015, Deep Residual Learning for Image Recognition, arXiv:1512.03385; layout of "
      "torchvision/models/resnet.py (v1.5, stride on the 3x3 conv)";

  Act x{s.in_channels, s.image_size, s.image_size};
  // The stem: the data batch needs no gradient, so conv1 runs no dgrad.
  x = b.conv("conv1", x, 64, 7, 2, 3, false, /*needs_input_grad=*/false, /*input_saved=*/false);
  const int bn1 = b.batch_norm("bn1", x);
  b.relu(bn1, "bn1", x);
  x = b.max_pool("maxpool", x, 3, 2, 1);

  // The maxpool output is saved by nobody else, so layer1.0.conv1 keeps it; every later block
  // input is the previous block's ReLU output.
  bool input_saved = false;
  const std::array<std::int64_t, 4> planes = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int i = 0; i < cfg.blocks[static_cast<std::size_t>(stage)]; ++i) {
      const std::int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = resnet_block(b, "layer" + std::to_string(stage + 1) + "." + std::to_string(i), x,
                       planes[static_cast<std::size_t>(stage)], stride, cfg.bottleneck,
                       input_saved);
      input_saved = true;
    }
  }
  // AdaptiveAvgPool2d((1, 1)) runs as mean over H, W, whose backward keeps only sizes; its input
  // is a ReLU output anyway.
  x = b.avg_pool("avgpool", x, 1, 0);
  b.linear("fc", x.c, s.num_classes);
  return std::move(b.w);
}

Workload build_vgg(const CnnSpec& s) {
  // torchvision's cfgs "A", "B", "D", "E"; 0 is "M" (MaxPool2d(2, 2)).
  std::vector<std::int64_t> cfg;
  switch (s.depth) {
    case 11:
      cfg = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
      break;
    case 13:
      cfg = {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
      break;
    case 16:
      cfg = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
      break;
    case 19:
      cfg = {64,  64,  0,   128, 128, 0,   256, 256, 256, 256, 0,
             512, 512, 512, 512, 0,   512, 512, 512, 512, 0};
      break;
    default:
      DDPSIM_ASSERT(false, "vgg depth was validated");
  }
  CnnBuilder b;
  b.w.name = "vgg" + std::to_string(s.depth) + (s.batch_norm ? "_bn" : "");
  b.w.source =
      "Simonyan & Zisserman 2014, Very Deep Convolutional Networks for Large-Scale Image "
      "Recognition, arXiv:1409.1556; layout of torchvision/models/vgg.py";

  Act x{s.in_channels, s.image_size, s.image_size};
  // Module indices of the nn.Sequential "features": conv[, bn], relu per number, pool per "M".
  int idx = 0;
  bool first = true;
  bool input_saved = false;  // the image and every max-pool output are saved by the next conv
  for (std::int64_t v : cfg) {
    if (v == 0) {
      x = b.max_pool("features." + std::to_string(idx++), x, 2, 2, 0);
      input_saved = false;
      continue;
    }
    const std::string conv_name = "features." + std::to_string(idx++);
    x = b.conv(conv_name, x, v, 3, 1, 1, /*bias=*/true, /*needs_input_grad=*/!first, input_saved);
    first = false;
    int relu_host = static_cast<int>(b.w.layers.size()) - 1;
    if (s.batch_norm) relu_host = b.batch_norm("features." + std::to_string(idx++), x);
    b.relu(relu_host, "features." + std::to_string(idx++), x);
    input_saved = true;
  }
  // AdaptiveAvgPool2d((7, 7)) is not the mean shortcut, so its node keeps its input (a max-pool
  // output nobody else saves). At 224 it maps 7x7 to 7x7 but still runs.
  x = b.avg_pool("avgpool", x, 7, kF32 * x.numel());
  const std::int64_t flat = x.c * x.h * x.w;  // 512 * 7 * 7 = 25088
  int li = b.linear("classifier.0", flat, 4096);
  b.relu(li, "classifier.1", {4096, 1, 1});
  b.dropout(li, "classifier.2", 4096);
  li = b.linear("classifier.3", 4096, 4096);
  b.relu(li, "classifier.4", {4096, 1, 1});
  b.dropout(li, "classifier.5", 4096);
  b.linear("classifier.6", 4096, s.num_classes);
  return std::move(b.w);
}

}  // namespace

Workload build_cnn(const nlohmann::json& spec, const std::string& file) {
  const CnnSpec s = parse_spec(spec, file);
  Workload w = s.architecture == "resnet" ? build_resnet(s) : build_vgg(s);
  w.activation_dtype = DType::kFp32;
  w.check();
  return w;
}

}  // namespace ddpsim::model
