// `ddpsim plan` over several systems (plan.hardware, each with its price and GPU range), a
// training target in tokens or samples, and the error bands every option carries.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "model/error.hpp"
#include "model/paths.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/planner.hpp"
#include "simulator/prediction/uncertainty.hpp"
#include "simulator/run.hpp"

namespace ddpsim::sim {
namespace {

using nlohmann::json;

TEST(PlanSystems, EachSystemHasItsSizesPriceAndBestAndTheCheaperIsChosen) {
  json d = json::parse(R"({
    "model": {"mlp": {"widths": [1024, 1024, 8]}},
    "cluster": {"gpus": 8},
    "training": {"per_gpu_batch": 64, "target": {"samples": 1e8}},
    "plan": {"objective": "cost", "hardware": [
      {"preset": "dgx-h100", "gpu_hour_usd": 2.5, "max_gpus": 16},
      {"preset": "dgx-h100", "gpu_hour_usd": 2.0, "max_gpus": 8}]}
  })");
  const model::Scenario s = model::parse_scenario(d, "systems.json");
  ASSERT_EQ(s.plan.systems.size(), 2u);
  const PlanResult r = plan(s);
  ASSERT_EQ(r.systems.size(), 2u);
  EXPECT_TRUE(r.by_cost);
  // Sizes: powers of two up to each system's max_gpus.
  EXPECT_EQ(r.systems[0].gpus, (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(r.systems[1].gpus, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(r.systems[0].candidates, 5u);
  EXPECT_EQ(r.systems[1].candidates, 4u);
  EXPECT_EQ(r.candidates, 9u);
  ASSERT_TRUE(r.systems[0].best && r.systems[1].best && r.chosen);
  // The same machine: the same cheapest size and step; the price alone separates them, so the
  // 2.00 one is chosen and costs 2.0 / 2.5 of the other.
  const PlanPoint& a = *r.systems[0].best;
  const PlanPoint& b = *r.systems[1].best;
  EXPECT_EQ(a.gpus, b.gpus);
  EXPECT_DOUBLE_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(r.chosen->system, 1u);
  EXPECT_EQ(r.chosen->system_label, "dgx-h100");
  EXPECT_NEAR(*b.cost_usd / *a.cost_usd, 2.0 / 2.5, 1e-12);
  // cost = steps x step x gpus / 3600 x price; steps = ceil(1e8 / (64 gpus)).
  const double steps = std::ceil(1e8 / (64.0 * b.gpus));
  EXPECT_DOUBLE_EQ(*b.steps_to_target, steps);
  EXPECT_NEAR(*b.cost_usd, steps * b.step_time_s * b.gpus / 3600.0 * 2.0, 1e-9 * *b.cost_usd);
  // Per million samples at that price; no tokens for an MLP.
  EXPECT_NEAR(*b.cost_per_million_samples, b.time_per_million_samples_s * b.gpus / 3600.0 * 2.0,
              1e-12);
  EXPECT_FALSE(b.cost_per_million_tokens);
  // Headroom: (1 - 0.05) x 80 GB - memory.
  EXPECT_NEAR(b.memory_headroom_bytes, 0.95 * s.hardware.gpu.memory_bytes - b.memory_per_gpu_bytes,
              1.0);
  // 25% dearer is inside the band exactly when the band's median |error| exceeds 25%.
  ASSERT_TRUE(a.uncertainty);
  EXPECT_EQ(r.systems[0].within_band_of_chosen, 0.25 < a.uncertainty->median_abs);
  // JSON: every system with its best, the comparison metric.
  const json j = plan_json(s, r);
  EXPECT_EQ(j.at("plan").at("systems").size(), 2u);
  EXPECT_EQ(j.at("plan").at("compares"), "cost");
  EXPECT_EQ(j.at("plan").at("chosen").at("system"), "dgx-h100");
  EXPECT_TRUE(j.at("plan").at("chosen").at("uncertainty").is_object());
}

TEST(PlanSystems, FirstSystemIsTheHardwareWhenTheFileHasNone) {
  json d = json::parse(R"({
    "model": {"mlp": {"widths": [64, 64, 8]}},
    "cluster": {"gpus": 8},
    "training": {"per_gpu_batch": 4},
    "plan": {"hardware": [{"preset": "dgx-a100", "gpu_hour_usd": 1.5}, {"preset": "dgx-h100"}]}
  })");
  const model::Scenario s = model::parse_scenario(d, "systems.json");
  EXPECT_EQ(s.hardware.gpu.name, s.plan.systems[0].scenario->hardware.gpu.name);
  EXPECT_EQ(s.gpu_hour_usd, 1.5);
  // One system unpriced: the front compares GPU-hours.
  EXPECT_FALSE(plan(s).by_cost);
}

TEST(PlanSystems, ErrorsInASystemNameItsEntry) {
  auto pointer_of = [](const json& d) {
    try {
      model::parse_scenario(d, "systems.json");
    } catch (const InputError& e) {
      return e.pointer();
    }
    return std::string("no error");
  };
  json d = json::parse(R"({
    "model": {"mlp": {"widths": [64, 64, 8]}},
    "cluster": {"gpus": 8},
    "training": {"per_gpu_batch": 4},
    "plan": {"objective": "cost", "hardware": [{"preset": "dgx-h100", "gpu_hour_usd": 2},
                                               {"preset": "dgx-a100"}]}
  })");
  EXPECT_EQ(pointer_of(d), "/plan/hardware/1/gpu_hour_usd");
  d["plan"]["hardware"][1] = {{"preset", "dgx-a100"}, {"gpu_hour_usd", 1}, {"max_gpus", 0}};
  EXPECT_EQ(pointer_of(d), "/plan/hardware/1/max_gpus");
  d["plan"]["hardware"][1] = {{"preset", "dgx-a100"}, {"gpu_hour_usd", 1}, {"gpu", {"tflops", 1}}};
  EXPECT_EQ(pointer_of(d).rfind("/plan/hardware/1/gpu", 0), 0u);
}

TEST(TrainingTarget, TokensAreSamplesOfTheSequenceLength) {
  // GPT-2 XL at seq 1024 on 8 GPUs x 4: B = 32 samples; 1e9 tokens = 976,562.5 samples =
  // 30,517.58 steps, so 30,518 whole steps; time = steps x step, GPU-hours x 8 / 3600, cost x 2.5.
  json d = json::parse(R"({
    "model": {"preset": "gpt2-xl"}, "hardware": {"preset": "dgx-h100"}, "cluster": {"gpus": 8},
    "training": {"per_gpu_batch": 4, "target": {"tokens": 1e9}}, "pricing": {"gpu_hour_usd": 2.5}
  })");
  const model::Scenario s = model::parse_scenario(d, "tokens.json");
  EXPECT_DOUBLE_EQ(*s.training.target_samples, 1e9 / 1024);
  const Prediction p = predict(s).predictions.at(0);
  EXPECT_DOUBLE_EQ(*p.steps_to_target, 30518);
  EXPECT_DOUBLE_EQ(*p.time_to_train_s, 30518 * p.step_time_s);
  EXPECT_DOUBLE_EQ(*p.gpu_hours, 30518 * p.step_time_s * 8 / 3600.0);
  EXPECT_DOUBLE_EQ(*p.cost_usd, *p.gpu_hours * 2.5);
  // samples: the same steps without the division.
  d["training"]["target"] = {{"samples", 976562.5}};
  EXPECT_DOUBLE_EQ(*predict(model::parse_scenario(d, "s.json")).predictions.at(0).steps_to_target,
                   30518);
}

TEST(Uncertainty, TheNarrowestClassWithEnoughRowsGivesTheBand) {
  const std::vector<PublishedError> rows = {{"a", "h100-sxm", "ddp", 1.5e9, 0.10, false},
                                            {"b", "h100-sxm", "ddp", 2e9, -0.05, true},
                                            {"c", "h100-sxm", "ddp", 7e9, 0.20, false},
                                            {"d", "a100-sxm-80gb", "ddp", 1e9, 0.30, false},
                                            {"e", "h100-sxm", "fsdp2", 70e9, 0.02, false}};
  // h100, ddp, 1-10B: rows a, b, c. |e| = .10, .05, .20: median .10, max .20; signed median .10,
  // min -.05, max .20.
  auto u = uncertainty_from(rows, "h100-sxm", model::Strategy::kDdp, 3e9);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->matched_on, "gpu, strategy and size");
  EXPECT_EQ(u->rows, 3u);
  EXPECT_DOUBLE_EQ(u->median_abs, 0.10);
  EXPECT_DOUBLE_EQ(u->max_abs, 0.20);
  EXPECT_DOUBLE_EQ(u->median, 0.10);
  EXPECT_DOUBLE_EQ(u->min, -0.05);
  // a100 has one row: every a100 level is too small; ddp at 1-10B has four (a, b, c, d):
  // |e| .05 .10 .20 .30, median .15.
  u = uncertainty_from(rows, "a100-sxm-80gb", model::Strategy::kDdp, 3e9);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->matched_on, "strategy and size");
  EXPECT_EQ(u->rows, 4u);
  EXPECT_DOUBLE_EQ(u->median_abs, 0.15);
  // Nothing like it: every row.
  u = uncertainty_from(rows, "v100-sxm2-32gb", model::Strategy::kZero3, 500e9);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->matched_on, "all rows");
  EXPECT_EQ(u->rows, 5u);
  EXPECT_EQ(u->size_class, ">=100B");
  // The measured step of a run like it: predicted x (1 + e), e from -.05 to .30.
  const json j = uncertainty_json(*u, 2.0);
  EXPECT_DOUBLE_EQ(j.at("step_time_s_range")[0].get<double>(), 2.0 * 0.95);
  EXPECT_DOUBLE_EQ(j.at("step_time_s_range")[1].get<double>(), 2.0 * 1.30);
  EXPECT_FALSE(uncertainty_from({}, "h100-sxm", model::Strategy::kDdp, 1e9));
}

TEST(Uncertainty, EveryPredictionOfThePresetsCarriesABandFromTheData) {
  // scenarios/data/uncertainty.json is generated by `ddpsim fidelity`: rows exist and the default
  // scenario's class has a band in its JSON.
  ASSERT_FALSE(published_errors().empty());
  const model::Scenario s = model::load_scenario(model::data_dir().string() + "/default.json");
  const json doc = run_json(s, predict(s));
  EXPECT_TRUE(doc.at("results").at(0).at("uncertainty").at("rows").get<int>() >= 1);
}

}  // namespace
}  // namespace ddpsim::sim
