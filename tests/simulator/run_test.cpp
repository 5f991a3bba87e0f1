// The run API (simulator/run.hpp): every knob reaches the engines from the scenario, a sweep's
// points equal the same points predicted alone (the cached Predictor never carries one point's
// hardware or interference into the next), and the checks made before anything runs.
#include "simulator/run.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/report.hpp"

namespace ddpsim::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json base_doc() {
  return {{"name", "run test"},
          {"model", {{"preset", "gpt2-xl"}}},
          {"hardware", {{"preset", "dgx-h100"}}},
          {"cluster", {{"gpus", 16}}},
          {"training", {{"per_gpu_batch", 4}, {"precision", "amp_bf16"}}}};
}

model::Scenario scenario(const json& doc) { return model::parse_scenario(doc, "run.json"); }

TEST(RunTest, EventOptionsComeFromTheScenario) {
  json d = base_doc();
  d["simulation"] = {{"steps", 7},
                     {"jitter_cv", 0.05},
                     {"jitter_distribution", "lognormal"},
                     {"seed", 42},
                     {"straggler_rank", 3},
                     {"straggler_slowdown", 0.2},
                     {"local_sgd_period", 4},
                     {"trace_ranks", 8},
                     {"network", "flow"},
                     {"background_traffic", 0.25},
                     {"concurrent_jobs", 2}};
  d["training"]["target"] = {{"steps_multiplier", 1.3}};
  const model::Scenario s = scenario(d);
  EventOptions e = event_options(s);
  EXPECT_EQ(e.steps, 7);
  EXPECT_EQ(e.jitter_cv, 0.05);
  EXPECT_EQ(e.jitter_distribution, model::JitterDistribution::kLogNormal);
  EXPECT_EQ(e.seed, 42u);
  EXPECT_EQ(e.straggler_rank, 3);
  EXPECT_EQ(e.straggler_slowdown, 0.2);
  EXPECT_EQ(e.local_sgd_period, 4);
  EXPECT_EQ(e.timeline_max_ranks, 8);
  EXPECT_TRUE(e.network_flow);
  EXPECT_EQ(e.contention.background_traffic, 0.25);
  EXPECT_EQ(e.contention.concurrent_jobs, 2);
  EXPECT_EQ(e.hardware, &s.hardware);
  ASSERT_TRUE(e.target_steps_multiplier.has_value());
  EXPECT_EQ(*e.target_steps_multiplier, 1.3);
  EXPECT_FALSE(e.record_timeline);
  // The front-end's overrides: steps, a recorded timeline and its ranks.
  RunOptions o;
  o.steps = 1;
  o.keep_timeline = true;
  o.timeline_ranks = 2;
  e = event_options(s, o);
  EXPECT_EQ(e.steps, 1);
  EXPECT_TRUE(e.record_timeline);
  EXPECT_EQ(e.timeline_max_ranks, 2);
}

// A sweep over knobs that change the Predictor's hardware (gpus_per_node) or the plan's
// interference: every point must equal the same point predicted alone, with both engines.
TEST(RunTest, SweepPointsEqualThePointsAlone) {
  json d = base_doc();
  d["sweep"] = {{"simulation.interference", {1.0, 1.5}}, {"cluster.gpus_per_node", {8, 4}}};
  const model::Scenario s = scenario(d);
  for (model::Engine engine : {model::Engine::kAnalytic, model::Engine::kEvent}) {
    RunOptions o;
    o.engine = engine;
    const sim::Run r = predict(s, o);
    ASSERT_EQ(r.points.size(), 4u);
    for (std::size_t i = 0; i < r.points.size(); ++i) {
      const Prediction alone = predict_point(r.points[i], o);
      EXPECT_EQ(prediction_json(r.points[i], r.predictions[i]), prediction_json(r.points[i], alone))
          << engine_name(engine) << " point " << r.points[i].point.dump();
    }
    // And the knobs matter. Axes in alphabetical order, the last fastest: (8, 1.0), (8, 1.5),
    // (4, 1.0), (4, 1.5). Interference 1.5 slows the overlapped backward; 4 GPUs per node
    // make 4 nodes of the 16 GPUs, whose all-reduces cross the network more.
    EXPECT_GT(r.predictions[1].step_time_s, r.predictions[0].step_time_s);
    EXPECT_NE(r.predictions[2].comm_time_s, r.predictions[0].comm_time_s);
  }
}

TEST(RunTest, ChecksBeforeAnythingRuns) {
  json d = base_doc();
  d["simulation"] = {{"straggler_rank", 16}};
  try {
    predict(scenario(d));
    FAIL() << "a straggler outside the cluster";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/simulation/straggler_rank");
  }
  RunOptions o;
  o.trace_path = "never.json";
  o.engine = model::Engine::kAnalytic;
  EXPECT_THROW(predict(scenario(base_doc()), o), Error);  // a trace needs the event engine
  EXPECT_FALSE(fs::exists("never.json"));
}

TEST(RunTest, OneTraceFilePerSweepPoint) {
  const fs::path dir = fs::temp_directory_path() / ("ddpsim-run-" + std::to_string(getpid()));
  fs::remove_all(dir);
  json d = base_doc();
  d["sweep"] = {{"cluster.gpus", {8, 16}}};
  RunOptions o;
  o.engine = model::Engine::kEvent;
  o.trace_path = (dir / "t.json").string();
  o.keep_timeline = true;
  const sim::Run r = predict(scenario(d), o);
  EXPECT_TRUE(fs::exists(dir / "t.1.json"));
  EXPECT_TRUE(fs::exists(dir / "t.2.json"));
  EXPECT_FALSE(fs::exists(dir / "t.json"));
  ASSERT_EQ(r.timelines.size(), 2u);
  EXPECT_FALSE(r.timelines[1].empty());
  const json doc = run_json(scenario(d), r);
  EXPECT_EQ(doc.at("context").at("engine"), "event");
  EXPECT_EQ(doc.at("results").size(), 2u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ddpsim::sim
