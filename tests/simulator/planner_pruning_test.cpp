// The planner's pruned search (simulator/plan_search.hpp) against predicting every candidate:
// the same answer, field for field, on plans that exercise each bound (deadline, budget, memory,
// dominance without limits), the reuse across bucket caps, the fallbacks (nothing feasible, a
// refused class) and several systems; and the bounds themselves against full predictions.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/planner.hpp"

namespace ddpsim::sim {
namespace {

using nlohmann::json;

// A GPT-2 XL plan over every strategy, both checkpointing modes, caps and hooks; `plan` and
// `training` patch the base.
model::Scenario gpt2_plan(const json& plan_patch, const json& training_patch = json::object()) {
  json d = {{"model", {{"preset", "gpt2-xl"}}},
            {"hardware", {{"preset", "dgx-h100"}}},
            {"cluster", {{"gpus", 8}}},
            {"training", {{"per_gpu_batch", 4}, {"precision", "amp_bf16"}, {"optimizer", "adamw"}}},
            {"pricing", {{"gpu_hour_usd", 2.5}}},
            {"plan",
             {{"gpus", {1, 8, 16, 32, 64}},
              {"per_gpu_batch", {1, 2, 4, 8, 16}},
              {"grad_accumulation", {1, 2, 8}},
              {"bucket_cap_mb", {5, 25, 200}},
              {"comm_hook", {"none", "bf16"}},
              {"strategy", {"ddp", "zero1", "zero2", "zero3", "fsdp_full_shard"}},
              {"activation_checkpointing", {false, true}}}}};
  d["plan"].merge_patch(plan_patch);
  d["training"].merge_patch(training_patch);
  return model::parse_scenario(d, "pruning.json");
}

const json kCriticalBatch = {
    {"target", {{"critical_batch", {{"b_noise", 97.65625}, {"s_min", 20000}}}}}};

// The two searches' answers as the user sees them (the JSON plan, every field and point).
void expect_same_answer(const model::Scenario& s) {
  const PlanResult pruned = make_plan(s, PlanSearch::kPruned);
  const PlanResult every = make_plan(s, PlanSearch::kEveryCandidate);
  EXPECT_EQ(every.predicted, every.candidates);
  EXPECT_EQ(plan_json(s, pruned).dump(), plan_json(s, every).dump());
  EXPECT_EQ(pruned.candidates, every.candidates);
  EXPECT_EQ(pruned.feasible, every.feasible);
  EXPECT_EQ(pruned.dominated, every.dominated);
  EXPECT_EQ(pruned.rejected, every.rejected);
  ASSERT_EQ(pruned.systems.size(), every.systems.size());
  for (std::size_t i = 0; i < pruned.systems.size(); ++i) {
    EXPECT_EQ(pruned.systems[i].feasible, every.systems[i].feasible);
    EXPECT_EQ(pruned.systems[i].rejected, every.systems[i].rejected);
    ASSERT_EQ(pruned.systems[i].best.has_value(), every.systems[i].best.has_value());
    if (pruned.systems[i].best) {
      EXPECT_EQ(pruned.systems[i].best->index, every.systems[i].best->index);
    }
  }
  ASSERT_EQ(pruned.pareto.size(), every.pareto.size());
  for (std::size_t i = 0; i < pruned.pareto.size(); ++i) {
    EXPECT_EQ(pruned.pareto[i].index, every.pareto[i].index);
    EXPECT_EQ(pruned.pareto[i].step_time_s, every.pareto[i].step_time_s);
  }
  EXPECT_EQ(pruned.nearest_reason, every.nearest_reason);
  EXPECT_EQ(pruned.warnings, every.warnings);
}

TEST(PlanPruning, ADeadlineRejectsFromTheFloorAndTheAnswerIsUnchanged) {
  const model::Scenario s =
      gpt2_plan({{"deadline_hours", 2}, {"objective", "cost"}}, kCriticalBatch);
  expect_same_answer(s);
  const PlanResult r = make_plan(s);
  // Most candidates miss the deadline on their compute alone, and the sharded ones share one
  // prediction across the three caps.
  EXPECT_GT(r.rejected.at("deadline"), 0u);
  EXPECT_LT(r.predicted * 2, r.candidates) << r.predicted << " of " << r.candidates;
}

TEST(PlanPruning, WithoutLimitsDominatedCandidatesAreOnlyCounted) {
  // No deadline or budget: every candidate that fits is feasible; those a predicted point of
  // their system beats at their floor are counted, not predicted.
  const model::Scenario s = gpt2_plan({{"objective", "time"}}, kCriticalBatch);
  expect_same_answer(s);
  const PlanResult r = make_plan(s);
  EXPECT_GT(r.dominated, 0u);
  EXPECT_LT(r.predicted, r.candidates);
  // Without a target the metrics are per million samples: the same pruning.
  expect_same_answer(gpt2_plan({{"objective", "gpu_hours"}}));
}

TEST(PlanPruning, ABudgetWithoutADeadlineRejectsFromTheFloor) {
  const model::Scenario s = gpt2_plan({{"budget_usd", 900}, {"objective", "time"}}, kCriticalBatch);
  expect_same_answer(s);
  const PlanResult r = make_plan(s);
  EXPECT_GT(r.rejected.at("budget"), 0u);
  EXPECT_LT(r.predicted, r.candidates);
  // A sample target, a deadline and a budget together.
  expect_same_answer(
      gpt2_plan({{"budget_usd", 900}, {"deadline_hours", 3}}, {{"target", {{"samples", 3e7}}}}));
}

TEST(PlanPruning, MemoryAndTheGlobalBatchLimitNeedNoPrediction) {
  // 1 GPU of 80 GB cannot hold GPT-2 XL's states under DDP with large micro-batches, and a
  // global batch cap rejects the rest.
  const model::Scenario s =
      gpt2_plan({{"max_global_batch", 256}, {"memory_margin", 0.5}}, kCriticalBatch);
  expect_same_answer(s);
  const PlanResult r = make_plan(s);
  EXPECT_GT(r.rejected.at("memory"), 0u);
  EXPECT_GT(r.rejected.at("global_batch"), 0u);
}

TEST(PlanPruning, NothingFeasibleSearchesAgainForTheNearestOption) {
  const model::Scenario s = gpt2_plan({{"deadline_hours", 0.01}}, kCriticalBatch);
  expect_same_answer(s);
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.feasible, 0u);
  ASSERT_TRUE(r.nearest);
  EXPECT_EQ(r.predicted, r.candidates);  // the nearest needs every candidate's ratio
}

TEST(PlanPruning, ARefusedClassGivesTheSameErrorAsTheFullSearch) {
  // FSDP2 refuses a communication hook; the pruned search checks each class at its largest
  // accumulation first and, refused, runs the full search, which names the first candidate.
  const model::Scenario s = gpt2_plan(
      {{"strategy", {"ddp", "fsdp2"}}, {"deadline_hours", 2}, {"comm_hook", {"none", "fp16"}}},
      kCriticalBatch);
  std::string pruned_error, every_error;
  try {
    make_plan(s, PlanSearch::kPruned);
  } catch (const InputError& e) {
    pruned_error = e.what();
  }
  try {
    make_plan(s, PlanSearch::kEveryCandidate);
  } catch (const InputError& e) {
    every_error = e.what();
  }
  EXPECT_FALSE(every_error.empty());
  EXPECT_EQ(pruned_error, every_error);
}

TEST(PlanPruning, SeveralSystemsEachPrunedByTheirOwnFront) {
  json d = {{"model", {{"preset", "gpt2-xl"}}},
            {"cluster", {{"gpus", 8}}},
            {"training",
             {{"per_gpu_batch", 4},
              {"precision", "amp_bf16"},
              {"optimizer", "adamw"},
              {"target", {{"tokens", 2e10}}}}},
            {"plan",
             {{"objective", "cost"},
              {"per_gpu_batch", {1, 4, 16}},
              {"grad_accumulation", {1, 4}},
              {"strategy", {"ddp", "zero2", "fsdp2"}},
              {"activation_checkpointing", {false, true}},
              {"hardware",
               {{{"preset", "dgx-h100"}, {"gpu_hour_usd", 2.5}, {"max_gpus", 64}},
                {{"preset", "hgx-h200"}, {"gpu_hour_usd", 3.5}, {"max_gpus", 64}},
                {{"preset", "dgx-a100"}, {"gpu_hour_usd", 1.5}, {"max_gpus", 64}}}}}}};
  const model::Scenario s = model::parse_scenario(d, "systems-pruning.json");
  expect_same_answer(s);
  EXPECT_LT(make_plan(s).predicted, make_plan(s).candidates);
}

TEST(PlanPruning, TheFloorIsNeverAboveTheStepAndMemoryNeedsNoPlan) {
  // Predictor::step_time_floor_s bounds every candidate's step from below (the layouts only
  // slow or add to the nominal compute); step_time_s and unplanned_memory equal predict()'s.
  const model::Scenario s = gpt2_plan(json::object(), kCriticalBatch);
  const Predictor p(s);
  int checked = 0;
  for (const int gpus : {1, 8, 64}) {
    model::ClusterConfig c = s.cluster;
    c.gpus = gpus;
    for (const std::int64_t b : {1, 8}) {
      for (const int k : {1, 4}) {
        model::TrainingConfig t = s.training;
        t.per_gpu_batch = b;
        t.grad_accumulation = k;
        for (const model::Strategy st : s.plan.strategy) {
          for (const auto& ac : s.plan.activation_checkpointing) {
            for (const model::CommHook& hook : s.plan.comm_hook) {
              model::ParallelismConfig par = s.parallelism;
              par.strategy = st;
              par.comm_hook = hook;
              t.activation_checkpointing = ac;
              const Prediction pred = p.predict(c, t, par);
              const std::optional<double> floor = p.step_time_floor_s(t, par);
              ASSERT_TRUE(floor);
              EXPECT_LE(*floor, pred.step_time_s * (1 + 1e-12))
                  << gpus << " GPUs, batch " << b << ", k " << k << ", "
                  << model::strategy_name(st);
              // The floor is a real part of the step: at least half of it here.
              EXPECT_GT(*floor, 0.3 * pred.step_time_s);
              // The step alone is predict()'s, to the bit (with jitter too).
              EXPECT_EQ(p.step_time_s(c, t, par), pred.step_time_s);
              EXPECT_EQ(p.step_time_s(c, t, par, 0.05), p.predict(c, t, par, {}, 0.05).step_time_s);
              const MemoryEstimate* m = p.unplanned_memory(c, t, par);
              ASSERT_NE(m, nullptr);
              EXPECT_EQ(m->total(), pred.memory.total());
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * 2 * 2 * 5 * 2 * 2);
}

TEST(PlanPruning, ShardedPredictionsDoNotReadTheBucketCap) {
  // What lets the pruned search reuse a sharded candidate across caps: only DDP's bucket
  // assignment reads bucket_cap_mb.
  const model::Scenario s = gpt2_plan(json::object(), kCriticalBatch);
  const Predictor p(s);
  model::ClusterConfig c = s.cluster;
  c.gpus = 16;
  for (const model::Strategy st : s.plan.strategy) {
    model::ParallelismConfig a = s.parallelism, b = s.parallelism;
    a.strategy = b.strategy = st;
    a.bucket_cap_mb = 5;
    b.bucket_cap_mb = 400;
    a.bucket_cap_defaulted = b.bucket_cap_defaulted = false;
    const Prediction pa = p.predict(c, s.training, a), pb = p.predict(c, s.training, b);
    EXPECT_EQ(Predictor::reads_bucket_cap(st), pa.step_time_s != pb.step_time_s)
        << model::strategy_name(st);
    if (!Predictor::reads_bucket_cap(st)) {
      EXPECT_EQ(pa.memory.total(), pb.memory.total());
    }
  }
}

TEST(PlanPruning, AProfileOrPowerSgdIsPredictedInFull) {
  // No model floor under a profile's measured compute, and PowerSGD's state needs its plan.
  const model::Scenario s =
      gpt2_plan({{"comm_hook", {"powersgd:4"}}, {"strategy", {"ddp"}}}, kCriticalBatch);
  const Predictor p(s);
  model::ParallelismConfig par = s.parallelism;
  par.comm_hook = s.plan.comm_hook[0];
  EXPECT_EQ(p.unplanned_memory(s.cluster, s.training, par), nullptr);
  const PlanResult r = make_plan(s);
  EXPECT_EQ(r.predicted, r.candidates);
  expect_same_answer(s);
}

}  // namespace
}  // namespace ddpsim::sim
