// `ddpsim plan` on a machine and model small enough to follow by hand.
#include "simulator/planner.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "model/builders/builders.hpp"
#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/kernel_rates.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

using fixtures::round_machine;

using model::DType;
using nlohmann::json;

// Two layers of 1e6 fp32 parameters and 1e9 forward FLOPs per sample each, 1 GB of activations
// per sample each. One micro-batch of 1 sample: forward 2 ms, backward 4 ms, Adam 56 us
// (28 bytes x 2e6 / 1e12); the gradient all-reduces (4 MB per bucket, <= 70 us on 8 GPUs) are
// mostly hidden behind the backward, so the step is ~6.06-6.13 ms at every N <= 8.
//
// Target b_noise = 8 samples, s_min = 1000 steps: steps = 1000 (1 + 8 / N) at one sample per GPU
// = 9000, 5000, 3000, 2000 for N = 1, 2, 4, 8; time to train ~54.5 s, 30.5 s, 18.3 s, 12.3 s
// falls with N while GPU-seconds ~54.5, 61, 73, 98 rise: every N is on the Pareto front.
model::Scenario small_scenario() {
  model::Scenario s;
  s.file = "plan-test.json";
  s.name = "plan test";
  s.workload = std::make_shared<const model::Workload>(
      model::build_from_layers({{"l0", 1000000, 1e9, 1e9}, {"l1", 1000000, 1e9, 1e9}}));
  s.hardware = round_machine();
  s.cluster = {1, 8};
  s.training.per_gpu_batch = 1;
  s.training.precision = model::Precision::kFp32;
  s.training.optimizer = model::Optimizer::kAdam;
  s.training.optimizer_impl = model::OptimizerImpl::kFused;  // 28 B per parameter, as counted
  s.training.optimizer_impl_defaulted = false;
  s.training.critical_batch = model::CriticalBatchTarget{8, 1000};
  s.gpu_hour_usd = 3600;  // so cost_usd = GPU-seconds
  s.plan.gpus = {1, 2, 4, 8};
  s.plan.per_gpu_batch = {1};
  s.plan.grad_accumulation = {1};
  s.plan.bucket_cap_mb = {25};
  s.plan.comm_hook = {model::CommHook{}};
  return s;
}

std::vector<int> front_gpus(const PlanResult& r) {
  std::vector<int> g;
  for (const PlanPoint& p : r.pareto) g.push_back(p.gpus);
  return g;
}

TEST(PlannerTest, EveryNOnTheFrontWhenTimeFallsAndGpuHoursRise) {
  const model::Scenario s = small_scenario();
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.candidates, 4u);
  EXPECT_EQ(r.feasible, 4u);
  EXPECT_FALSE(r.by_throughput);
  ASSERT_EQ(front_gpus(r), (std::vector<int>{8, 4, 2, 1}));  // by increasing time
  const double steps[] = {2000, 3000, 5000, 9000};           // 1000 (1 + 8 / N)
  for (std::size_t i = 0; i < r.pareto.size(); ++i) {
    const PlanPoint& p = r.pareto[i];
    EXPECT_DOUBLE_EQ(*p.steps_to_target, steps[i]);
    EXPECT_DOUBLE_EQ(*p.time_to_train_s, steps[i] * p.step_time_s);
    EXPECT_DOUBLE_EQ(*p.gpu_hours, *p.time_to_train_s * p.gpus / 3600.0);
    EXPECT_DOUBLE_EQ(*p.cost_usd, *p.gpu_hours * 3600.0);
    EXPECT_GT(p.step_time_s, 6.05e-3);
    EXPECT_LT(p.step_time_s, 6.2e-3);
    if (i > 0) {
      EXPECT_GT(p.time_metric(), r.pareto[i - 1].time_metric());
      EXPECT_LT(p.gpu_hours_metric(), r.pareto[i - 1].gpu_hours_metric());
    }
  }
  ASSERT_TRUE(r.chosen);
  EXPECT_EQ(r.chosen->gpus, 8);  // objective "time"
  for (const auto& [reason, n] : r.rejected) EXPECT_EQ(n, 0u) << reason;
}

// Sensitivity on one GPU, by hand: no collective, so the network figures change nothing (0%
// exactly). The step is forward 2 ms + backward 4 ms of FLOP-bound compute at 1e12 FLOP/s plus a
// memory-bound Adam pass: +10% FLOP/s makes the 6 ms of compute 6/1.1 ms, i.e. the step changes
// by (6/1.1 - 6) / step; +10% HBM bandwidth shortens only the optimizer, by opt/1.1 - opt.
// The 1-GPU point (global batch 1 < B_noise 8, little memory) is limited by compute; the 8-GPU
// point (global batch 8 = B_noise) by statistical efficiency.
TEST(PlannerTest, FrontPointsSayWhatLimitsThemAndHowStepTimeRespondsToEachFigure) {
  model::Scenario s = small_scenario();
  const PlanResult r = make_plan(s);
  ASSERT_EQ(front_gpus(r), (std::vector<int>{8, 4, 2, 1}));
  const PlanPoint& one = r.pareto.back();
  const Prediction base = Predictor(s).predict({1, 8}, s.training, s.parallelism);
  const double step = base.step_time_s;
  EXPECT_DOUBLE_EQ(one.step_time_s, step);
  const double compute = base.forward_time_s + base.backward_time_s;
  EXPECT_NEAR(compute, 6e-3, 1e-12);
  EXPECT_NEAR(one.sensitivity_pct.at("gpu_flops"), (compute / 1.1 - compute) / step * 100, 1e-9);
  EXPECT_NEAR(one.sensitivity_pct.at("hbm_bandwidth"),
              (base.optimizer_time_s / 1.1 - base.optimizer_time_s) / step * 100, 1e-9);
  EXPECT_EQ(one.sensitivity_pct.at("network_bandwidth"), 0.0);
  EXPECT_EQ(one.sensitivity_pct.at("network_latency"), 0.0);
  EXPECT_EQ(one.limited_by, "compute");
  EXPECT_EQ(r.pareto.front().limited_by, "statistical efficiency");
  // On 8 GPUs the all-reduces exist: better links can only help (or change nothing).
  EXPECT_LE(r.pareto.front().sensitivity_pct.at("network_bandwidth"), 0.0);
  EXPECT_EQ(r.dominated, r.feasible - r.pareto.size());
  const json doc = plan_json(s, r);
  EXPECT_EQ(doc["plan"]["chosen"]["limited_by"], r.chosen->limited_by);
  EXPECT_TRUE(doc["plan"]["pareto"][0]["step_time_sensitivity_pct"].contains("gpu_flops"));
}

// "gpu_flops" +10% must speed up every FLOP-bound kernel by 10%, fused attention included: where
// the preset holds a measured attention series the kernel runs at that series' rate (scaled by
// 3.5 / (1/fwd + 2.5/bwd) of the preset), so scaling only the peak would leave it unchanged.
// Hand-made GPU: peak 400 TFLOP/s, fwd 0.5 / bwd 0.25, a flash2 series of 70 TFLOP/s at causal,
// head dim 128, seq 2048 -> forward 120 TFLOP/s (kernel_rates_test); improved: 132 TFLOP/s.
TEST(PlannerTest, ImprovedGpuFlopsSpeedsUpMeasuredAttentionKernelsToo) {
  model::Scenario s = small_scenario();
  model::GpuSpec& g = s.hardware.gpu;
  g.peak_flops[DType::kBf16] = 400e12;
  g.attention_fwd_efficiency = 0.5;
  g.attention_bwd_efficiency = 0.25;
  g.attention_benchmarks = {{"flash2", true, 128, {2048}, {70e12}}};
  const AttentionShape shape{model::AttentionImpl::kSdpa, 2048, 128, true};
  const auto fwd = [&](const model::GpuSpec& gpu) {
    return fused_attention_flops_per_s(gpu, DType::kBf16, model::GemmRole::kForward, shape);
  };
  EXPECT_NEAR(fwd(g), 120e12, 1e3);
  const model::Scenario better = with_improved_figure(s, "gpu_flops");
  EXPECT_NEAR(fwd(better.hardware.gpu), 132e12, 1e3);
  EXPECT_DOUBLE_EQ(better.hardware.gpu.peak_flops.at(DType::kBf16), 440e12);
  // The other figures leave the GPU's compute alone.
  EXPECT_NEAR(fwd(with_improved_figure(s, "hbm_bandwidth").hardware.gpu), 120e12, 1e3);
}

// A deadline or a budget bounds the time to train: without a target there is nothing to bound.
TEST(PlannerTest, DeadlineWithoutTargetIsAnInputErrorAtTheTarget) {
  model::Scenario s = small_scenario();
  s.training.critical_batch.reset();
  s.plan.deadline_hours = 1;
  try {
    (void)make_plan(s);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/training/target");
    EXPECT_NE(std::string(e.what()).find("deadline_hours"), std::string::npos) << e.what();
  }
}

TEST(PlannerTest, ObjectivePicksTheCheapestOrTheFastest) {
  model::Scenario s = small_scenario();
  s.plan.objective = model::PlanObjective::kGpuHours;
  EXPECT_EQ(make_plan(s).chosen->gpus, 1);
  s.plan.objective = model::PlanObjective::kCost;
  EXPECT_EQ(make_plan(s).chosen->gpus, 1);
  s.plan.objective = model::PlanObjective::kTime;
  EXPECT_EQ(make_plan(s).chosen->gpus, 8);
}

TEST(PlannerTest, DeadlineRemovesTheSlowOnes) {
  model::Scenario s = small_scenario();
  // Between N = 4 (~18.3 s) and N = 2 (~30.5 s).
  s.plan.deadline_hours = 25.0 / 3600.0;
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.feasible, 2u);
  EXPECT_EQ(r.rejected.at("deadline"), 2u);
  EXPECT_EQ(front_gpus(r), (std::vector<int>{8, 4}));
}

TEST(PlannerTest, BudgetRemovesTheExpensiveOnes) {
  model::Scenario s = small_scenario();
  s.plan.budget_usd = 65;  // USD = GPU-seconds here: between N = 2 (~61) and N = 4 (~73)
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.rejected.at("budget"), 2u);
  EXPECT_EQ(front_gpus(r), (std::vector<int>{2, 1}));
  EXPECT_EQ(r.chosen->gpus, 2);
}

TEST(PlannerTest, MaxGlobalBatchRejectsLargeBatches) {
  model::Scenario s = small_scenario();
  s.plan.max_global_batch = 4;
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.rejected.at("global_batch"), 1u);
  EXPECT_EQ(r.chosen->gpus, 4);
}

TEST(PlannerTest, ACandidateThatDoesNotFitIsRejectedForMemory) {
  model::Scenario s = small_scenario();
  s.plan.per_gpu_batch = {1, 4};
  // Activations: 2 GB per sample (two layers of 1 GB), so batch 4 needs 6 GB more than batch 1.
  // Capacity halfway between the two totals, margin included.
  const Predictor probe(s);
  model::TrainingConfig t = s.training;
  const double m1 = probe.predict(s.cluster, t, s.parallelism).memory.total();
  t.per_gpu_batch = 4;
  const double m4 = probe.predict(s.cluster, t, s.parallelism).memory.total();
  EXPECT_GE(m4 - m1, 6e9);
  s.hardware.gpu.memory_bytes = (m1 + m4) / 2 / (1 - s.plan.memory_margin);
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.candidates, 8u);
  EXPECT_EQ(r.rejected.at("memory"), 4u);
  for (const PlanPoint& p : r.pareto) EXPECT_EQ(p.per_gpu_batch, 1);
  // Without the margin, batch 4 still does not fit in (m1 + m4) / 2 / 0.95 < m4.
  s.plan.memory_margin = 0;
  EXPECT_EQ(make_plan(s).rejected.at("memory"), 4u);
}

TEST(PlannerTest, SearchesStrategiesAndNamesThemOnTheFront) {
  // Memory just below DDP's need at 8 GPUs: only the sharded strategies fit there, and every
  // point of the front carries its strategy into the JSON and the table.
  model::Scenario s = small_scenario();
  s.plan.gpus = {8};
  s.plan.strategy = {model::Strategy::kDdp, model::Strategy::kZero3, model::Strategy::kFsdpHybrid};
  const Predictor probe(s);
  model::ClusterConfig c = s.cluster;
  c.gpus = 8;
  model::ParallelismConfig par;
  const double ddp = probe.predict(c, s.training, par).memory.total();
  par.strategy = model::Strategy::kZero3;
  const double zero3 = probe.predict(c, s.training, par).memory.total();
  ASSERT_LT(zero3, ddp);
  s.hardware.gpu.memory_bytes = (zero3 + ddp) / 2 / (1 - s.plan.memory_margin);
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.candidates, 3u);
  EXPECT_EQ(r.rejected.at("memory"), 1u);
  ASSERT_TRUE(r.chosen);
  EXPECT_NE(r.chosen->strategy, model::Strategy::kDdp);
  const json doc = plan_json(s, r);
  for (const json& p : doc["plan"]["pareto"]) {
    EXPECT_TRUE(p["strategy"] == "zero3" || p["strategy"] == "fsdp_hybrid") << p.dump();
  }
  EXPECT_NE(plan_table(s, r).find(model::strategy_name(r.chosen->strategy)), std::string::npos);
  // Below one node HYBRID_SHARD is no candidate, and a warning says so.
  s.plan.gpus = {2};
  const PlanResult small = make_plan(s);
  EXPECT_EQ(small.candidates, 2u);
  bool warned = false;
  for (const std::string& w : small.warnings) warned |= w.find("fsdp_hybrid") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(PlannerTest, DominanceIsStrictAndDuplicatesKeepTheFirst) {
  model::Scenario s = small_scenario();
  // N = 1 with 2 micro-batches: global batch 2, 1000 (1 + 4) = 5000 steps of ~12.06 ms = ~60.3 s
  // on 1 GPU, dominated by N = 1, k = 1 (~54.5 s, ~54.5 GPU-s). Elsewhere k = 2 trades like N.
  s.plan.grad_accumulation = {1, 2};
  // Two identical hooks: every point twice; the front keeps the first of each pair.
  s.plan.comm_hook = {model::CommHook{}, model::CommHook{}};
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.candidates, 16u);
  EXPECT_EQ(r.feasible, 16u);
  for (const PlanPoint& p : r.pareto) {
    EXPECT_FALSE(p.gpus == 1 && p.grad_accumulation == 2) << "a dominated point on the front";
    EXPECT_EQ(p.index % 2, 0u) << "the duplicate, not the first, was kept";
  }
  for (std::size_t i = 1; i < r.pareto.size(); ++i) {
    EXPECT_GT(r.pareto[i].time_metric(), r.pareto[i - 1].time_metric());
    EXPECT_LT(r.pareto[i].gpu_hours_metric(), r.pareto[i - 1].gpu_hours_metric());
  }
}

TEST(PlannerTest, NothingFeasibleIsAnAnswerWithCounts) {
  model::Scenario s = small_scenario();
  s.plan.deadline_hours = 1.0 / 3600.0;  // 1 s: nothing trains that fast
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.feasible, 0u);
  EXPECT_FALSE(r.chosen);
  EXPECT_TRUE(r.pareto.empty());
  EXPECT_NE(r.none_feasible_reason.find("4 over deadline"), std::string::npos)
      << r.none_feasible_reason;
  const json j = plan_json(s, r);
  EXPECT_EQ(j["plan"]["feasible"], 0);
  EXPECT_TRUE(j["plan"]["chosen"].is_null());
}

TEST(PlannerTest, WithoutATargetPlansByThroughput) {
  model::Scenario s = small_scenario();
  s.training.critical_batch.reset();
  const PlanResult r = make_plan(s);
  EXPECT_TRUE(r.by_throughput);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.front().find("per million samples"), std::string::npos);
  // The work is one million samples (issue 19 item 3): per step, N = 1 had the lowest step time
  // and GPU-hours and "dominated" every cluster, though its step processes N times fewer
  // samples. Per million samples at one sample per GPU: time = step x 1e6 / N and GPU-hours =
  // step x 1e6 / 3600, so more GPUs are faster (each step is at most a little slower) and cost
  // a few more GPU-hours (communication): every N is on the front, fastest first.
  EXPECT_EQ(front_gpus(r), (std::vector<int>{8, 4, 2, 1}));
  for (const PlanPoint& p : r.pareto) {
    EXPECT_FALSE(p.time_to_train_s);
    EXPECT_DOUBLE_EQ(p.time_per_million_samples_s, p.step_time_s * 1e6 / p.global_batch);
    EXPECT_DOUBLE_EQ(p.gpu_hours_per_million_samples,
                     p.step_time_s * 1e6 / p.global_batch * p.gpus / 3600.0);
    EXPECT_DOUBLE_EQ(p.time_metric(), p.time_per_million_samples_s);
  }
  // The time objective picks the highest throughput: the most GPUs here.
  ASSERT_TRUE(r.chosen);
  EXPECT_EQ(r.chosen->gpus, 8);
  const json j = plan_json(s, r);
  EXPECT_TRUE(j["plan"]["chosen"].contains("gpu_hours_per_million_samples"));
  EXPECT_TRUE(j["plan"]["chosen"].contains("time_per_million_samples_s"));
}

TEST(PlannerTest, JsonHasTheContractKeys) {
  const model::Scenario s = small_scenario();
  const json j = plan_json(s, make_plan(s));
  for (const char* k : {"context", "scenario", "plan"}) EXPECT_TRUE(j.contains(k)) << k;
  const json& p = j["plan"];
  for (const char* k : {"candidates", "feasible", "rejected", "pareto", "chosen", "warnings"}) {
    EXPECT_TRUE(p.contains(k)) << k;
  }
  for (const char* k : {"gpus", "per_gpu_batch", "grad_accumulation", "bucket_cap_mb", "comm_hook",
                        "global_batch", "lr", "step_time_s", "steps_to_target", "time_to_train_s",
                        "gpu_hours", "cost_usd", "memory_per_gpu_bytes"}) {
    EXPECT_TRUE(p["chosen"].contains(k)) << k;
  }
  EXPECT_NE(plan_table(s, make_plan(s)).find("*     8"), std::string::npos);
}

// ---- the "/plan" section of a scenario file --------------------------------------------------

json doc_with_plan(const json& plan) {
  json d = json::parse(R"({
    "model": {"mlp": {"widths": [64, 64, 8]}},
    "hardware": {"preset": "dgx-h100"},
    "cluster": {"gpus": 8},
    "training": {"per_gpu_batch": 4}
  })");
  if (!plan.is_null()) d["plan"] = plan;
  return d;
}

std::string error_pointer(const json& doc) {
  try {
    model::parse_scenario(doc, "case.json");
  } catch (const InputError& e) {
    return e.pointer();
  }
  return "no error";
}

TEST(PlannerTest, DefaultsFollowTheScenario) {
  const model::Scenario s = model::parse_scenario(doc_with_plan(nullptr), "case.json");
  // Powers of two up to 4096 that 8 GPUs per node allow: all 13 of them.
  EXPECT_EQ(s.plan.gpus,
            (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}));
  EXPECT_EQ(s.plan.per_gpu_batch, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(s.plan.grad_accumulation, (std::vector<int>{1}));
  EXPECT_EQ(s.plan.bucket_cap_mb, (std::vector<double>{25}));
  EXPECT_FALSE(s.plan.bucket_cap_given);
  EXPECT_DOUBLE_EQ(s.plan.memory_margin, 0.05);
  EXPECT_EQ(s.plan.objective, model::PlanObjective::kTime);
  // 6 GPUs per node: the powers of two below a node (1, 2, 4), then whole nodes doubling
  // (6, 12, ..., 3072) and the largest whole-node size within 4096: 682 x 6 = 4092.
  json d = doc_with_plan(nullptr);
  d["cluster"] = {{"gpus", 6}, {"gpus_per_node", 6}};
  EXPECT_EQ(model::parse_scenario(d, "case.json").plan.gpus,
            (std::vector<int>{1, 2, 4, 6, 12, 24, 48, 96, 192, 384, 768, 1536, 3072, 4092}));
  // min_gpus and max_gpus bound the default list; the largest shape within max_gpus joins it
  // (48 GPUs of 8 per node: 32 and 48), and min_gpus itself when it is a shape (24).
  d = doc_with_plan({{"min_gpus", 24}, {"max_gpus", 48}});
  EXPECT_EQ(model::parse_scenario(d, "case.json").plan.gpus, (std::vector<int>{24, 32, 48}));
  // An explicit list is filtered by them; nothing left is an error naming the list.
  d = doc_with_plan({{"gpus", {8, 16, 64}}, {"max_gpus", 32}});
  EXPECT_EQ(model::parse_scenario(d, "case.json").plan.gpus, (std::vector<int>{8, 16}));
  d = doc_with_plan({{"gpus", {64}}, {"max_gpus", 32}});
  EXPECT_THROW(
      try { model::parse_scenario(d, "case.json"); } catch (const InputError& e) {
        EXPECT_EQ(e.pointer(), "/plan/gpus");
        throw;
      },
      InputError);
  d = doc_with_plan({{"min_gpus", 64}, {"max_gpus", 32}});
  EXPECT_THROW(model::parse_scenario(d, "case.json"), InputError);
}

TEST(PlannerTest, BadPlanSectionsNameTheirPointer) {
  EXPECT_EQ(error_pointer(doc_with_plan({{"gpus", {8, 12}}})), "/plan/gpus/1");
  EXPECT_EQ(error_pointer(doc_with_plan({{"gpus", {0}}})), "/plan/gpus/0");
  EXPECT_EQ(error_pointer(doc_with_plan({{"gpus", json::array()}})), "/plan/gpus");
  EXPECT_EQ(error_pointer(doc_with_plan({{"budget_usd", 100}})), "/plan/budget_usd");
  EXPECT_EQ(error_pointer(doc_with_plan({{"objective", "cost"}})), "/plan/objective");
  EXPECT_EQ(error_pointer(doc_with_plan({{"objective", "speed"}})), "/plan/objective");
  EXPECT_EQ(error_pointer(doc_with_plan({{"memory_margin", 0.6}})), "/plan/memory_margin");
  EXPECT_EQ(error_pointer(doc_with_plan({{"comm_hook", {"none", "fp8"}}})), "/plan/comm_hook/1");
  EXPECT_EQ(error_pointer(doc_with_plan({{"deadline_hours", 0}})), "/plan/deadline_hours");
  json priced = doc_with_plan({{"budget_usd", 100}, {"objective", "cost"}});
  priced["pricing"] = {{"gpu_hour_usd", 2}};
  EXPECT_EQ(error_pointer(priced), "no error");
}

// plan.activation_checkpointing is a candidate axis (innermost): Llama-3.1-8B at 8,192 tokens,
// 2 sequences per H100 under FSDP2 keeps ~125 GB of activations without checkpointing (does not
// fit in 80 GB), 84.8 GB every 2nd block (does not fit), 70.7 GB op-selective and 41.8 GB full
// (scenarios/examples/llama-3-8b-torchtitan-checkpointing.json). The fastest that fits is the
// op-level policy, which recomputes less than full; both fitting modes are counted.
TEST(PlannerTest, SearchesActivationCheckpointingModes) {
  const json doc = json::parse(R"({
    "model": {"preset": "llama-3.1-8b", "seq_len": 8192},
    "hardware": {"preset": "dgx-h100"},
    "cluster": {"gpus": 8},
    "training": {"per_gpu_batch": 2, "precision": "amp_bf16", "optimizer": "adamw"},
    "parallelism": {"strategy": "fsdp2",
                    "fsdp2": {"mixed_precision": {"param_dtype": "bf16", "reduce_dtype": "fp32"}}},
    "plan": {"gpus": [8], "activation_checkpointing":
             [false, true, {"mode": "selective", "option": "op"}, {"mode": "selective", "option": 2}]}
  })");
  const model::Scenario s = model::parse_scenario(doc, "plan-ac.json");
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.candidates, 4u);
  EXPECT_EQ(r.feasible, 2u);
  EXPECT_EQ(r.rejected.at("memory"), 2u);
  ASSERT_TRUE(r.chosen.has_value());
  EXPECT_EQ(r.chosen->activation_checkpointing.mode, model::CheckpointMode::kSelectiveOp);
  const json out = plan_json(s, r);
  EXPECT_EQ(out["plan"]["chosen"]["activation_checkpointing"],
            json({{"mode", "selective"}, {"option", "op"}}));
  EXPECT_NE(plan_table(s, r).find("activation checkpointing selective op"), std::string::npos);
}

}  // namespace
}  // namespace ddpsim::sim
