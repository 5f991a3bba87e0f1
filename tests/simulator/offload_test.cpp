// DeepSpeed ZeRO-Offload (parallelism.offload): the optimizer step on the host and the PCIe
// copies around it, by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"

namespace ddpsim::sim {
namespace {

using nlohmann::json;

json doc(const std::string& strategy, const json& offload) {
  json d = {{"model", {{"mlp", {{"widths", {999, 1000}}}}}},  // 999,000 + 1,000 = 1e6 parameters
            {"hardware", {{"preset", "dgx-a100"}}},
            {"cluster", {{"gpus", 8}}},
            {"training", {{"per_gpu_batch", 8}, {"precision", "bf16"}, {"optimizer", "adam"}}},
            {"parallelism", {{"strategy", strategy}}}};
  if (!offload.is_null()) d["parallelism"]["offload"] = offload;
  return d;
}

// ZeRO-2 on 8 GPUs: each rank's partition is 1e6 / 8 = 125,000 parameters. The host steps it at
// 1e8 parameters/s (1.25 ms), then its 16-bit copy crosses PCIe (250,000 bytes at the preset's
// PCIe rate). The optimizer states (12 bytes per parameter for bf16 + Adam: fp32 master weights
// and two moments) leave the GPU.
TEST(ZeroOffload, HostAdamAndPcieCopies) {
  const model::Scenario s =
      model::parse_scenario(doc("zero2", {{"host_adam_params_per_s", 1e8}}), "offload.json");
  const double pcie = s.hardware.pcie.bandwidth;
  const Predictor p(s);
  const Prediction r = p.predict(s.cluster, s.training, s.parallelism, std::nullopt, 0.0);
  EXPECT_NEAR(r.optimizer_time_s, 125'000.0 / 1e8 + 250'000.0 / pcie, 1e-12);
  EXPECT_DOUBLE_EQ(r.memory.optimizer_bytes, 0.0);
  const model::Scenario plain = model::parse_scenario(doc("zero2", nullptr), "plain.json");
  const Prediction q =
      Predictor(plain).predict(plain.cluster, plain.training, plain.parallelism, std::nullopt, 0.0);
  EXPECT_DOUBLE_EQ(q.memory.optimizer_bytes, 12.0 * 125'000);
  // offload_param: the parameters stay on the host, nothing comes back after the step.
  const model::Scenario z3 = model::parse_scenario(
      doc("zero3", {{"host_adam_params_per_s", 1e8}, {"param", true}}), "z3.json");
  const Prediction t =
      Predictor(z3).predict(z3.cluster, z3.training, z3.parallelism, std::nullopt, 0.0);
  EXPECT_NEAR(t.optimizer_time_s, 125'000.0 / 1e8, 1e-12);
  EXPECT_DOUBLE_EQ(t.memory.params_bytes, 0.0);
}

TEST(ZeroOffload, RefusedOutsideZero) {
  try {
    model::parse_scenario(doc("ddp", {{"host_adam_params_per_s", 1e8}}), "ddp.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/parallelism/offload");
  }
  try {
    model::parse_scenario(doc("zero2", {{"host_adam_params_per_s", 1e8}, {"param", true}}),
                          "z2.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/parallelism/offload/param");
  }
  try {
    model::parse_scenario(doc("zero2", json::object()), "norate.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/parallelism/offload/host_adam_params_per_s");
  }
}

}  // namespace
}  // namespace ddpsim::sim
