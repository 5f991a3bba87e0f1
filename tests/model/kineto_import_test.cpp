// kineto_import_test.cpp: PyTorch profiler (Kineto) traces into a "layer_times" profile section
// (model/kineto_import.hpp).
#include "model/kineto_import.hpp"

#include <gtest/gtest.h>

#include <string>

#include "model/error.hpp"
#include "model/measurement_import.hpp"
#include "model/profile.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

const std::string kData = DDPSIM_TEST_DATA_DIR;

// Hand-computed in tests/data/kineto/README.md.
TEST(KinetoImport, GpuTraceAttributesKernelsToLayers) {
  const json l = import_kineto_file(kData + "/kineto/mlp_step_gpu.json");
  EXPECT_EQ(l["device"].get<std::string>(), "gpu");
  const json& layers = l["layers"];
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0]["name"].get<std::string>(), "fc1");
  EXPECT_EQ(layers[1]["name"].get<std::string>(), "relu");
  EXPECT_EQ(layers[2]["name"].get<std::string>(), "fc2");
  EXPECT_NEAR(layers[0]["forward_s"].get<double>(), 50e-6, 1e-15);
  EXPECT_NEAR(layers[0]["backward_s"].get<double>(), 45e-6, 1e-15);
  EXPECT_NEAR(layers[1]["forward_s"].get<double>(), 8e-6, 1e-15);
  EXPECT_NEAR(layers[1]["backward_s"].get<double>(), 6e-6, 1e-15);
  EXPECT_NEAR(layers[2]["forward_s"].get<double>(), 40e-6, 1e-15);
  // 35 us by External id + 30 us found through the launch's correlation id.
  EXPECT_NEAR(layers[2]["backward_s"].get<double>(), 65e-6, 1e-15);
  EXPECT_EQ(layers[2]["backward_events"].get<int>(), 2);
  EXPECT_NEAR(l["unattributed_s"].get<double>(), 100e-6, 1e-15);  // optimizer + memcpy
  EXPECT_NEAR(l["step_s"].get<double>(), 1000e-6, 1e-15);
  // As a profile section.
  const Profile p = Profile::from_json(imported_profile(nullptr, l, "test"), "mlp_step_gpu.json");
  ASSERT_EQ(p.layer_times().size(), 3u);
  EXPECT_NEAR(p.layer_times()[2].backward_s, 65e-6, 1e-15);
}

TEST(KinetoImport, CpuTraceSumsOutermostOps) {
  const json l = import_kineto_file(kData + "/kineto/mlp_step_cpu.json");
  EXPECT_EQ(l["device"].get<std::string>(), "cpu");
  const json& layers = l["layers"];
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_NEAR(layers[0]["forward_s"].get<double>(), 90e-6, 1e-15);
  EXPECT_NEAR(layers[0]["backward_s"].get<double>(), 60e-6, 1e-15);
  EXPECT_NEAR(layers[1]["forward_s"].get<double>(), 25e-6, 1e-15);
  EXPECT_NEAR(layers[1]["backward_s"].get<double>(), 30e-6, 1e-15);
  EXPECT_NEAR(layers[2]["forward_s"].get<double>(), 80e-6, 1e-15);
  EXPECT_NEAR(layers[2]["backward_s"].get<double>(), 100e-6, 1e-15);
  EXPECT_NEAR(l["unattributed_s"].get<double>(), 100e-6, 1e-15);
}

TEST(KinetoImport, RejectsTracesWithoutRegions) {
  const json t = {
      {"traceEvents",
       {{{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"ts", 0}, {"dur", 5}}}}};
  EXPECT_THROW(import_kineto_trace(t, "t.json"), InputError);
  EXPECT_THROW(import_kineto_trace(json::object(), "t.json"), InputError);
  const json bad = {{"traceEvents", {{{"ph", "X"}, {"name", "x"}, {"ts", "zero"}, {"dur", 5}}}}};
  try {
    (void)import_kineto_trace(bad, "t.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/traceEvents/0");
  }
}

}  // namespace
}  // namespace ddpsim::model
