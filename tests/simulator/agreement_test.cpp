// Agreement between the two engines: on every scenario shipped under scenarios/ (each sweep
// point, capped per file), the analytic model and the event-driven simulator without jitter,
// contention or interference give the same step time and exposed communication within 1%;
// and with jitter the event engine's mean step matches the expected maximum of N normals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/analytic/normal_order_stats.hpp"
#include "simulator/event/simulate.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

namespace fs = std::filesystem;

// Sweep points checked per file: the first, the last and evenly spaced ones between, so the
// extremes of every axis (1 GPU and 1,024 GPUs, the smallest and largest bucket cap) are in.
constexpr std::size_t kPointsPerFile = 5;

// A scenario is a JSON object with a model and a hardware section (the contract of DESIGN.md);
// presets (scenarios/models, scenarios/hardware), data tables and other JSON are not. Decided
// by content, so a scenario added later is covered without editing this test.
bool is_scenario(const fs::path& p) {
  const nlohmann::json doc = model::read_json_file(p.string());
  return doc.is_object() && doc.contains("model") && doc.contains("hardware") &&
         doc.contains("cluster");
}

std::vector<fs::path> scenario_files() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(DDPSIM_SCENARIO_DIR)) {
    if (e.is_regular_file() && e.path().extension() == ".json" && is_scenario(e.path()))
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::size_t> picked(std::size_t n) {
  if (n <= kPointsPerFile) {
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;
    return all;
  }
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < kPointsPerFile; ++k)
    out.push_back(k * (n - 1) / (kPointsPerFile - 1));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// |a - b| <= 1% of the larger, with a floor of 1 us: both engines cost the same pieces, and
// the event engine rounds each duration to whole nanoseconds, so an exposed time of zero in
// one engine may be a few ns in the other.
void expect_within_1pct(double a, double b, const std::string& what) {
  EXPECT_LE(std::abs(a - b), std::max(0.01 * std::max(std::abs(a), std::abs(b)), 1e-6))
      << what << ": analytic " << a << " s, event " << b << " s";
}

TEST(AgreementTest, AnalyticAndEventAgreeOnEveryShippedScenario) {
  const std::vector<fs::path> files = scenario_files();
  // The default scenario and the examples are there (the list itself comes from the files).
  ASSERT_TRUE(std::any_of(files.begin(), files.end(),
                          [](const fs::path& p) { return p.filename() == "default.json"; }));
  ASSERT_GE(files.size(), 2u);
  int checked = 0;
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    const model::Scenario s = model::load_scenario(f.string());
    const std::vector<model::Scenario> points = model::expand_sweep(s);
    ASSERT_FALSE(points.empty());
    for (std::size_t i : picked(points.size())) {
      const model::Scenario& p = points[i];
      const std::string where = f.filename().string() + " point " + p.point.dump();
      const Predictor pr(p);
      const Prediction a = pr.predict(p.cluster, p.training, p.parallelism, p.gpu_hour_usd, 0.0);
      const StepPlan plan = pr.plan(p.cluster, p.training, p.parallelism);
      EventOptions o;
      o.steps = 2;  // the second step starts from the first one's end: steady state
      const EventResult e = simulate_event(plan, o);
      expect_within_1pct(a.step_time_s, e.mean_step_time_s, where + " step_time_s");
      expect_within_1pct(a.exposed_comm_s, e.exposed_comm_s, where + " exposed_comm_s");
      // simulation.network "flow" with nothing competing for the links changes nothing, to the
      // bit (contention_test derives the contended cases).
      EventOptions flow = o;
      flow.network_flow = true;
      flow.hardware = &pr.hardware();
      const EventResult ef = simulate_event(plan, flow);
      EXPECT_EQ(ef.step_time_s, e.step_time_s) << where << " network flow";
      ++checked;
    }
  }
  RecordProperty("scenario_files", static_cast<int>(files.size()));
  RecordProperty("points_checked", checked);
}

TEST(AgreementTest, JitteredMeanStepIsTheExpectedMaximumOfNormals) {
  // A hand-made plan whose step is exactly max over 8 ranks of one jittered kernel plus one
  // collective: forward 1 s with cv 0.1 (normal), a zero backward, no optimizer, a 0.1 s
  // all-reduce once the last rank is ready. Every rank starts the next step at the collective's
  // end, so step = 1 + 0.1 max(z_1..z_8) + 0.1 and E[step] = 1.1 + 0.1 x E[max of 8 normals]
  // = 1.1 + 0.1 x 1.4236 (DESIGN.md; expected_max_std_normal integrates it).
  EXPECT_NEAR(expected_max_std_normal(8), 1.4236, 1e-4);
  const StepPlan plan = fixtures::one_bucket_plan(8, {1.0}, {0.0}, 0.1, 0);
  EventOptions o;
  o.steps = 1000;
  o.jitter_cv = 0.1;
  o.seed = 7;
  const EventResult e = simulate_event(plan, o);
  ASSERT_EQ(e.step_time_s.size(), 1000u);
  const double want = 1.1 + 0.1 * expected_max_std_normal(8);
  // Tolerance: 4 standard errors of the mean of 1,000 steps, from the steps' own spread
  // (sd of the max of 8 normals is ~0.59, so 4 x 0.1 x 0.59 / sqrt(1000) ~ 0.0075 s).
  double var = 0;
  for (double t : e.step_time_s) var += (t - e.mean_step_time_s) * (t - e.mean_step_time_s);
  const double sd = std::sqrt(var / (e.step_time_s.size() - 1.0));
  EXPECT_GT(sd, 0.03);  // the noise is really there (0.1 x 0.59 expected)
  EXPECT_LT(sd, 0.09);
  EXPECT_NEAR(e.mean_step_time_s, want, 4.0 * sd / std::sqrt(1000.0));
  // Not the sqrt(2 ln N) shortcut, which is 2.039 for N = 8 (43% high).
  EXPECT_GT(std::abs(e.mean_step_time_s - (1.1 + 0.1 * std::sqrt(2.0 * std::log(8.0)))),
            4.0 * sd / std::sqrt(1000.0));
  // Percentiles are ordered and bracket the mean.
  EXPECT_LE(e.p50_step_time_s, e.p99_step_time_s);
  EXPECT_LT(e.p50_step_time_s, want + 0.05);
}

}  // namespace
}  // namespace ddpsim::sim
