// A profile's torch section (simulator/analytic/torch_profile.hpp) in a prediction: read once,
// looked up per size, and applied by the Predictor for every front-end of the run API. The profile
// is tests/data/profile/tiny-profile.json with a torch section written by hand for tiny-mlp.json
// (layers fc0 and fc1 of a 64-128-32 MLP, batch 8, Adam, 2 ranks):
//   layers: fc0 forward 1 ms, backward 3 ms; fc1 forward 2 ms, backward 4 ms; optimizer 5 ms;
//   all_reduce: 16384 B sync 100 us, pair 80 us; 32768 B sync 150 us, pair 120 us;
//   contention (one size): compute slowdown 1.5, all-reduce slowdown 2.
#include "simulator/analytic/torch_profile.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/profile/profile.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/run.hpp"
#include "tests/test_data_dir.hpp"

namespace ddpsim::sim {
namespace {

using nlohmann::json;

using test_data::kProfileDir;

json torch_section(const model::Workload& w, std::int64_t batch) {
  json layers = json::array();
  const double fwd[] = {1e-3, 2e-3}, bwd[] = {3e-3, 4e-3};
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    layers.push_back({{"name", w.layers[i].name}, {"forward_s", fwd[i]}, {"backward_s", bwd[i]}});
  }
  return {{"torch_version", "1.13.1"},
          {"ranks", 2},
          {"gloo_threads", 2},
          {"workloads",
           {{{"workload", w.name},
             {"parameters", w.param_count()},
             {"per_gpu_batch", batch},
             {"optimizer", "adam"},
             {"optimizer_s", 5e-3},
             {"layers", layers}}}},
          {"all_reduce",
           {{{"size_bytes", 16384}, {"sync_s", 100e-6}, {"pair_s", 80e-6}},
            {{"size_bytes", 32768}, {"sync_s", 150e-6}, {"pair_s", 120e-6}}}},
          {"contention",
           {{"compute", "synthetic MLP"},
            {"size_bytes", 16384},
            {"compute_alone_s", 1e-3},
            {"compute_overlapped_s", 1.5e-3},
            {"all_reduce_alone_s", 1e-4},
            {"compute_slowdown", 1.5},
            {"all_reduce_slowdown", 2.0},
            {"by_size",
             {{{"size_bytes", 16384}, {"compute_slowdown", 1.5}, {"all_reduce_slowdown", 2.0}}}}}}};
}

// The tiny profile with the torch section for tiny-mlp.json's workload, written to a file.
std::string torch_profile_file(const model::Scenario& s) {
  json doc = model::read_json_file(kProfileDir + "tiny-profile.json");
  doc["torch"] = torch_section(*s.workload, s.training.per_gpu_batch);
  const std::string path = testing::TempDir() + "/torch-profile.json";
  std::ofstream(path) << doc.dump(1);
  return path;
}

TEST(TorchCalibrationTest, InterpolatesAllReduceAndContentionByHand) {
  json doc = model::read_json_file(kProfileDir + "tiny-profile.json");
  const model::Scenario s = model::load_scenario(kProfileDir + "tiny-mlp.json");
  doc["torch"] = torch_section(*s.workload, 8);
  constexpr std::int64_t kMiB = 1048576;
  doc["torch"]["all_reduce"] = {{{"size_bytes", kMiB}, {"sync_s", 3e-3}, {"pair_s", 2e-3}},
                                {{"size_bytes", 2 * kMiB}, {"sync_s", 5e-3}, {"pair_s", 3e-3}}};
  doc["torch"]["contention"]["by_size"] = {
      {{"size_bytes", 4 * kMiB}, {"compute_slowdown", 1.6}, {"all_reduce_slowdown", 2.5}},
      {{"size_bytes", kMiB}, {"compute_slowdown", 1.2}, {"all_reduce_slowdown", 0.9}}};
  const auto c = TorchCalibration::from_profile(model::Profile::from_json(doc, "p.json"));
  ASSERT_TRUE(c.has_value());
  // Linear in size between the rows, the first row's below, the last segment's line above.
  EXPECT_DOUBLE_EQ(*c->all_reduce_s(1.5 * kMiB, false), 4e-3);
  EXPECT_DOUBLE_EQ(*c->all_reduce_s(1.5 * kMiB, true), 2.5e-3);
  EXPECT_DOUBLE_EQ(*c->all_reduce_s(4.0 * kMiB, false), 9e-3);
  EXPECT_DOUBLE_EQ(*c->all_reduce_s(65536, false), 3e-3);
  // log2-size interpolation: 2 MiB is halfway from 1 to 4 MiB; the 1 MiB row's 0.9 all-reduce
  // slowdown is noise, taken as 1 (sharing the cores cannot speed it up).
  const auto mid = c->contention_at(2.0 * kMiB);
  EXPECT_NEAR(mid->compute_slowdown, 1.4, 1e-12);
  EXPECT_NEAR(mid->collective_slowdown, 1.75, 1e-12);
  EXPECT_DOUBLE_EQ(c->contention_at(512.0 * 1024)->collective_slowdown, 1.0);
  EXPECT_DOUBLE_EQ(c->contention_at(64.0 * kMiB)->compute_slowdown, 1.6);
  EXPECT_EQ(c->gloo_threads(), 2);
}

TEST(TorchCalibrationTest, EntryIsTheWorkloadAtItsBatchAndOptimizer) {
  const model::Scenario s = model::load_scenario(kProfileDir + "tiny-mlp.json");
  json doc = model::read_json_file(kProfileDir + "tiny-profile.json");
  doc["torch"] = torch_section(*s.workload, 8);
  const auto c = TorchCalibration::from_profile(model::Profile::from_json(doc, "p.json"));
  std::string why;
  const TorchCalibration::Entry* e = c->entry(*s.workload, 8, model::Optimizer::kAdam, &why);
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(*e->costs.optimizer_s, 5e-3);
  EXPECT_EQ(c->entry(*s.workload, 16, model::Optimizer::kAdam, &why), nullptr);
  EXPECT_NE(why.find("per_gpu_batch 16"), std::string::npos) << why;
  EXPECT_EQ(c->entry(*s.workload, 8, model::Optimizer::kSgd, &why), nullptr);
  doc["torch"]["workloads"][0]["layers"][1]["name"] = "fc9";
  const auto renamed = TorchCalibration::from_profile(model::Profile::from_json(doc, "p.json"));
  EXPECT_EQ(renamed->entry(*s.workload, 8, model::Optimizer::kAdam, &why), nullptr);
  EXPECT_NE(why.find("layer 1 is fc9"), std::string::npos) << why;
}

TEST(TorchCalibrationTest, ThePredictorAppliesItForEveryFrontEnd) {
  const model::Scenario base = model::load_scenario(kProfileDir + "tiny-mlp.json");
  const std::string profile = torch_profile_file(base);
  // `ddpsim predict tiny-mlp.json --profile P` reads the scenario this way.
  const model::Scenario s = model::load_scenario(kProfileDir + "tiny-mlp.json", profile);
  const Prediction p = predict_point(s);
  // Forward 1 + 2 ms; backward from 3 ms: fc1 (4 ms) ends at 7 ms and readies bucket 0
  // (fc1.weight, 16384 B, 100 us alone); beside fc0's backward both slow down (compute 1.5x,
  // the all-reduce 2x): the bucket ends 200 us later at 7.2 ms, fc0 has done 200 / 1.5 us of
  // its 3 ms and runs the rest alone: 10.06667 ms; bucket 1 (32768 B, 150 us) runs alone after
  // it: 10.21667 ms; + the optimizer's 5 ms. No Reducer copies: the measured backward holds
  // them.
  const double bwd_end = 7.2e-3 + (3e-3 - 200e-6 / 1.5);
  ASSERT_EQ(p.buckets.size(), 2u);
  EXPECT_NEAR(p.forward_time_s, 3e-3, 1e-15);
  EXPECT_NEAR(p.buckets[0].end_s, 7.2e-3, 1e-15);
  EXPECT_NEAR(p.buckets[1].end_s, bwd_end + 150e-6, 1e-15);
  EXPECT_NEAR(p.optimizer_time_s, 5e-3, 1e-15);
  EXPECT_NEAR(p.step_time_s, bwd_end + 150e-6 + 5e-3, 1e-15);
  EXPECT_NEAR(p.exposed_comm_s, 150e-6, 1e-15);
  EXPECT_NEAR(p.comm_time_s, 350e-6, 1e-15);
  // The event engine lays out the same plan.
  RunOptions event;
  event.engine = model::Engine::kEvent;
  event.steps = 2;
  const Prediction e = predict_point(s, event);
  EXPECT_NEAR(e.step_time_s, p.step_time_s, 2e-9);
  ASSERT_TRUE(p.measured.has_value());
  EXPECT_EQ(p.measured->collectives, "profile");
  // Another rank count: gloo was timed on 2 ranks, so the collectives are the CPU profile's
  // model's, and the prediction says so; the layers and optimizer stay torch's.
  model::Scenario three = s;
  three.cluster.gpus = 3;
  const Prediction q = predict_point(three);
  EXPECT_NEAR(q.optimizer_time_s, 5e-3, 1e-15);
  bool said = false;
  for (const std::string& w : q.warnings)
    said |= w.find("timed gloo on 2 ranks") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace ddpsim::sim
