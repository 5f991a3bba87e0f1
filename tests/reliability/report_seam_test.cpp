// The report seam guard and the input guards in front of the engines (simulator/report.hpp):
// no NaN or inf reaches a written document, and inputs that would produce one, overflow the event
// engine's clock or run unbounded are refused as InputError naming the key.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/input_guards.hpp"
#include "simulator/report.hpp"

namespace {

using nlohmann::json;
using namespace ddpsim;

model::Scenario scenario(const json& patch = json::object()) {
  json doc = {{"model", {{"preset", "gpt2-xl"}}},
              {"hardware", {{"preset", "dgx-h100"}}},
              {"cluster", {{"gpus", 8}}},
              {"training", {{"per_gpu_batch", 4}}}};
  doc.merge_patch(patch);
  return model::parse_scenario(doc, "s.json");
}

std::string logic_error_of(const json& j) {
  try {
    sim::check_finite(j);
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

TEST(ReportSeam, NaNAndInfAnywhereAreInternalErrorsNamingThePointer) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(logic_error_of({{"a", 1.0}, {"b", {1, 2.5, nullptr}}}), "");
  EXPECT_NE(logic_error_of({{"a", {{"b", {0.0, nan}}}}}).find("/a/b/1"), std::string::npos);
  EXPECT_NE(logic_error_of({{"x", -inf}}).find("/x"), std::string::npos);
  EXPECT_NE(logic_error_of(json(inf)).find("non-finite"), std::string::npos);
}

TEST(ReportSeam, ResultsJsonRefusesANonFinitePrediction) {
  const model::Scenario s = scenario();
  sim::Predictor predictor(s);
  sim::Prediction p = predictor.predict(s.cluster, s.training, s.parallelism, s.gpu_hour_usd, 0.0);
  EXPECT_NO_THROW(sim::results_json(s, {s}, {p}, "analytic"));
  p.comm_time_s = std::numeric_limits<double>::quiet_NaN();
  // nlohmann::json would print NaN as null: the guard must stop it before any dump.
  EXPECT_THROW(sim::results_json(s, {s}, {p}, "analytic"), std::logic_error);
}

TEST(InputGuards, AModelWithoutWorkIsRefusedOnModel) {
  const model::Scenario s =
      scenario({{"model",
                 {{"preset", nullptr},
                  {"layers", {{{"name", "z"}, {"params", 0}, {"fwd_flops_per_sample", 0}}}}}}});
  try {
    sim::check_has_work("s.json", s);
    FAIL() << "accepted a model with no work";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/model");
  }
  EXPECT_NO_THROW(sim::check_has_work("s.json", scenario()));
}

TEST(InputGuards, EventBoundsNameTheKey) {
  model::Scenario s = scenario();
  sim::Predictor predictor(s);
  const sim::StepPlan plan = predictor.plan(s.cluster, s.training, s.parallelism);
  EXPECT_NO_THROW(sim::check_event_bounds("s.json", s, plan, 0.5));
  // The clock: 1e15 s per step.
  try {
    sim::check_event_bounds("s.json", s, plan, 1e15);
    FAIL() << "accepted a 1e15 s step";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/simulation/steps");
  }
  // Below one nanosecond.
  EXPECT_THROW(sim::check_event_bounds("s.json", s, plan, 1e-12), InputError);
  // Work: 1e6 steps of ~200 operations each.
  s.simulation.steps = 1000000;
  EXPECT_THROW(sim::check_event_bounds("s.json", s, plan, 0.5), InputError);
  // Jitter simulates every rank: 8 ranks x 1000 steps is fine, 1e6 ranks x 5 steps is not.
  s.simulation.steps = 1000;
  s.simulation.jitter_cv = 0.1;
  EXPECT_NO_THROW(sim::check_event_bounds("s.json", s, plan, 0.5));
  s.simulation.steps = 5;
  s.cluster.gpus = 1000000;
  EXPECT_THROW(sim::check_event_bounds("s.json", s, plan, 0.5), InputError);
  // Over a sweep: the work adds up.
  s.cluster.gpus = 8;
  s.simulation.steps = 1000;
  double total = 0;
  EXPECT_THROW(
      {
        for (int i = 0; i < 1000; ++i) sim::check_event_bounds("s.json", s, plan, 0.5, &total);
      },
      InputError);
  EXPECT_GT(total, sim::kEventWorkLimit);
}

}  // namespace
