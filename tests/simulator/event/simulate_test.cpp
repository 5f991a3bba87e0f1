// The event-driven data-parallel model: agreement with the analytic timeline when nothing is
// random, stragglers and jitter by hand, determinism, and the Chrome trace.
#include "simulator/event/simulate.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>

#include "model/builders/builders.hpp"
#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/normal_order_stats.hpp"
#include "simulator/event/trace.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

using fixtures::fp32_adam;
using fixtures::round_machine;

using model::DType;

// `n` layers of 1e6 fp32 parameters (4 MB each) and 1e9 forward FLOPs per sample: 1 ms forward
// and 2 ms backward per layer on the round machine.
std::shared_ptr<const model::Workload> layers(int n) {
  std::vector<model::LumpLayer> ls;
  for (int i = 0; i < n; ++i) ls.push_back({"l" + std::to_string(i), 1000000, 1e9, 0});
  return std::make_shared<const model::Workload>(model::build_from_layers(ls));
}

// Events on one rank's critical path in a step: each rounds its duration to whole nanoseconds
// once (<= 0.5 ns), so the event engine may differ from the analytic double by 1 ns per event.
double tolerance_s(const StepPlan& p) {
  const double events = 2.0 * static_cast<double>(p.layer_fwd_s.size()) * p.grad_accumulation +
                        static_cast<double>(p.buckets.size()) + 2.0 * p.grad_accumulation + 2.0;
  return events * 1e-9;
}

// Runs both engines on one configuration and checks that they agree.
void expect_agreement(const Predictor& pr, const model::ClusterConfig& c,
                      const model::TrainingConfig& t, const model::ParallelismConfig& par,
                      double expected_step_s = -1) {
  const StepPlan plan = pr.plan(c, t, par);
  const Prediction a = pr.predict(c, t, par);
  EventOptions o;
  o.steps = 3;
  const EventResult e = simulate_event(plan, o);
  const double tol = tolerance_s(plan);
  if (expected_step_s > 0) {
    EXPECT_NEAR(a.step_time_s, expected_step_s, 1e-12);
  }
  ASSERT_EQ(e.step_time_s.size(), 3u);
  for (double s : e.step_time_s) EXPECT_NEAR(s, a.step_time_s, tol);
  EXPECT_NEAR(e.mean_step_time_s, a.step_time_s, tol);
  EXPECT_NEAR(e.p99_step_time_s, a.step_time_s, tol);
  EXPECT_NEAR(e.forward_time_s, a.forward_time_s, tol);
  EXPECT_NEAR(e.backward_time_s, a.backward_time_s, tol);
  EXPECT_NEAR(e.optimizer_time_s, a.optimizer_time_s, tol);
  EXPECT_NEAR(e.comm_time_s, a.comm_time_s, tol);
  EXPECT_NEAR(e.exposed_comm_s, a.exposed_comm_s, tol);
  ASSERT_EQ(e.buckets.size(), a.buckets.size());
  for (std::size_t i = 0; i < a.buckets.size(); ++i) {
    EXPECT_NEAR(e.buckets[i].ready_s, a.buckets[i].ready_s, tol) << "bucket " << i;
    EXPECT_NEAR(e.buckets[i].start_s, a.buckets[i].start_s, tol) << "bucket " << i;
    EXPECT_NEAR(e.buckets[i].end_s, a.buckets[i].end_s, tol) << "bucket " << i;
    EXPECT_EQ(e.buckets[i].bytes, a.buckets[i].bytes);
  }
  // The first iteration (one bucket after the whole backward) agrees too.
  o.include_first_iteration = true;
  o.steps = 2;
  const EventResult f = simulate_event(plan, o);
  EXPECT_NEAR(f.step_time_s[0], a.first_step_time_s, tol);
  EXPECT_NEAR(f.step_time_s[1], a.step_time_s, tol);
}

TEST(EventDpTest, AgreesWithAnalyticTwoGpusByHand) {
  // analytic_test.cpp TwoGpuStepByHand: 6 ms compute + 16 us of copies into the buckets,
  // bucket {l1} 4.008-4.048 ms, bucket {l0} 6.016-6.056 ms, copies back 6.016-6.024 and
  // 6.056-6.064 ms, 56 us optimizer: 6.120 ms.
  const Predictor p(layers(2), round_machine());
  expect_agreement(p, {2, 8}, fp32_adam(), {}, 6.120e-3);
  const EventResult e = simulate_event(p.plan({2, 8}, fp32_adam(), {}), EventOptions{});
  EXPECT_DOUBLE_EQ(e.step_time_s[0], 6.120e-3);  // every piece is whole nanoseconds
  EXPECT_NEAR(e.backward_time_s, 4.032e-3, 1e-12);
  EXPECT_NEAR(e.exposed_comm_s, 32e-6, 1e-12);
}

TEST(EventDpTest, AgreesWithAnalyticWithoutOverlap) {
  const Predictor p(layers(2), round_machine());
  model::ParallelismConfig par;
  par.overlap = false;
  expect_agreement(p, {2, 8}, fp32_adam(), par, 6.160e-3);
}

TEST(EventDpTest, AgreesWithAnalyticWithAccumulation) {
  const Predictor p(layers(2), round_machine());
  expect_agreement(p, {2, 8}, fp32_adam(2), {}, 12.120e-3);
}

TEST(EventDpTest, AgreesWithAnalyticWithManyBuckets) {
  // 48 layers of 4 MB with a 4 MiB cap: one bucket per layer, 16 GPUs over two nodes, so the
  // buckets queue on the communication stream behind each other.
  const Predictor p(layers(48), round_machine());
  model::ParallelismConfig par;
  par.bucket_cap_mb = 4;
  par.bucket_cap_defaulted = false;
  const StepPlan plan = p.plan({16, 8}, fp32_adam(), par);
  EXPECT_GE(plan.buckets.size(), 24u);
  expect_agreement(p, {16, 8}, fp32_adam(), par);
  par.find_unused_parameters = true;  // plus the local_used_map all-reduce
  expect_agreement(p, {16, 8}, fp32_adam(), par);
}

TEST(EventDpTest, AgreesWithAnalyticOnPresets) {
  // gpt2-xl on 64 H100 (the default scenario) and resnet50 on 16 A100, whose BatchNorm buffers
  // are broadcast before every forward (a collective of all ranks in the event engine).
  model::Scenario s = model::load_scenario(std::string(DDPSIM_SCENARIO_DIR) + "/default.json");
  s.cluster.gpus = 64;
  const Predictor p(s);
  expect_agreement(p, s.cluster, s.training, s.parallelism);

  nlohmann::json doc = {{"model", {{"preset", "resnet50"}}},
                        {"hardware", {{"preset", "dgx-a100"}}},
                        {"cluster", {{"gpus", 16}}},
                        {"training", {{"per_gpu_batch", 64}, {"grad_accumulation", 2}}}};
  const model::Scenario r = model::parse_scenario(doc, "resnet.json");
  const Predictor pr(r);
  ASSERT_GT(pr.plan(r.cluster, r.training, r.parallelism).buffer_broadcast_s, 0);
  expect_agreement(pr, r.cluster, r.training, r.parallelism);
}

TEST(EventDpTest, StragglerIsTenPercentSlowerInCompute) {
  // Rank 1 runs every layer and its optimizer 10% slower (not the Reducer's 8 us copies of a
  // layer's gradients into its bucket, memory-bound): forward 2.2 ms, bucket {l1} ready at
  // 4.408 ms (ends 4.448), {l0} ready at 6.616 ms (ends 6.656); copies back 6.616-6.624 and
  // 6.656-6.664 ms, its optimizer 61.6 us: 6.7256 ms per step, and rank 1's backward ends
  // exactly 1.1 x 6 ms + 16 us = 6.616 ms after the start of every step.
  const Predictor p(layers(2), round_machine());
  EventOptions o;
  o.steps = 4;
  o.straggler_rank = 1;
  o.straggler_slowdown = 0.10;
  const EventResult e = simulate_event(p.plan({2, 8}, fp32_adam(), {}), o);
  for (int s = 0; s < 4; ++s) {
    EXPECT_NEAR(e.step_time_s[s], 6.7256e-3, 1e-12) << "step " << s;
    EXPECT_NEAR(e.compute_end_s[s][1], 1.1 * 6e-3 + 16e-6, 1e-12) << "step " << s;
  }
  EXPECT_NEAR(e.compute_end_s[0][0], 6.016e-3, 1e-12);
  // Rank 0 left the previous step's optimizer 5.6 us earlier than rank 1.
  EXPECT_NEAR(e.compute_end_s[1][0], 6.016e-3 - 5.6e-6, 1e-12);
  EXPECT_EQ(e.slowest_rank, 1);
  EXPECT_NEAR(e.backward_time_s, 4.432e-3, 1e-12);  // 4.4 ms + 16 us in + 16 us back
  EXPECT_NEAR(e.buckets[0].ready_s, 4.408e-3, 1e-12);
  EXPECT_NEAR(e.buckets[1].end_s, 6.656e-3, 1e-12);
  EXPECT_NEAR(e.exposed_comm_s, 32e-6, 1e-12);  // 6.664 - 6.616 - 0.016
  // A straggler rank that does not exist slows nothing.
  o.straggler_rank = 7;
  EXPECT_NEAR(simulate_event(p.plan({2, 8}, fp32_adam(), {}), o).mean_step_time_s, 6.120e-3, 1e-12);
}

TEST(EventDpTest, LayerJitterStaysBelowThePerStepBound) {
  // 8 ranks, 32 equal layers, cv 0.1 per layer. The analytic engine applies the noise to the
  // whole step: compute x (1 + cv E[max of 8]) = x 1.142. Here every layer draws its own
  // sample, so a rank's compute has cv 0.1 / sqrt(32) = 0.018 and the synchronous step waits
  // for about 1 + 0.018 x 1.42: the event mean must lie strictly between the jitter-free step
  // and the analytic per-step-jitter step. The excess over the jitter-free step is compared
  // with cv/sqrt(L) x E[max of 8] x compute within a factor of 2 (200 steps: the standard error
  // of the mean of the maximum is ~3% of it; the remaining gap comes from the optimizer's own
  // jitter and from ranks drifting apart between steps).
  const int nl = 32;
  const Predictor p(layers(nl), round_machine());
  const StepPlan plan = p.plan({8, 8}, fp32_adam(), {});
  const Prediction base = p.predict({8, 8}, fp32_adam(), {});
  const Prediction bound = p.predict({8, 8}, fp32_adam(), {}, std::nullopt, 0.1);
  EventOptions o;
  o.steps = 200;
  o.jitter_cv = 0.1;
  o.seed = 42;
  const EventResult e = simulate_event(plan, o);
  EXPECT_GT(e.mean_step_time_s, base.step_time_s);
  EXPECT_LT(e.mean_step_time_s, bound.step_time_s);
  const double compute = base.forward_time_s + base.backward_time_s;
  const double expected = 0.1 / std::sqrt(nl) * expected_max_std_normal(8) * compute;
  const double excess = e.mean_step_time_s - base.step_time_s;
  EXPECT_GT(excess, 0.5 * expected);
  EXPECT_LT(excess, 2.0 * expected);
  EXPECT_LE(e.p50_step_time_s, e.p99_step_time_s);

  // Reproducible: the same seed gives identical results; another seed different ones.
  const EventResult again = simulate_event(plan, o);
  EXPECT_EQ(again.step_time_s, e.step_time_s);
  EXPECT_EQ(again.compute_end_s, e.compute_end_s);
  o.seed = 43;
  EXPECT_NE(simulate_event(plan, o).step_time_s, e.step_time_s);

  // Log-normal noise with the same cv lands in the same band.
  o.jitter_distribution = model::JitterDistribution::kLogNormal;
  const EventResult ln = simulate_event(plan, o);
  EXPECT_GT(ln.mean_step_time_s, base.step_time_s);
  EXPECT_LT(ln.mean_step_time_s, bound.step_time_s);
}

TEST(EventDpTest, RankSamplesDoNotDependOnTheRankCount) {
  // Rank 0's first-step compute is drawn from (seed, rank 0) only; with overlap=false and no
  // buffers nothing synchronises compute before the backward ends, so it is the same on 2 and
  // 8 ranks.
  const Predictor p(layers(4), round_machine());
  model::ParallelismConfig par;
  par.overlap = false;
  EventOptions o;
  o.jitter_cv = 0.2;
  const EventResult two = simulate_event(p.plan({2, 8}, fp32_adam(), par), o);
  const EventResult eight = simulate_event(p.plan({8, 8}, fp32_adam(), par), o);
  EXPECT_EQ(two.compute_end_s[0][0], eight.compute_end_s[0][0]);
  EXPECT_EQ(two.compute_end_s[0][1], eight.compute_end_s[0][1]);
}

TEST(EventDpTest, ThousandRanksAreFast) {
  model::Scenario s = model::load_scenario(std::string(DDPSIM_SCENARIO_DIR) + "/default.json");
  s.cluster.gpus = 1024;
  const Predictor p(s);
  const StepPlan plan = p.plan(s.cluster, s.training, s.parallelism);
  EventOptions o;
  o.steps = 5;
  o.jitter_cv = 0.05;
  const auto t0 = std::chrono::steady_clock::now();
  const EventResult e = simulate_event(plan, o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(e.compute_end_s.size(), 5u);
  EXPECT_EQ(e.compute_end_s[4].size(), 1024u);
  EXPECT_GT(e.events_processed, 1024u * 5u * 2u * plan.layer_fwd_s.size());
  // Well under a second in an optimised build; generous here for debug and sanitizer builds.
  EXPECT_LT(wall, 10.0);
  RecordProperty("wall_s", std::to_string(wall));
}

TEST(EventDpTest, ChromeTraceIsValidAndNeverOverlaps) {
  const Predictor p(layers(4), round_machine());
  EventOptions o;
  o.steps = 2;
  o.jitter_cv = 0.1;
  o.record_timeline = true;
  const EventResult e = simulate_event(p.plan({4, 8}, fp32_adam(2), {}), o);
  ASSERT_FALSE(e.timeline.empty());
  const nlohmann::json j = chrome_trace_json(e.timeline, {{"engine", "event"}});
  EXPECT_EQ(j.at("displayTimeUnit"), "ms");
  EXPECT_EQ(j.at("otherData").at("engine"), "event");
  std::set<int> pids;
  std::set<std::string> names;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> lanes;
  int buckets = 0;
  for (const auto& ev : j.at("traceEvents")) {
    if (ev.at("ph") == "M") {
      if (ev.at("name") == "process_name") {
        pids.insert(ev.at("pid").get<int>());
        EXPECT_EQ(ev.at("args").at("name"), "rank " + std::to_string(ev.at("pid").get<int>()));
      }
      continue;
    }
    if (ev.at("ph") == "C") {
      EXPECT_EQ(ev.at("tid"), 2);
      EXPECT_GE(ev.at("args").at("bytes").get<std::int64_t>(), 0);
      continue;
    }
    ASSERT_EQ(ev.at("ph"), "X");
    const int tid = ev.at("tid").get<int>();
    EXPECT_TRUE(tid == 1 || tid == 2);
    const double ts = ev.at("ts").get<double>(), dur = ev.at("dur").get<double>();
    lanes[{ev.at("pid").get<int>(), tid}].emplace_back(ts, ts + dur);
    const auto name = ev.at("name").get<std::string>();
    if (name.rfind("allreduce bucket", 0) == 0) {
      ++buckets;
      EXPECT_EQ(tid, 2);
      EXPECT_GT(ev.at("args").at("bytes").get<std::int64_t>(), 0);
    }
    if (name.rfind("fwd ", 0) == 0) {
      EXPECT_EQ(ev.at("args").at("layer"), name.substr(4));
    }
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(buckets, 4 * 2 * static_cast<int>(e.buckets.size()));
  for (auto& [lane, v] : lanes) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) {
      EXPECT_GE(v[i].first, v[i - 1].second - 1e-9) << "pid " << lane.first;
    }
  }
  // ts and dur are microseconds with three decimals (nanoseconds).
  const std::string text = chrome_trace_text(e.timeline);
  EXPECT_TRUE(
      std::regex_search(text, std::regex(R"("ts": [0-9]+\.[0-9]{3}, "dur": [0-9]+\.[0-9]{3},)")));
  EXPECT_FALSE(std::regex_search(text, std::regex(R"("ts": [0-9]+,)")));
}

TEST(EventDpTest, TraceKeepsTheFirstRanksAndTheSlowest) {
  const Predictor p(layers(2), round_machine());
  EventOptions o;
  o.record_timeline = true;
  o.timeline_max_ranks = 4;
  o.straggler_rank = 77;
  o.straggler_slowdown = 0.5;
  const EventResult e = simulate_event(p.plan({128, 8}, fp32_adam(), {}), o);
  std::set<int> ranks;
  for (const Span& s : e.timeline) ranks.insert(s.rank);
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3, 77}));
  EXPECT_EQ(e.slowest_rank, 77);
}

TEST(EventDpTest, SymmetricRanksAreSimulatedOnce) {
  // No jitter, no straggler: one rank stands for all, so the events do not grow with the ranks.
  // A straggler of slowdown 1e-12 changes no duration (all round to the same nanoseconds) but
  // forces the rank-by-rank run: both must give identical results.
  const Predictor p(layers(4), round_machine());
  const StepPlan plan = p.plan({64, 8}, fp32_adam(), {});
  EventOptions o;
  o.steps = 3;
  const EventResult once = simulate_event(plan, o);
  o.straggler_rank = 5;
  o.straggler_slowdown = 1e-12;
  const EventResult all = simulate_event(plan, o);
  EXPECT_EQ(once.step_time_s, all.step_time_s);
  EXPECT_EQ(once.compute_end_s, all.compute_end_s);
  EXPECT_EQ(once.exposed_comm_s, all.exposed_comm_s);
  EXPECT_EQ(once.ranks, 64);
  EXPECT_LT(once.events_processed * 32, all.events_processed);
  // Its trace still shows every kept rank.
  o = EventOptions{};
  o.record_timeline = true;
  o.timeline_max_ranks = 3;
  std::set<int> ranks;
  for (const Span& s : simulate_event(plan, o).timeline) ranks.insert(s.rank);
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2}));
}

TEST(EventDpTest, InterferenceSlowsKernelsThatOverlapACollective) {
  // Hand-made plan, 2 ranks: two layers of 1 s forward and 1 s backward, one bucket ready after
  // layer 1's backward taking 0.5 s, no optimizer. Forward 0-2, backward of layer 1 2-3, the
  // bucket 3-3.5; layer 0's backward starts at 3 while it runs: 1 s without interference. With
  // a factor of 1.2 the kernel runs at 1/1.2 while the bucket is in flight (interfered_s): the
  // 0.5 s do 0.41667 s of work, the other 0.58333 s run at full rate: 1.08333 s, step 4.08333 s.
  // A 2 s bucket covers the whole kernel: 1.2 s; the step waits for the bucket: 3 + 2 = 5 s.
  StepPlan plan = fixtures::one_bucket_plan(2, {1.0, 1.0}, {1.0, 1.0}, 0.5, 1);
  EventOptions o;
  EXPECT_NEAR(simulate_event(plan, o).mean_step_time_s, 4.0, 1e-9);
  plan.interference = 1.2;
  EXPECT_NEAR(simulate_event(plan, o).mean_step_time_s, 3.0 + 0.5 + (1.0 - 0.5 / 1.2), 1e-9);
  plan.buckets[0].collective_s = 2.0;
  const EventResult r = simulate_event(plan, o);
  EXPECT_NEAR(r.mean_step_time_s, 5.0, 1e-9);
  EXPECT_NEAR(r.backward_time_s, 2.2, 1e-9);
  // A bucket that only starts after the backward overlaps nothing.
  plan.buckets[0].collective_s = 0.5;
  plan.buckets[0].ready_layer = 0;
  EXPECT_NEAR(simulate_event(plan, o).mean_step_time_s, 4.5, 1e-9);
}

// A hand-made DDP plan: two layers of 1 ms forward and 2 ms backward, a 0.1 ms optimizer and one
// bucket of 0.5 ms ready after layer 0's backward: 6.1 ms of compute per step.
StepPlan relaxed_plan(int gpus) {
  StepPlan plan;
  plan.gpus = gpus;
  plan.layer_fwd_s = {1e-3, 1e-3};
  plan.layer_bwd_s = {2e-3, 2e-3};
  plan.optimizer_s = 0.1e-3;
  PlannedBucket b;
  b.cost.bytes = 8000000;
  b.collective_s = 0.5e-3;
  b.ready_layer = 0;
  plan.buckets = {b};
  return plan;
}

TEST(EventDpTest, LocalSgdAveragesEveryHStepsByHand) {
  // Rank 1 is 25% slower: 7.625 ms per step. With H = 4 the steps without a sync have no
  // collective, and the average (0.5 ms, the bucket's duration) starts when the slow rank's
  // 4th optimizer ends: step times 7.625, 7.625, 7.625, 8.125 ms, mean = 7.625 + 0.5 / 4 =
  // 7.75 ms (synchronous DDP with the bucket after the backward: 7.625 + 0.5 per step).
  const StepPlan plan = relaxed_plan(2);
  EventOptions o;
  o.steps = 8;
  o.straggler_rank = 1;
  o.straggler_slowdown = 0.25;
  o.local_sgd_period = 4;
  const EventResult e = simulate_event(plan, o);
  const std::vector<double> want = {7.625e-3, 7.625e-3, 7.625e-3, 8.125e-3,
                                    7.625e-3, 7.625e-3, 7.625e-3, 8.125e-3};
  ASSERT_EQ(e.step_time_s.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_NEAR(e.step_time_s[k], want[k], 1e-12) << "step " << k;
  }
  EXPECT_NEAR(e.mean_step_time_s, 7.75e-3, 1e-12);
  // Between averages the fast rank runs ahead: its 2nd backward ends at 6.1 + 6 = 12.1 ms,
  // 4.475 ms after the slow rank's first step ended (7.625 ms).
  EXPECT_NEAR(e.compute_end_s[1][0], 4.475e-3, 1e-12);
  EXPECT_NEAR(e.comm_time_s, 0.5e-3, 1e-12);  // the last step averages
  EXPECT_EQ(e.slowest_rank, 1);
  // H = 1 is synchronous DDP (the DpModel): the bucket is ready after layer 0's backward, i.e.
  // at the end of the slow rank's backward, so the 0.5 ms are exposed every step.
  o.local_sgd_period = 1;
  EXPECT_NEAR(simulate_event(plan, o).mean_step_time_s, 7.625e-3 + 0.5e-3, 1e-12);
}

TEST(EventDpTest, StalenessLetsFastRanksRunExactlySStepsAhead) {
  // Rank 1 is twice as slow (12.2 ms per step, backward ends 12 ms in); every exchange lasts
  // 0.5 ms after the rank's backward. Rank 0 (6.1 ms per step) may start step k once rank 1's
  // exchange of step k-3 has ended (s = 2): S0(k) = max(S0(k-1) + 6.1, 12.2 (k-3) + 12.5) ms.
  const StepPlan plan = relaxed_plan(2);
  EventOptions o;
  o.steps = 10;
  o.straggler_rank = 1;
  o.straggler_slowdown = 1.0;
  o.staleness = 2;
  o.record_timeline = true;
  const EventResult e = simulate_event(plan, o);
  // (rank, step) -> its first forward's start (the plan has no workload: layers are "layer")
  std::map<std::pair<int, int>, double> step_start;
  for (const Span& sp : e.timeline) {
    if (sp.name == "fwd layer" && !step_start.count({sp.rank, sp.step})) {
      step_start[{sp.rank, sp.step}] = to_seconds(sp.start);
    }
  }
  double s0 = 0;
  for (int k = 0; k < o.steps; ++k) {
    if (k > 0) s0 += 6.1e-3;
    if (k >= 3) s0 = std::max(s0, 12.2e-3 * (k - 3) + 12.5e-3);
    EXPECT_NEAR(step_start.at({0, k}), s0, 1e-12) << "step " << k;
    EXPECT_NEAR(step_start.at({1, k}), 12.2e-3 * k, 1e-12) << "step " << k;
  }
  // When rank 0 starts step k (k >= 4) rank 1 is in step k-2: exactly s steps behind, never
  // more.
  int max_ahead = 0;
  for (int k = 0; k < o.steps; ++k) {
    const double t = step_start.at({0, k});
    int slow_step = 0;
    for (int j = 0; j < o.steps; ++j) {
      if (step_start.at({1, j}) <= t) slow_step = j;
    }
    max_ahead = std::max(max_ahead, k - slow_step);
    if (k >= 4) {
      EXPECT_EQ(k - slow_step, 2) << "step " << k;
    }
  }
  EXPECT_EQ(max_ahead, 2);
  // With a permanent straggler the step time is still the slow rank's (12.2 ms).
  EXPECT_NEAR(e.mean_step_time_s, 12.2e-3, 1e-12);
}

TEST(EventDpTest, RelaxedSynchronisationPaysOffUnderJitter) {
  // Same seeds, 8 ranks, cv 0.2 per layer: every rank draws the same samples in every mode
  // (interference 1), so start times can only move earlier when a constraint is dropped:
  // more staleness is never slower, and local SGD beats synchronous DDP here because it waits
  // for the slowest rank once per 4 steps and pays the 0.5 ms average once per 4 steps.
  const StepPlan plan = relaxed_plan(8);
  EventOptions o;
  o.steps = 40;
  o.jitter_cv = 0.2;
  o.seed = 11;
  const double ddp = simulate_event(plan, o).mean_step_time_s;
  o.local_sgd_period = 4;
  const double local = simulate_event(plan, o).mean_step_time_s;
  o.local_sgd_period = 1;
  o.staleness = 1;
  const double s1 = simulate_event(plan, o).mean_step_time_s;
  o.staleness = 4;
  const double s4 = simulate_event(plan, o).mean_step_time_s;
  EXPECT_LT(local, ddp);
  EXPECT_LT(s4, s1);
  // Symmetric (no noise): local SGD is compute + average / H exactly.
  EventOptions q;
  q.steps = 4;
  q.local_sgd_period = 4;
  EXPECT_NEAR(simulate_event(plan, q).mean_step_time_s, 6.1e-3 + 0.5e-3 / 4, 1e-12);
}

TEST(EventDpTest, RelaxedModesReportStepTimeOnlyWithoutAMultiplier) {
  Prediction p;
  p.step_time_s = 1.0;
  p.global_batch = 8;
  p.time_to_train_s = 100.0;
  p.gpu_hours = 2.0;
  EventResult r;
  r.mean_step_time_s = 0.5;
  EventOptions o;
  o.staleness = 2;
  Prediction a = p;
  apply_event_result(a, r, o, StepPlan{});
  EXPECT_FALSE(a.time_to_train_s.has_value());
  EXPECT_FALSE(a.gpu_hours.has_value());
  EXPECT_TRUE(std::any_of(a.warnings.begin(), a.warnings.end(), [](const std::string& w) {
    return w.find("step time only") != std::string::npos;
  }));
  // With a user-given multiplier 1.5: 100 s x (0.5 / 1) x 1.5 = 75 s.
  o.target_steps_multiplier = 1.5;
  Prediction b = p;
  apply_event_result(b, r, o, StepPlan{});
  ASSERT_TRUE(b.time_to_train_s.has_value());
  EXPECT_NEAR(*b.time_to_train_s, 75.0, 1e-12);
  EXPECT_NEAR(*b.gpu_hours, 1.5, 1e-12);
}

TEST(EventDpTest, TraceHasByteCountersAndNamesItsRanks) {
  // SSP with jitter on 6 ranks, 3 shown: every event has ph/ts/pid/tid, complete events on one
  // thread never overlap, each rank's counter steps to the exchange's bytes and back to 0.
  const StepPlan plan = relaxed_plan(6);
  EventOptions o;
  o.steps = 5;
  o.jitter_cv = 0.1;
  o.staleness = 1;
  o.straggler_rank = 5;
  o.straggler_slowdown = 0.5;
  o.record_timeline = true;
  o.timeline_max_ranks = 3;
  const EventResult e = simulate_event(plan, o);
  const nlohmann::json j = chrome_trace_json(e.timeline);
  EXPECT_EQ(j.at("otherData").at("ranks"), (nlohmann::json{0, 1, 2, 5}));
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> lanes;
  std::map<int, std::vector<std::int64_t>> counters;
  for (const auto& ev : j.at("traceEvents")) {
    for (const char* k : {"ph", "ts", "pid", "tid"}) {
      ASSERT_TRUE(ev.contains(k)) << ev.dump();
    }
    if (ev.at("ph") == "X") {
      const double ts = ev.at("ts").get<double>();
      lanes[{ev.at("pid").get<int>(), ev.at("tid").get<int>()}].emplace_back(
          ts, ts + ev.at("dur").get<double>());
    } else if (ev.at("ph") == "C") {
      counters[ev.at("pid").get<int>()].push_back(ev.at("args").at("bytes").get<std::int64_t>());
    }
  }
  for (auto& [lane, v] : lanes) {
    std::sort(v.begin(), v.end());
    // ts and dur are exact microseconds with 3 decimals; their double sum may differ by 1 ulp.
    for (std::size_t i = 1; i < v.size(); ++i) EXPECT_GE(v[i].first, v[i - 1].second - 1e-6);
  }
  ASSERT_EQ(counters.size(), 4u);
  for (const auto& [rank, values] : counters) {
    ASSERT_EQ(values.size(), 2u * o.steps) << "rank " << rank;
    for (std::size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(values[i], i % 2 == 0 ? 8000000 : 0) << "rank " << rank;
    }
  }
}

TEST(EventDpTest, PercentilesFromTwoHundredSteps) {
  const Predictor p(layers(4), round_machine());
  EventOptions o;
  o.steps = 200;
  o.jitter_cv = 0.1;
  const EventResult e = simulate_event(p.plan({8, 8}, fp32_adam(), {}), o);
  std::vector<double> sorted = e.step_time_s;
  std::sort(sorted.begin(), sorted.end());
  // Nearest rank: p50 is the 100th of 200, p95 the 190th, p99 the 198th.
  EXPECT_EQ(e.p50_step_time_s, sorted[99]);
  EXPECT_EQ(e.p95_step_time_s, sorted[189]);
  EXPECT_EQ(e.p99_step_time_s, sorted[197]);
  EXPECT_LT(e.p50_step_time_s, e.p95_step_time_s);
  EXPECT_LT(e.p95_step_time_s, e.p99_step_time_s);
}

TEST(EventDpTest, UnwritableTracePathNamesThePathAndLeavesNothing) {
  const Predictor p(layers(2), round_machine());
  EventOptions o;
  o.record_timeline = true;
  const EventResult e = simulate_event(p.plan({2, 8}, fp32_adam(), {}), o);
  // A path below a regular file cannot be created, even by root.
  const std::string file =
      (std::filesystem::temp_directory_path() / ("ddpsim-not-a-dir-" + std::to_string(::getpid())))
          .string();
  write_chrome_trace(file, e.timeline);  // writable: a plain file now
  const std::string bad = file + "/trace.json";
  try {
    write_chrome_trace(bad, e.timeline);
    ADD_FAILURE() << "no error for an unwritable trace path";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find(bad), std::string::npos) << err.what();
  }
  EXPECT_TRUE(std::filesystem::is_regular_file(file));  // nothing partial beside or below it
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace ddpsim::sim
