// Tests of build_cnn (model/builders/cnn.cpp) against torchvision's ResNet and VGG.
#include "model/builders/cnn.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/error.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

Workload resnet(int depth) {
  return build_cnn({{"architecture", "resnet"}, {"depth", depth}}, "test.json");
}
Workload vgg(int depth, bool bn = false) {
  return build_cnn({{"architecture", "vgg"}, {"depth", depth}, {"batch_norm", bn}}, "test.json");
}

const Layer& find_layer(const Workload& w, const std::string& name) {
  for (const Layer& l : w.layers) {
    if (l.name == name) return l;
  }
  ADD_FAILURE() << "no layer " << name;
  static const Layer kNone;
  return kNone;
}

const Gemm& find_gemm(const Layer& l, GemmRole role) {
  for (const Gemm& g : l.gemms) {
    if (g.role == role) return g;
  }
  ADD_FAILURE() << "layer " << l.name << " has no " << gemm_role_name(role) << " GEMM";
  static const Gemm kNone;
  return kNone;
}

double gemm_flops(const Workload& w, bool forward) {
  double f = 0;
  for (const Layer& l : w.layers) {
    for (const Gemm& g : l.gemms) {
      if ((g.role == GemmRole::kForward) == forward) f += g.flops_per_sample();
    }
  }
  return f;
}

// The totals torchvision documents in each weights enum (num_params), which these builders
// must reproduce exactly.
TEST(Cnn, ParameterCountsMatchTorchvision) {
  // ResNet-50, by hand (convs have no bias; a BatchNorm of C channels has 2C parameters):
  //   stem: conv1 64*3*7*7 = 9,408; bn1 128.
  //   Bottleneck(in, w): in*w + 9w^2 + 4w^2 + BN (2w + 2w + 8w = 12w) [+ downsample in*4w + 8w].
  //   layer1 (w=64):  75,008 (with downsample, in=64) + 2 * 70,400 (in=256)     =    215,808
  //   layer2 (w=128): 379,392 (in=256) + 3 * 280,064 (in=512)                 =  1,219,584
  //   layer3 (w=256): 1,512,448 (in=512) + 5 * 1,117,184 (in=1024)            =  7,098,368
  //   layer4 (w=512): 6,039,552 (in=1024) + 2 * 4,462,592 (in=2048)           = 14,964,736
  //   fc: 2048*1000 + 1000 = 2,049,000.
  //   9,408 + 128 + 215,808 + 1,219,584 + 7,098,368 + 14,964,736 + 2,049,000 = 25,557,032.
  EXPECT_EQ(resnet(18).param_count(), 11'689'512);
  EXPECT_EQ(resnet(34).param_count(), 21'797'672);
  EXPECT_EQ(resnet(50).param_count(), 25'557'032);
  EXPECT_EQ(resnet(101).param_count(), 44'549'160);
  EXPECT_EQ(resnet(152).param_count(), 60'192'808);
  EXPECT_EQ(vgg(11).param_count(), 132'863'336);
  EXPECT_EQ(vgg(13).param_count(), 133'047'848);
  // VGG-16: 13 convs 3x3 with bias = 14,714,688; classifier 25088*4096+4096 + 4096*4096+4096 +
  // 4096*1000+1000 = 123,642,856; total 138,357,544. The _bn variant adds 2C per conv:
  // 2 * (2*64 + 2*128 + 3*256 + 6*512) = 8,448 -> 138,365,992.
  EXPECT_EQ(vgg(16).param_count(), 138'357'544);
  EXPECT_EQ(vgg(16, true).param_count(), 138'365'992);
  EXPECT_EQ(vgg(19).param_count(), 143'667'240);
}

TEST(Cnn, ResNet50TensorOrderIsNamedParametersOrder) {
  const Workload w = resnet(50);
  EXPECT_EQ(w.name, "resnet50");
  // 1 stem conv + 1 stem bn (2) + 16 bottlenecks * (3 convs + 3 bn * 2) + 4 downsamples * 3 +
  // fc (2) = 3 + 144 + 12 + 2 = 161, the length of torchvision's list(model.named_parameters()).
  ASSERT_EQ(w.tensors.size(), 161u);
  EXPECT_EQ(w.tensors.front().name, "conv1.weight");
  EXPECT_EQ(w.tensors.front().shape, (std::vector<std::int64_t>{64, 3, 7, 7}));
  EXPECT_EQ(w.tensors[1].name, "bn1.weight");
  EXPECT_EQ(w.tensors[2].name, "bn1.bias");
  EXPECT_EQ(w.tensors[3].name, "layer1.0.conv1.weight");
  EXPECT_EQ(w.tensors[3].shape, (std::vector<std::int64_t>{64, 64, 1, 1}));
  EXPECT_EQ(w.tensors[6].name, "layer1.0.conv2.weight");
  EXPECT_EQ(w.tensors[6].shape, (std::vector<std::int64_t>{64, 64, 3, 3}));
  EXPECT_EQ(w.tensors[11].name, "layer1.0.bn3.bias");
  EXPECT_EQ(w.tensors[11].shape, (std::vector<std::int64_t>{256}));
  // Bottleneck registers downsample after bn3.
  EXPECT_EQ(w.tensors[12].name, "layer1.0.downsample.0.weight");
  EXPECT_EQ(w.tensors[12].shape, (std::vector<std::int64_t>{256, 64, 1, 1}));
  EXPECT_EQ(w.tensors[13].name, "layer1.0.downsample.1.weight");
  EXPECT_EQ(w.tensors[14].name, "layer1.0.downsample.1.bias");
  EXPECT_EQ(w.tensors[15].name, "layer1.1.conv1.weight");
  EXPECT_EQ(w.tensors[159].name, "fc.weight");
  EXPECT_EQ(w.tensors[159].shape, (std::vector<std::int64_t>{1000, 2048}));
  EXPECT_EQ(w.tensors.back().name, "fc.bias");
  for (const ParamTensor& t : w.tensors) {
    EXPECT_EQ(t.dtype, DType::kFp32) << t.name;
    EXPECT_EQ(t.tied_to, -1) << t.name;
  }
}

TEST(Cnn, VggIndicesFollowTheSequential) {
  // cfg D: 64 64 M 128 128 M ...; without BN each number is conv, relu (2 indices) and each M one.
  const Workload w = vgg(16);
  EXPECT_EQ(w.name, "vgg16");
  ASSERT_EQ(w.tensors.size(), 32u);  // 13 convs + 3 linears, weight and bias each
  EXPECT_EQ(w.tensors[0].name, "features.0.weight");
  EXPECT_EQ(w.tensors[0].shape, (std::vector<std::int64_t>{64, 3, 3, 3}));
  EXPECT_EQ(w.tensors[1].name, "features.0.bias");
  EXPECT_EQ(w.tensors[2].name, "features.2.weight");
  EXPECT_EQ(w.tensors[4].name, "features.5.weight");  // after the pool at index 4
  EXPECT_EQ(w.tensors[24].name, "features.28.weight");
  EXPECT_EQ(w.tensors[26].name, "classifier.0.weight");
  EXPECT_EQ(w.tensors[26].shape, (std::vector<std::int64_t>{4096, 25088}));
  EXPECT_EQ(w.tensors[28].name, "classifier.3.weight");
  EXPECT_EQ(w.tensors[30].name, "classifier.6.weight");
  EXPECT_EQ(w.tensors[31].name, "classifier.6.bias");

  // With BN each number is conv, bn, relu (3 indices): features.0 conv, .1 bn, .3 conv, .6 pool.
  const Workload b = vgg(16, true);
  EXPECT_EQ(b.name, "vgg16_bn");
  ASSERT_EQ(b.tensors.size(), 58u);  // + 13 BNs * 2
  EXPECT_EQ(b.tensors[2].name, "features.1.weight");
  EXPECT_EQ(b.tensors[2].shape, (std::vector<std::int64_t>{64}));
  EXPECT_EQ(b.tensors[4].name, "features.3.weight");
  EXPECT_EQ(b.tensors[8].name, "features.7.weight");
  // Last conv: 13 convs and 4 pools before it -> 12*3 + 4 = 40; its BN at 41.
  EXPECT_EQ(b.tensors[48].name, "features.40.weight");
  EXPECT_EQ(b.tensors[50].name, "features.41.weight");
  EXPECT_EQ(b.tensors[56].name, "classifier.6.weight");
}

// torchvision's weights tables give "GFLOPS" 4.09 / 7.80 / 15.47; they were counted with
// fvcore-style counters that report one multiply-accumulate of conv and linear layers as one
// "flop" and skip BN, ReLU and pooling. Our GEMM FLOPs count 2 per MAC, so MACs = FLOPs / 2.
// Exact values from these shapes: 4.0892, 7.8014, 15.4703 G; the 1% band absorbs the rounding.
TEST(Cnn, ForwardMacsMatchTorchvisionDocs) {
  EXPECT_NEAR(gemm_flops(resnet(50), true) / 2 / 1e9, 4.09, 0.01 * 4.09);
  EXPECT_NEAR(gemm_flops(resnet(101), true) / 2 / 1e9, 7.80, 0.01 * 7.80);
  EXPECT_NEAR(gemm_flops(vgg(16), true) / 2 / 1e9, 15.47, 0.01 * 15.47);
  // BatchNorm adds no conv/linear MAC.
  EXPECT_EQ(gemm_flops(vgg(16, true), true), gemm_flops(vgg(16), true));
}

// Each conv/linear has dgrad and wgrad with the same M*N*K as its forward, so backward GEMM
// FLOPs are 2x forward, except that the first conv runs no dgrad (the image needs no gradient):
// bwd = 2 * fwd - fwd(first conv). All values are integers below 2^53, so equality is exact.
TEST(Cnn, BackwardGemmFlopsAreTwiceForwardLessFirstDgrad) {
  for (const Workload& w : {resnet(18), resnet(50), resnet(152), vgg(11), vgg(19, true)}) {
    const Layer& first = w.layers.front();
    ASSERT_EQ(first.kind, "conv") << w.name;
    EXPECT_EQ(first.gemms.size(), 2u) << w.name;  // fwd + wgrad, no dgrad
    const double first_fwd = find_gemm(first, GemmRole::kForward).flops_per_sample();
    EXPECT_EQ(gemm_flops(w, false), 2 * gemm_flops(w, true) - first_fwd) << w.name;
    // The workload totals add the (small) element-wise FLOPs of BN/ReLU/pool on top.
    EXPECT_GT(w.fwd_flops_per_sample(), gemm_flops(w, true)) << w.name;
    EXPECT_GT(w.bwd_flops_per_sample(), gemm_flops(w, false)) << w.name;
  }
}

TEST(Cnn, ConvGemmShapesByHand) {
  const Workload w = resnet(50);
  // layer1.0.conv2: 3x3, stride 1, pad 1, 64 -> 64 channels on 56x56 (224 /2 conv1 /2 maxpool).
  // im2col: M = 56*56 positions per sample, N = Cout = 64, K = Cin*3*3 = 576. At batch 32:
  const Layer& c = find_layer(w, "layer1.0.conv2");
  EXPECT_EQ(c.kind, "conv");
  const Gemm& fwd = find_gemm(c, GemmRole::kForward);
  EXPECT_EQ(fwd.name, "layer1.0.conv2.fwd");
  EXPECT_EQ(fwd.at_batch(32), (GemmShape{32 * 56 * 56, 64, 576, 1, false, true}));
  EXPECT_EQ(find_gemm(c, GemmRole::kInputGrad).at_batch(32),
            (GemmShape{32 * 56 * 56, 576, 64, 1, false, false}));
  EXPECT_EQ(find_gemm(c, GemmRole::kWeightGrad).at_batch(32),
            (GemmShape{64, 576, 32 * 56 * 56, 1, true, false}));
  // Per sample: 2 * 3136 * 64 * 576 = 231,211,008 FLOPs.
  EXPECT_EQ(fwd.flops_per_sample(), 231'211'008.0);

  // layer2.0.conv2 carries the stride (v1.5): 3x3/2 pad 1 on 56x56 -> 28x28, 128 -> 128.
  EXPECT_EQ(find_gemm(find_layer(w, "layer2.0.conv2"), GemmRole::kForward).per_sample,
            (GemmShape{28 * 28, 128, 128 * 9, 1, false, true}));
  // layer2.0.conv1 is 1x1 stride 1 on 56x56, 256 -> 128.
  EXPECT_EQ(find_gemm(find_layer(w, "layer2.0.conv1"), GemmRole::kForward).per_sample,
            (GemmShape{56 * 56, 128, 256, 1, false, true}));
  // layer2.0.downsample.0: 1x1 stride 2, 256 -> 512 on 56x56 -> 28x28.
  EXPECT_EQ(find_gemm(find_layer(w, "layer2.0.downsample.0"), GemmRole::kForward).per_sample,
            (GemmShape{28 * 28, 512, 256, 1, false, true}));
  // The stem: 7x7/2 pad 3 on 224 -> (224 + 6 - 7) / 2 + 1 = 112; K = 3*49 = 147.
  EXPECT_EQ(find_gemm(find_layer(w, "conv1"), GemmRole::kForward).per_sample,
            (GemmShape{112 * 112, 64, 147, 1, false, true}));
  // fc: Linear(2048, 1000), one row per sample.
  EXPECT_EQ(find_gemm(find_layer(w, "fc"), GemmRole::kForward).per_sample,
            (GemmShape{1, 1000, 2048, 1, false, true}));
}

TEST(Cnn, ActivationAndBufferBytesByHand) {
  const Workload w = resnet(50);
  // conv1 saves the fp32 image: 4 * 3*224*224.
  EXPECT_EQ(find_layer(w, "conv1").activation_bytes_per_sample, 4.0 * 3 * 224 * 224);
  // bn1 saves its input (conv1's output) and its inplace ReLU saves its output: 2 * 4*64*112*112.
  EXPECT_EQ(find_layer(w, "bn1").activation_bytes_per_sample, 2 * 4.0 * 64 * 112 * 112);
  // maxpool's input is that ReLU output (counted there); it adds its int64 indices, 8*64*56*56.
  EXPECT_EQ(find_layer(w, "maxpool").activation_bytes_per_sample, 8.0 * 64 * 56 * 56);
  // layer1.0.conv1 saves the maxpool output, 4*64*56*56; conv2's input is bn1's ReLU output.
  EXPECT_EQ(find_layer(w, "layer1.0.conv1").activation_bytes_per_sample, 4.0 * 64 * 56 * 56);
  EXPECT_EQ(find_layer(w, "layer1.0.conv2").activation_bytes_per_sample, 0.0);
  EXPECT_EQ(find_layer(w, "layer1.0.downsample.0").activation_bytes_per_sample, 0.0);
  // layer1.1.conv1's input is layer1.0's final ReLU output (counted in layer1.0.downsample.1
  // with the BN input: 2 * 4*256*56*56).
  EXPECT_EQ(find_layer(w, "layer1.1.conv1").activation_bytes_per_sample, 0.0);
  EXPECT_EQ(find_layer(w, "layer1.0.downsample.1").activation_bytes_per_sample,
            2 * 4.0 * 256 * 56 * 56);
  EXPECT_EQ(find_layer(w, "fc").activation_bytes_per_sample, 4.0 * 2048);

  // BatchNorm buffers: running_mean + running_var (4 bytes * C each) + num_batches_tracked (8).
  EXPECT_EQ(find_layer(w, "bn1").buffer_bytes, 8.0 * 64 + 8);
  // Summed: a BN has 2C parameters, so buffers = 4 * (BN parameters) + 8 per BN.
  double bn_params = 0;
  int bns = 0;
  for (const Layer& l : w.layers) {
    if (l.kind != "norm") continue;
    ++bns;
    for (int t = l.first_tensor; t < l.first_tensor + l.tensor_count; ++t) {
      bn_params += static_cast<double>(w.tensors[static_cast<std::size_t>(t)].numel());
    }
  }
  EXPECT_EQ(bns, 53);  // bn1 + 16 blocks * 3 + 4 downsamples
  EXPECT_EQ(w.buffer_bytes(), 4 * bn_params + 8.0 * 53);
  EXPECT_EQ(vgg(16).buffer_bytes(), 0.0);
  EXPECT_EQ(w.activation_dtype, DType::kFp32);
}

TEST(Cnn, ElementwiseTrafficByHand) {
  const Workload w = resnet(50);
  // bn1 on 64x112x112 = 802,816 elements: BN forward 3 fp32 accesses, its ReLU 2.
  const Layer& bn1 = find_layer(w, "bn1");
  const double n = 64.0 * 112 * 112;
  ASSERT_EQ(bn1.elementwise.size(), 4u);
  EXPECT_EQ(bn1.elementwise[0].name, "bn1.batch_norm");
  EXPECT_EQ(bn1.elementwise[0].bytes_per_sample, 12 * n);
  EXPECT_EQ(bn1.elementwise[1].role, GemmRole::kInputGrad);
  EXPECT_EQ(bn1.elementwise[1].bytes_per_sample, 20 * n);
  EXPECT_EQ(bn1.elementwise[2].bytes_per_sample, 8 * n);   // relu: read + write
  EXPECT_EQ(bn1.elementwise[3].bytes_per_sample, 12 * n);  // relu bwd: dY, Y -> dX
  // The residual add of layer1.0 (256x56x56) is in its last layer, the downsample BN:
  // reads two tensors, writes one.
  bool found = false;
  for (const ElementwiseOp& e : find_layer(w, "layer1.0.downsample.1").elementwise) {
    if (e.name == "layer1.0.add") {
      found = true;
      EXPECT_EQ(e.bytes_per_sample, 12.0 * 256 * 56 * 56);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Cnn, OptionalKeysFollowTorchvision) {
  // Defaults are torchvision's: spelling them out changes nothing.
  const Workload a = build_cnn({{"architecture", "resnet"},
                                {"depth", 50},
                                {"num_classes", 1000},
                                {"image_size", 224},
                                {"in_channels", 3}},
                               "t.json");
  EXPECT_EQ(a.param_count(), 25'557'032);
  // num_classes only changes fc: 2048*10 + 10 instead of 2,049,000.
  const Workload c10 =
      build_cnn({{"architecture", "resnet"}, {"depth", 50}, {"num_classes", 10}}, "t.json");
  EXPECT_EQ(c10.param_count(), 25'557'032 - 2'049'000 + 20'490);
  // in_channels 1 only changes conv1: 64*1*49 instead of 64*3*49.
  const Workload gray =
      build_cnn({{"architecture", "resnet"}, {"depth", 50}, {"in_channels", 1}}, "t.json");
  EXPECT_EQ(gray.param_count(), 25'557'032 - 2 * 64 * 49);
  // VGG's AdaptiveAvgPool2d((7, 7)) keeps the classifier at 25088 inputs for any image size.
  const Workload small =
      build_cnn({{"architecture", "vgg"}, {"depth", 16}, {"image_size", 32}}, "t.json");
  EXPECT_EQ(small.param_count(), 138'357'544);
  EXPECT_LT(small.fwd_flops_per_sample(), vgg(16).fwd_flops_per_sample());
  // ResNet at 32x32: conv1 -> 16, maxpool -> 8, stages 8, 4, 2, 1.
  const Workload r32 =
      build_cnn({{"architecture", "resnet"}, {"depth", 18}, {"image_size", 32}}, "t.json");
  EXPECT_EQ(find_gemm(find_layer(r32, "layer4.1.conv2"), GemmRole::kForward).per_sample.m, 1);
  EXPECT_EQ(r32.param_count(), 11'689'512);
}

// Returns the InputError's message (and fails if none is thrown).
std::string cnn_error(const json& spec) {
  try {
    build_cnn(spec, "zoo.json");
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "zoo.json");
    return e.what();
  }
  ADD_FAILURE() << "no InputError for " << spec.dump();
  return {};
}

TEST(Cnn, BadSpecsNameTheirPointer) {
  const json ok = {{"architecture", "resnet"}, {"depth", 50}};
  auto with = [&](const std::string& key, const json& value) {
    json s = ok;
    s[key] = value;
    return s;
  };
  const std::string typo = cnn_error(with("dpeth", 50));
  EXPECT_NE(typo.find("/config/dpeth"), std::string::npos);
  EXPECT_NE(typo.find("did you mean \"depth\""), std::string::npos) << typo;
  EXPECT_NE(cnn_error(with("depth", 42)).find("/config/depth"), std::string::npos);
  EXPECT_NE(cnn_error(with("depth", "50")).find("/config/depth"), std::string::npos);
  EXPECT_NE(cnn_error(with("depth", 50.0)).find("/config/depth"), std::string::npos);
  EXPECT_NE(cnn_error(with("depth", 16)).find("/config/depth"), std::string::npos);  // a VGG depth
  EXPECT_NE(cnn_error(with("image_size", 0)).find("/config/image_size"), std::string::npos);
  EXPECT_NE(cnn_error(with("image_size", 224.5)).find("/config/image_size"), std::string::npos);
  EXPECT_NE(cnn_error(with("num_classes", -1)).find("/config/num_classes"), std::string::npos);
  EXPECT_NE(cnn_error(with("in_channels", true)).find("/config/in_channels"), std::string::npos);
  EXPECT_NE(cnn_error(with("image_size", std::uint64_t{1} << 63)).find("/config/image_size"),
            std::string::npos);
  // ResNets always have BatchNorm: the VGG-only key is refused rather than ignored.
  EXPECT_NE(cnn_error(with("batch_norm", true)).find("/config/batch_norm"), std::string::npos);
  EXPECT_NE(cnn_error(with("architecture", "densenet")).find("/config/architecture"),
            std::string::npos);
  EXPECT_NE(cnn_error(json{{"depth", 50}}).find("/config/architecture"), std::string::npos);
  EXPECT_NE(cnn_error(json{{"architecture", "vgg"}}).find("/config/depth"), std::string::npos);
  EXPECT_NE(cnn_error(json::array()).find("/config"), std::string::npos);
  const json v = {{"architecture", "vgg"}, {"depth", 16}, {"batch_norm", "yes"}};
  EXPECT_NE(cnn_error(v).find("/config/batch_norm"), std::string::npos);
  // Five 2x2 max-pools need at least 32 pixels.
  const json tiny = {{"architecture", "vgg"}, {"depth", 16}, {"image_size", 31}};
  EXPECT_NE(cnn_error(tiny).find("/config/image_size"), std::string::npos);
  // One line naming the file.
  const std::string msg = cnn_error(with("depth", 42));
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  EXPECT_EQ(msg.rfind("zoo.json", 0), 0u) << msg;
}

TEST(Cnn, ZooFilesBuildToTheirExpectedCounts) {
  for (const std::string name : {"resnet50", "resnet101", "vgg16"}) {
    const std::string path = std::string(DDPSIM_SCENARIO_DIR) + "/models/" + name + ".json";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    const json doc = json::parse(in);
    EXPECT_EQ(doc.at("name"), name);
    EXPECT_EQ(doc.at("builder"), "cnn");
    const Workload w = build_cnn(doc.at("config"), path);
    EXPECT_EQ(w.name, name);
    EXPECT_EQ(w.param_count(), doc.at("expected_params").get<std::int64_t>()) << path;
  }
}

}  // namespace
}  // namespace ddpsim::model
