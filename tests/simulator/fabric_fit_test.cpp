// The inter-node NIC fitted to a user's multi-node nccl-tests log (fabric_fit.hpp).
#include "simulator/collectives/fabric_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>

#include "model/hardware/cluster.hpp"
#include "model/imports/measurement_import.hpp"
#include "model/profile/profile.hpp"
#include "model/scenario/hardware_io.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/run.hpp"

namespace ddpsim::sim {
namespace {

using model::CollectiveAlgorithm;
using model::CollectiveOp;
using nlohmann::json;

// AWS p5 as a user writes it: DGX H100 nodes, AMD hosts, 32 EFA NICs of 100 Gb/s.
json p5_section() {
  return {{"preset", "dgx-h100"},
          {"cpu_vendor", "amd"},
          {"inter_node", {{"preset", "efa-100g"}, {"nics_per_node", 32}}}};
}

model::HardwareSpec p5() { return model::resolve_hardware(p5_section(), "t.json", "/hardware"); }

double model_time(const model::HardwareSpec& hw, int gpus, double bytes,
                  CollectiveAlgorithm a = CollectiveAlgorithm::kAuto) {
  const model::CollectiveBandwidths bw = model::Topology(hw, gpus).bandwidths();
  return collective_cost(CollectiveOp::kAllReduce, bw, hw, bytes, a).time_s;
}

// An all_reduce "log" of `ranks` over `nodes` that the model itself writes on `truth`: 8 B to
// 1 GiB in steps of 4x, out-of-place rows, as `ddpsim-calibrate import nccl-tests` stores them.
std::shared_ptr<const model::Profile> synthetic_log(const model::HardwareSpec& truth, int nodes,
                                                    const json& env = json(),
                                                    std::int64_t min_bytes = 8) {
  model::HardwareSpec layout = truth;
  const int ranks = nodes * truth.gpus_per_node;
  const CollectiveAlgorithm a =
      env.contains("NCCL_ALGO") ? CollectiveAlgorithm::kRing : CollectiveAlgorithm::kAuto;
  json rows = json::array();
  for (std::int64_t bytes = min_bytes; bytes <= (std::int64_t{1} << 30); bytes *= 4) {
    rows.push_back({{"size_bytes", bytes},
                    {"count", bytes / 4},
                    {"in_place", false},
                    {"time_us", model_time(layout, ranks, static_cast<double>(bytes), a) * 1e6},
                    {"wrong", 0}});
  }
  json c = {{"backend", "nccl"},
            {"version", truth.nccl_kernel.nccl_version},
            {"ranks", ranks},
            {"nodes", nodes},
            {"gpus_per_process", 1},
            {"ops", {{"all_reduce", {{"dtype", "float32"}, {"redop", "sum"}, {"rows", rows}}}}}};
  if (!env.is_null()) c["nccl_env"] = env;
  return std::make_shared<const model::Profile>(
      model::Profile::from_json(model::imported_profile(c, nullptr, "test"), "log.json"));
}

// The NIC that wrote the log: NCCL reaches half the preset's share of its rate, 40 us per
// inter-node step.
model::HardwareSpec slow_p5() {
  model::HardwareSpec hw = p5();
  hw.inter_tuning.ring_efficiency *= 0.5;
  hw.inter_node.latency = 40e-6;
  return hw;
}

// Derivation: the log is the model's own output on the NIC (share x 0.5, 40 us), so the
// objective sum (ln t_model - ln t_log)^2 is 0 there. s = 0.5 = 2^(-4/4) is a coarse grid point;
// 40 us lies between L(j=13) = 0.5 x 2000^(13/23) = 36.9 us and L(13.25) = 39.9 us, so the fine
// grid lands within 1/8 of a step (x 1.042) of it. The fit must reproduce the log's times and,
// the point of it, the 8-node times the true NIC gives.
TEST(FabricFitTest, RecoversTheNicThatWroteTheLog) {
  model::HardwareSpec hw = p5();
  hw.profile = synthetic_log(slow_p5(), 2);
  const std::optional<FabricFit> f = fit_fabric(hw);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->ranks, 16);
  EXPECT_EQ(f->nodes, 2);
  EXPECT_EQ(f->points, 14);  // 2^3 .. 2^29 bytes in steps of 4
  EXPECT_EQ(f->ops, "all_reduce");
  EXPECT_GT(f->preset_rms, 0.2);  // the preset's NIC is twice as fast and 20 us
  EXPECT_LT(f->fitted_rms, 0.02);
  EXPECT_NEAR(std::log2(f->bandwidth_scale), -1.0, 1.0 / 16);
  EXPECT_DOUBLE_EQ(f->ring_efficiency, p5().inter_tuning.ring_efficiency * f->bandwidth_scale);
  EXPECT_NEAR(std::log(f->latency_s / 40e-6), 0.0, 0.05);

  model::HardwareSpec fitted = p5();
  apply_fabric_fit(fitted, *f);
  for (double bytes : {1e3, 1e6, 64e6, 1e9}) {
    EXPECT_NEAR(model_time(fitted, 64, bytes) / model_time(slow_p5(), 64, bytes), 1.0, 0.05)
        << bytes << " bytes on 8 nodes";
  }
}

// A log that ran with NCCL_ALGO=Ring (the import keeps "NCCL_ALGO set by environment to Ring")
// is replayed with the ring forced: the fit to a ring-only log is exact again.
TEST(FabricFitTest, ReplaysAForcedAlgorithm) {
  model::HardwareSpec hw = p5();
  hw.profile = synthetic_log(slow_p5(), 2, {{"NCCL_ALGO", "Ring"}});
  const std::optional<FabricFit> f = fit_fabric(hw);
  ASSERT_TRUE(f.has_value());
  EXPECT_LT(f->fitted_rms, 0.02);
}

// A log of large messages only (8 MiB .. 512 MiB: 4 sizes, 3 of them at least 16 MiB, none at
// most 1 MiB) identifies the rate, not the latency: the latency stays the preset's (efa-100g, 20
// us) and the note says so.
TEST(FabricFitTest, ALogOfLargeMessagesKeepsThePresetsLatency) {
  model::HardwareSpec hw = p5();
  hw.profile = synthetic_log(slow_p5(), 2, json(), std::int64_t{1} << 23);
  const std::optional<FabricFit> f = fit_fabric(hw);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->points, 4);
  EXPECT_TRUE(f->fitted_rate);
  EXPECT_FALSE(f->fitted_latency);
  EXPECT_DOUBLE_EQ(f->latency_s, p5().inter_node.latency);
  EXPECT_NEAR(std::log2(f->bandwidth_scale), -1.0, 1.0 / 8);
  EXPECT_NE(describe(*f).find("the latency stays the preset's"), std::string::npos);
}

// Nothing to fit: no profile, a one-node log, the alpha-beta model of a profile-as-hardware.
TEST(FabricFitTest, NoFitWithoutAMultiNodeLog) {
  EXPECT_FALSE(fit_fabric(p5()).has_value());
  model::HardwareSpec one_node = p5();
  one_node.profile = synthetic_log(p5(), 1);
  EXPECT_FALSE(fit_fabric(one_node).has_value());
  model::HardwareSpec alpha_beta = p5();
  alpha_beta.profile = synthetic_log(slow_p5(), 2);
  alpha_beta.collective_model = model::CollectiveModel::kAlphaBeta;
  EXPECT_FALSE(fit_fabric(alpha_beta).has_value());
}

// The user's path: a Predictor whose hardware has the log beside its preset predicts, at a rank
// count the log did not run, exactly what the fitted NIC written as keys predicts, and says so.
TEST(FabricFitTest, PredictorRunsOtherRankCountsOnTheFittedNic) {
  const model::Scenario s = model::parse_scenario(
      {{"model", {{"preset", "gpt2-xl"}}},
       {"hardware", p5_section()},
       {"cluster", {{"gpus", 64}}},
       {"training", {{"per_gpu_batch", 8}, {"precision", "amp_bf16"}, {"optimizer", "adamw"}}},
       {"parallelism", {{"strategy", "ddp"}}}},
      "s.json");
  model::HardwareSpec with_log = s.hardware;
  with_log.profile = synthetic_log(slow_p5(), 2);
  const Predictor fitted(s.workload, with_log, "s.json");
  ASSERT_TRUE(fitted.fabric_fit().has_value());
  const FabricFit& f = *fitted.fabric_fit();

  model::HardwareSpec keys = s.hardware;
  keys.inter_tuning.ring_efficiency *= f.bandwidth_scale;
  keys.inter_node.latency = f.latency_s;
  const Predictor by_keys(s.workload, keys, "s.json");
  const Prediction a = fitted.predict(s.cluster, s.training, s.parallelism);
  const Prediction b = by_keys.predict(s.cluster, s.training, s.parallelism);
  EXPECT_DOUBLE_EQ(a.step_time_s, b.step_time_s);
  EXPECT_DOUBLE_EQ(a.comm_time_s, b.comm_time_s);
  const Prediction preset =
      Predictor(s.workload, s.hardware, "s.json").predict(s.cluster, s.training, s.parallelism);
  EXPECT_GT(a.comm_time_s, preset.comm_time_s);  // a slower NIC than the preset's
  bool said = false;
  for (const std::string& w : a.warnings) said |= w.find("fitted to the profile's") != w.npos;
  EXPECT_TRUE(said);
}

// Both engines read the Predictor's hardware: the event engine, flows included (its network
// runs on the NIC the plan used, shared with background traffic), predicts with the log beside
// the preset what it predicts with the fitted NIC written as keys. (With the flows on the
// scenario's unfitted NIC the two differ: 0.3437 vs 0.3476 s.)
TEST(FabricFitTest, EventEngineAndItsFlowsRunOnTheFittedNic) {
  json doc = {
      {"model", {{"preset", "gpt2-xl"}}},
      {"hardware", p5_section()},
      {"cluster", {{"gpus", 32}}},
      {"training", {{"per_gpu_batch", 8}, {"precision", "amp_bf16"}, {"optimizer", "adamw"}}},
      {"parallelism", {{"strategy", "ddp"}}},
      {"simulation", {{"steps", 2}, {"network", "flow"}, {"background_traffic", 0.5}}}};
  model::Scenario with_log = model::parse_scenario(doc, "s.json");
  with_log.hardware.profile = synthetic_log(slow_p5(), 2);
  const std::optional<FabricFit> f = fit_fabric(with_log.hardware);
  ASSERT_TRUE(f.has_value());
  model::Scenario keys = model::parse_scenario(doc, "s.json");
  keys.hardware.inter_tuning.ring_efficiency *= f->bandwidth_scale;
  keys.hardware.inter_node.latency = f->latency_s;
  RunOptions o;
  o.engine = model::Engine::kEvent;
  const Prediction a = predict_point(with_log, o);
  const Prediction b = predict_point(keys, o);
  EXPECT_DOUBLE_EQ(a.step_time_s, b.step_time_s);
  EXPECT_DOUBLE_EQ(a.comm_time_s, b.comm_time_s);
  // The slower NIC lengthens the collectives (the backward hides most of them).
  const Prediction preset = predict_point(model::parse_scenario(doc, "s.json"), o);
  EXPECT_GT(a.comm_time_s, 1.2 * preset.comm_time_s);
}

// The AWS presets carry the fit of their named log (fitted_from), as a user importing that log
// beside the GPU's system preset and the EFA NIC would get it, rounded to 3 digits.
TEST(FabricFitTest, AwsPresetsCarryTheFitOfTheirNamedLog) {
  const std::string dir = std::string(DDPSIM_SCENARIO_DIR) + "/data/nccl-tests/";
  struct Case {
    const char* preset;
    const char* log;
    model::NcclTestsLayout layout;  // the p4de log is a table excerpt: no rank lines
    json generic;
  } cases[] = {
      {"aws-p5", "all_reduce_p5_h100_efa_2x8_nccl2.22.3.log", {}, p5_section()},
      {"aws-p4de",
       "all_reduce_p4de_a100_efa_2x8_table.log",
       {16, 2},
       {{"preset", "dgx-a100"},
        {"cpu_vendor", "intel"},
        {"inter_node", {{"preset", "efa-100g"}, {"nics_per_node", 4}}}}},
  };
  for (const Case& c : cases) {
    model::HardwareSpec hw = model::resolve_hardware(c.generic, "t.json", "/hardware");
    hw.profile = std::make_shared<const model::Profile>(model::Profile::from_json(
        model::imported_profile(model::import_nccl_tests_file(dir + c.log, "", c.layout), nullptr,
                                "test"),
        c.log));
    const std::optional<FabricFit> f = fit_fabric(hw);
    ASSERT_TRUE(f.has_value()) << c.preset;
    const model::HardwareSpec preset =
        model::resolve_hardware(json{{"preset", c.preset}}, "t.json", "/hardware");
    EXPECT_NEAR(preset.inter_tuning.ring_efficiency, f->ring_efficiency, 0.0005) << c.preset;
    EXPECT_NEAR(preset.inter_node.latency * 1e6, f->latency_s * 1e6, 0.05) << c.preset;
  }
}

}  // namespace
}  // namespace ddpsim::sim
