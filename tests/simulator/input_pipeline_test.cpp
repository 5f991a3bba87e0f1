// training.input_pipeline: a step takes at least its samples over the loader's rate
// (simulator/analytic/step_plan.hpp input_floor_s), in both engines, by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/step_plan.hpp"
#include "simulator/run.hpp"

namespace ddpsim::sim {
namespace {

using nlohmann::json;

// NVIDIA DeepLearningExamples' ResNet-50 (ConvNets/configs.yml: data_backend pytorch, PIL
// decoding in DataLoader workers): the whole node's CPUs decode for its 8 GPUs. A node
// delivering 16,600 images/s gives each of 8 GPUs 2,075/s.
// `pipeline` null: no input_pipeline key.
json resnet_doc(int gpus, json pipeline) {
  json doc = {
      {"model", {{"preset", "resnet50"}}},
      {"hardware", {{"preset", "dgx-a100"}}},
      {"cluster", {{"gpus", gpus}}},
      {"training", {{"per_gpu_batch", 256}, {"precision", "amp_fp16"}, {"optimizer", "momentum"}}}};
  if (!pipeline.is_null()) doc["training"]["input_pipeline"] = std::move(pipeline);
  return doc;
}

// By hand: 8 GPUs, batch 256: 256 / (16,600 / 8) = 0.123373 s, i.e. 16,600 images/s for the
// job, whatever the GPUs could do faster; one GPU gets the node's 16,600/s: 256 / 16,600 =
// 0.015422 s, below its compute, so it does not bind.
TEST(InputPipeline, FloorByHand) {
  model::TrainingConfig t;
  t.per_gpu_batch = 256;
  t.input_samples_per_s_per_node = 16600;
  EXPECT_DOUBLE_EQ(input_floor_s(t, 8, 8), 256.0 / 2075.0);
  EXPECT_DOUBLE_EQ(input_floor_s(t, 1, 8), 256.0 / 16600.0);
  EXPECT_DOUBLE_EQ(input_floor_s(t, 64, 8), 256.0 / 2075.0);  // per node, 8 GPUs each
  t.grad_accumulation = 2;
  EXPECT_DOUBLE_EQ(input_floor_s(t, 8, 8), 512.0 / 2075.0);
  t.input_samples_per_s_per_node.reset();
  t.input_samples_per_s_per_gpu = 1000;
  EXPECT_DOUBLE_EQ(input_floor_s(t, 8, 8), 0.512);
  t.input_samples_per_s_per_gpu.reset();
  EXPECT_EQ(input_floor_s(t, 8, 8), 0.0);
}

// A slow loader, 8,000 images/s a node (1,000 per GPU): 8 GPUs of batch 256 wait 0.256 s a step
// for their images, longer than they compute (about 0.14 s here), so the job runs at 8,000/s.
TEST(InputPipeline, BindsTheStepInBothEngines) {
  const model::Scenario s =
      model::parse_scenario(resnet_doc(8, {{"samples_per_s_per_node", 8000}}), "r.json");
  const model::Scenario free = model::parse_scenario(resnet_doc(8, json()), "r.json");
  for (model::Engine e : {model::Engine::kAnalytic, model::Engine::kEvent}) {
    RunOptions on;
    on.engine = e;
    const Prediction p = predict(s, on).predictions.at(0);
    const Prediction unbound = predict(free, on).predictions.at(0);
    ASSERT_LT(unbound.step_time_s, 0.256) << "the GPUs alone must be faster here";
    EXPECT_DOUBLE_EQ(p.step_time_s, 0.256);
    EXPECT_NEAR(p.throughput_samples_per_s, 8000.0, 1e-6);
    bool warned = false;
    for (const std::string& w : p.warnings) warned |= w.rfind("input-bound:", 0) == 0;
    EXPECT_TRUE(warned);
  }
  // One GPU has the whole node's loader: it stays compute-bound.
  const model::Scenario one =
      model::parse_scenario(resnet_doc(1, {{"samples_per_s_per_node", 8000}}), "r.json");
  const model::Scenario one_free = model::parse_scenario(resnet_doc(1, json()), "r.json");
  EXPECT_DOUBLE_EQ(predict(one).predictions.at(0).step_time_s,
                   predict(one_free).predictions.at(0).step_time_s);
}

TEST(InputPipeline, ExactlyOneRate) {
  const auto pointer_of = [](json pipeline) {
    try {
      model::parse_scenario(resnet_doc(8, std::move(pipeline)), "r.json");
    } catch (const InputError& e) {
      return e.pointer();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(pointer_of({{"samples_per_s_per_gpu", 1}, {"samples_per_s_per_node", 8}}),
            "/training/input_pipeline");
  EXPECT_EQ(pointer_of({{"samples_per_s_per_gpu", 0}}),
            "/training/input_pipeline/samples_per_s_per_gpu");
  EXPECT_EQ(pointer_of(json::object()), "/training/input_pipeline");
  EXPECT_EQ(pointer_of({{"samples_per_s_per_node", 8}}), "accepted");
}

}  // namespace
}  // namespace ddpsim::sim
