// Tests of the executor's GPT-2 (calibrate/exec/gpt2.hpp): it is the simulator's Workload tensor
// for tensor, its gradients are the derivatives of its loss (central finite differences, tensor
// by tensor), its loss starts at ln(vocab) and falls, and what it cannot run is refused.
#include "calibrate/exec/gpt2.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "calibrate/exec/executor.hpp"
#include "calibrate/exec/vector_kernels.hpp"
#include "calibrate/exec/vector_math.hpp"
#include "model/builders/builders.hpp"
#include "model/error.hpp"

namespace {

using ddpsim::exec::Gpt2;
using ddpsim::exec::Gpt2Spec;
using nlohmann::json;

json tiny_config() {
  std::ifstream f(std::string(DDPSIM_TEST_DATA_DIR) + "/exec/gpt2-tiny-config.json");
  return json::parse(f);
}

std::vector<std::int64_t> first_samples(std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(Gpt2, IsTheSimulatorsWorkloadTensorForTensor) {
  const json cfg = tiny_config();
  const Gpt2Spec spec = ddpsim::exec::gpt2_spec_from_config(cfg, 32, "cfg.json");
  const auto w = ddpsim::model::build_hf_transformer(cfg, "cfg.json", 32,
                                                     ddpsim::model::AttentionImpl::kEager);
  Gpt2 net(spec, 1, 1, first_samples(2), 2);
  ASSERT_EQ(net.tensor_count(), static_cast<int>(w.tensors.size()));
  for (int t = 0; t < net.tensor_count(); ++t) {
    EXPECT_EQ(net.numel(t), w.tensors[static_cast<std::size_t>(t)].numel()) << t;
    EXPECT_EQ(net.tied(t), w.tensors[static_cast<std::size_t>(t)].tied_to >= 0) << t;
  }
  ASSERT_EQ(net.layers(), static_cast<int>(w.layers.size()));
  for (int l = 0; l < net.layers(); ++l) {
    EXPECT_EQ(net.layer_name(l), w.layers[static_cast<std::size_t>(l)].name);
  }
  // 96*64 + 32*64 + 2 * (12*64^2 + 13*64) + 2*64 (wte once).
  EXPECT_EQ(ddpsim::exec::gpt2_param_count(spec), 6144 + 2048 + 2 * (49152 + 832) + 128);
  EXPECT_EQ(static_cast<std::int64_t>(net.params().size()), ddpsim::exec::gpt2_param_count(spec));
  // Every untied tensor's gradient is final after exactly one layer.
  std::vector<int> seen(static_cast<std::size_t>(net.tensor_count()), 0);
  for (int l = 0; l < net.layers(); ++l) {
    for (int t : net.grads_final_after(l)) ++seen[static_cast<std::size_t>(t)];
  }
  for (int t = 0; t < net.tensor_count(); ++t) EXPECT_EQ(seen[t], net.tied(t) ? 0 : 1) << t;
}

TEST(Gpt2, GradientsAreTheLossDerivatives) {
  // Central differences (L(p + e v) - L(p - e v)) / 2e against g . v for a random direction v
  // on one tensor at a time. The tiny model in fp32 with e = 1e-2 on directions of unit norm:
  // truncation O(e^2) and rounding ~1e-7 * L / e stay below 1e-4, against derivatives ~1e-2..1.
  Gpt2Spec spec = ddpsim::exec::gpt2_spec_from_config(tiny_config(), 16, "cfg.json");
  spec.vocab = 24;
  spec.embd = 16;
  spec.heads = 2;
  spec.inner = 32;
  spec.positions = 16;
  spec.init_std = 0.3f;  // larger weights than GPT-2's, so every path carries gradient
  Gpt2 net(spec, 3, 5, first_samples(3), 3);
  // Non-trivial norms and biases too.
  std::mt19937_64 gen(11);
  std::normal_distribution<float> jitter(0.0f, 0.2f);
  for (float& x : net.params()) x += jitter(gen);
  const std::vector<float> base = net.params();
  net.forward_loss(0, 1.0f, {});
  net.backward(false, {});
  const std::vector<float> grads = net.grads();
  const double e = 1e-2;
  for (int t = 0; t < net.tensor_count(); ++t) {
    if (net.tied(t)) continue;
    std::vector<double> v(static_cast<std::size_t>(net.numel(t)));
    double norm = 0;
    for (double& x : v) {
      x = jitter(gen);
      norm += x * x;
    }
    double gv = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      v[i] /= std::sqrt(norm);
      gv += v[i] * grads[static_cast<std::size_t>(net.offset(t)) + i];
    }
    auto loss_at = [&](double sign) {
      net.params() = base;
      for (std::size_t i = 0; i < v.size(); ++i) {
        net.params()[static_cast<std::size_t>(net.offset(t)) + i] +=
            static_cast<float>(sign * e * v[i]);
      }
      return static_cast<double>(net.forward_loss(0, 1.0f, {}));
    };
    const double fd = (loss_at(1) - loss_at(-1)) / (2 * e);
    EXPECT_NEAR(gv, fd, 2e-3 + 0.02 * std::abs(fd)) << "tensor " << t;
  }
}

TEST(Gpt2, AccumulatedGradientsAreTheSumOfMicroBatches) {
  Gpt2Spec spec = ddpsim::exec::gpt2_spec_from_config(tiny_config(), 8, "cfg.json");
  Gpt2 net(spec, 1, 1, first_samples(4), 2);
  net.forward_loss(0, 1.0f, {});
  net.backward(false, {});
  std::vector<float> sum = net.grads();
  net.forward_loss(1, 1.0f, {});
  net.backward(false, {});
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += net.grads()[i];
  net.forward_loss(0, 1.0f, {});
  net.backward(false, {});
  net.forward_loss(1, 1.0f, {});
  net.backward(true, {});
  double worst = 0;
  for (std::size_t i = 0; i < sum.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(sum[i] - net.grads()[i])));
  }
  EXPECT_LT(worst, 1e-6);
}

TEST(Gpt2, LossStartsAtLogVocabularyAndFalls) {
  // N(0, 0.02) weights give near-uniform logits: the first loss is ln(96) = 4.564 within 1%.
  const Gpt2Spec spec = ddpsim::exec::gpt2_spec_from_config(tiny_config(), 32, "cfg.json");
  Gpt2 net(spec, 1, 1, first_samples(8 * 40), 8);
  ddpsim::exec::OptimizerConfig oc;
  oc.lr = 3e-3f;
  ddpsim::exec::Optimizer opt(oc, net.params().size());
  const float first = net.forward_loss(0, 1.0f, {});
  EXPECT_NEAR(first, std::log(96.0), 0.01 * std::log(96.0));
  float last = first;
  for (int step = 0; step < 40; ++step) {
    last = net.forward_loss(step, 1.0f, {});
    net.backward(false, {});
    opt.step(net.params(), net.grads());
  }
  EXPECT_LT(last, first - 1.0f);  // the permutation is being learnt
}

TEST(VectorMath, ExpAndTanhWithinTheirBounds) {
  // Cephes expf: relative error < 2e-7 against the double exp over its whole clamped range;
  // tanh from it: absolute error < 3e-7; both saturate instead of overflowing.
  double worst_exp = 0, worst_tanh = 0;
  for (float x = -87.0f; x < 88.0f; x += 0.01f) {
    const double e = std::exp(static_cast<double>(x));
    worst_exp = std::max(worst_exp, std::abs(ddpsim::exec::exp_approx(x) - e) / e);
  }
  for (float x = -12.0f; x < 12.0f; x += 0.001f) {
    worst_tanh = std::max(
        worst_tanh, std::abs(ddpsim::exec::tanh_approx(x) - std::tanh(static_cast<double>(x))));
  }
  EXPECT_LT(worst_exp, 2e-7);
  EXPECT_LT(worst_tanh, 3e-7);
  EXPECT_TRUE(std::isfinite(ddpsim::exec::exp_approx(1000.0f)));
  EXPECT_EQ(ddpsim::exec::tanh_approx(1000.0f), 1.0f);
  EXPECT_EQ(ddpsim::exec::tanh_approx(-1000.0f), -1.0f);
}

TEST(VectorMath, RowKernelsByHand) {
  // 19 elements (two 8-lane blocks and a tail of 3): max 9 at index 11; sum of e^(x - 9).
  std::vector<float> x(19), y(19);
  double expect = 0;
  for (int i = 0; i < 19; ++i) {
    x[i] = i == 11 ? 9.0f : static_cast<float>(i % 7) - 3.0f;
    expect += std::exp(static_cast<double>(x[i]) - 9.0);
  }
  EXPECT_EQ(ddpsim::exec::max_of(x.data(), 19), 9.0f);
  const float s = ddpsim::exec::exp_shifted_sum(x.data(), 9.0f, y.data(), 19);
  EXPECT_NEAR(s, expect, 1e-6 * expect);
  EXPECT_NEAR(y[11], 1.0f, 1e-7);
  // gelu_tanh(1) = 0.5 (1 + tanh(sqrt(2/pi) 1.044715)) = 0.841192; its derivative 1.082964.
  float z = 1.0f, g = 0, d = 1.0f;
  ddpsim::exec::gelu_tanh_forward(&z, &g, 1);
  ddpsim::exec::gelu_tanh_backward(&z, &d, 1);
  EXPECT_NEAR(g, 0.841192f, 1e-6);
  EXPECT_NEAR(d, 1.082964f, 1e-5);
}

TEST(Gpt2, RefusesWhatItDoesNotRun) {
  json cfg = tiny_config();
  auto refused = [](const json& c) {
    try {
      ddpsim::exec::gpt2_spec_from_config(c, 32, "cfg.json");
    } catch (const ddpsim::UnsupportedError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  json c = cfg;
  c.erase("attn_pdrop");  // GPT2Config's default 0.1
  EXPECT_NE(refused(c).find("attn_pdrop is 0.1"), std::string::npos) << refused(c);
  c = cfg;
  c["model_type"] = "llama";
  EXPECT_NE(refused(c).find("model_type llama"), std::string::npos);
  c = cfg;
  c["tie_word_embeddings"] = false;
  EXPECT_NE(refused(c).find("untied"), std::string::npos);
  c = cfg;
  c["activation_function"] = "relu";
  EXPECT_NE(refused(c).find("activation_function relu"), std::string::npos);
  EXPECT_EQ(refused(cfg), "");
}

}  // namespace
