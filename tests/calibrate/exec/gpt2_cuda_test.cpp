// The CUDA backend's GPT-2 (calibrate/exec/gpt2_cuda.hpp) against the CPU network it is built
// from (gpt2.hpp, fp32, checked against finite differences): the same parameters and tokens give
// the same loss within bf16 rounding and, tensor by tensor, gradients pointing the same way.
// Label gpu: each test skips without a device (or in a build without CUDA).
#include "calibrate/exec/gpt2_cuda.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "calibrate/exec/gpt2.hpp"

namespace {

using ddpsim::exec::CudaRunOptions;
using ddpsim::exec::Gpt2;
using ddpsim::exec::Gpt2Spec;

Gpt2Spec spec_of(std::int64_t seq) {
  // scripts/gpu-run.sh runs this binary from a bundle, away from the build's source tree.
  const char* env = std::getenv("DDPSIM_TEST_DATA_DIR");
  std::ifstream f(std::string(env ? env : DDPSIM_TEST_DATA_DIR) + "/exec/gpt2-tiny-config.json");
  return ddpsim::exec::gpt2_spec_from_config(nlohmann::json::parse(f), seq, "cfg.json");
}

TEST(Gpt2Cuda, GradientsMatchTheCpuNetwork) {
  const Gpt2Spec spec = spec_of(32);
  CudaRunOptions o;
  o.batch = 4;
  o.steps = 1;
  o.warmup_steps = 0;
  o.seed = 3;
  o.keep_first_gradients = true;
  const auto r = ddpsim::exec::run_gpt2_cuda(spec, o);
  if (!r.ran) GTEST_SKIP() << r.why;

  std::vector<std::int64_t> samples(4);
  std::iota(samples.begin(), samples.end(), 0);
  Gpt2 cpu(spec, o.seed * 1000003ull + 1, o.seed, samples, o.batch);
  const float loss = cpu.forward_loss(0, 1.0f, {});
  cpu.backward(false, {});
  EXPECT_NEAR(r.first_loss, loss, 0.01 * loss);
  ASSERT_EQ(r.first_gradients.size(), cpu.grads().size());
  for (int t = 0; t < cpu.tensor_count(); ++t) {
    if (cpu.tied(t)) continue;
    double dot = 0, nc = 0, ng = 0;
    for (std::int64_t i = cpu.offset(t); i < cpu.offset(t) + cpu.numel(t); ++i) {
      const double c = cpu.grads()[static_cast<std::size_t>(i)];
      const double g = r.first_gradients[static_cast<std::size_t>(i)];
      dot += c * g;
      nc += c * c;
      ng += g * g;
    }
    ASSERT_GT(nc, 0) << t;
    EXPECT_GT(dot / std::sqrt(nc * ng), 0.98) << "tensor " << t << " points elsewhere";
    EXPECT_NEAR(std::sqrt(ng / nc), 1.0, 0.05) << "tensor " << t << "'s norm";
  }
}

TEST(Gpt2Cuda, TrainsAndReportsItsMemory) {
  const Gpt2Spec spec = spec_of(32);
  CudaRunOptions o;
  o.batch = 8;
  o.steps = 30;
  o.lr = 3e-3f;
  const auto r = ddpsim::exec::run_gpt2_cuda(spec, o);
  if (!r.ran) GTEST_SKIP() << r.why;
  ASSERT_EQ(r.steps.size(), 30u);
  EXPECT_LT(r.steps.back().loss, r.first_loss - 0.5f);
  for (const auto& s : r.steps) {
    EXPECT_GT(s.forward_s, 0);
    EXPECT_GT(s.backward_s, 0);
    EXPECT_GT(s.optimizer_s, 0);
  }
  // Masters, gradients and both Adam moments in fp32 and a bf16 copy: 18 bytes a parameter,
  // plus cuBLAS's 32 MiB workspace, at least.
  EXPECT_GE(r.peak_bytes, 18 * r.param_count + (32 << 20));
  EXPECT_GE(r.device_used_bytes, r.peak_bytes);
}

}  // namespace
