// Link contention in the event engine (simulation.network "flow", simulator/event/contention.hpp):
// slowdowns derived by hand on the round machine (latency 0, efficiency 1), and the event engine
// with and without competing traffic.
#include "simulator/event/contention.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "model/builders/builders.hpp"
#include "model/profile/profile.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/event/simulate.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

using fixtures::fp32_adam;
using fixtures::round_machine;
using model::CollectiveAlgorithm;

// One GPU and one 12.5 GB/s NIC per node: every ring hop crosses GPU -> NIC (PCIe, 100 GB/s)
// -> leaf -> NIC -> GPU, so the NIC links (12.5 GB/s) are the bottleneck.
model::HardwareSpec one_gpu_per_node() {
  model::HardwareSpec hw = round_machine();
  hw.gpus_per_node = 1;
  hw.nics_per_node = 1;
  return hw;
}

TEST(ContentionTest, NothingCompetingIsNoSlowdown) {
  const model::HardwareSpec hw = one_gpu_per_node();
  ContentionModel cm(hw, 4, {});
  EXPECT_EQ(cm.slowdown(model::CollectiveOp::kAllReduce, 1e9, CollectiveAlgorithm::kRing, 4), 1.0);
  EXPECT_EQ(cm.simulations(), 0);  // nothing to simulate
}

TEST(ContentionTest, TwoJobsOnOneNicDoubleTheBandwidthTerm) {
  // A ring AllReduce of 1 GB over 4 nodes is 6 steps of 250 MB: alone 6 x 250 MB / 12.5 GB/s
  // = 120 ms. A second identical job on the same NICs puts a second flow on every NIC link:
  // 6.25 GB/s each, 240 ms: x2. ReduceScatter / AllGather (3 steps) likewise.
  const model::HardwareSpec hw = one_gpu_per_node();
  ContentionModel cm(hw, 4, {.background_traffic = 0, .concurrent_jobs = 2});
  EXPECT_NEAR(cm.slowdown(model::CollectiveOp::kAllReduce, 1e9, CollectiveAlgorithm::kRing, 4), 2.0,
              1e-9);
  EXPECT_NEAR(cm.slowdown(model::CollectiveOp::kReduceScatter, 1e9, CollectiveAlgorithm::kRing, 4),
              2.0, 1e-9);
  EXPECT_NEAR(cm.slowdown(model::CollectiveOp::kAllGather, 1e9, CollectiveAlgorithm::kRing, 4), 2.0,
              1e-9);
  // Three jobs: a third each, x3.
  ContentionModel three(hw, 4, {.background_traffic = 0, .concurrent_jobs = 3});
  EXPECT_NEAR(three.slowdown(model::CollectiveOp::kAllReduce, 1e9, CollectiveAlgorithm::kRing, 4),
              3.0, 1e-9);
  // Cached: the second lookup runs no flows.
  const int runs = cm.simulations();
  cm.slowdown(model::CollectiveOp::kAllReduce, 1e9, CollectiveAlgorithm::kRing, 4);
  EXPECT_EQ(cm.simulations(), runs);
}

TEST(ContentionTest, LatencyTermIsNotShared) {
  // With alpha = 5 us per step: alone 6 x (5 us + 20 ms), two jobs 6 x (5 us + 40 ms).
  model::HardwareSpec hw = one_gpu_per_node();
  hw.inter_tuning.latency = 5e-6;
  ContentionModel cm(hw, 4, {.background_traffic = 0, .concurrent_jobs = 2});
  const double want = (6 * 5e-6 + 0.24) / (6 * 5e-6 + 0.12);
  EXPECT_NEAR(cm.slowdown(model::CollectiveOp::kAllReduce, 1e9, CollectiveAlgorithm::kRing, 4),
              want, 1e-9);
}

TEST(ContentionTest, BackgroundTrafficTakesItsMaxMinShare) {
  // One ring flow per NIC link plus a background flow capped at f x 12.5 GB/s. f = 0.5: the fair
  // share 6.25 equals the cap, the ring gets 6.25 GB/s: x2. f = 0.25: the background is capped
  // at 3.125, the ring gets 9.375 GB/s: 12.5 / 9.375 = x4/3.
  const model::HardwareSpec hw = one_gpu_per_node();
  ContentionModel half(hw, 4, {.background_traffic = 0.5, .concurrent_jobs = 1});
  EXPECT_NEAR(half.slowdown(model::CollectiveOp::kAllReduce, 1e9, CollectiveAlgorithm::kRing, 4),
              2.0, 1e-9);
  ContentionModel quarter(hw, 4, {.background_traffic = 0.25, .concurrent_jobs = 1});
  EXPECT_NEAR(quarter.slowdown(model::CollectiveOp::kAllReduce, 1e9, CollectiveAlgorithm::kRing, 4),
              4.0 / 3.0, 1e-9);
  // Inside one node nothing crosses the network: no slowdown.
  const model::HardwareSpec node = round_machine();
  ContentionModel in_node(node, 8, {.background_traffic = 0.5, .concurrent_jobs = 2});
  EXPECT_EQ(in_node.slowdown(model::CollectiveOp::kAllReduce, 1e9, CollectiveAlgorithm::kRing, 8),
            1.0);
}

TEST(ContentionTest, HierarchicalAcrossOversubscribedSpine) {
  // Round machine (8 GPUs, eight 12.5 GB/s NICs per node), one node per leaf, 32 GPUs (4 nodes).
  // Hierarchical AllReduce of S = 1 GB: ReduceScatter in the node (7/8 x 1 GB / 100 GB/s =
  // 8.75 ms), a ring AllReduce of S/8 = 125 MB across the 4 nodes on each GPU's rail
  // (2 x 3/4 x 125 MB / rail rate), AllGather in the node (8.75 ms). A leaf uplink is
  // 8 x 12.5 / oversubscription GB/s shared by the 8 rails.
  //  1:1: rail rate 12.5 (NIC-bound): inter phase 15 ms, alone 32.5 ms. A second job: 16 rails
  //       per uplink (100/16 = 6.25) and 2 per NIC (6.25): 30 ms; total 47.5 / 32.5.
  //  2:1: uplink 50 GB/s / 8 = 6.25 per rail: inter phase 30 ms, alone 47.5 ms. A second job:
  //       50 / 16 = 3.125 per rail, 60 ms: total 77.5 / 47.5 (the inter phase doubles again).
  //       Background 0.5 instead: the uplink has 8 rails + 1 background flow (cap 25): 50 / 9
  //       each; the NIC has 1 rail + background (cap 6.25): the uplink binds, rails at 50/9
  //       GB/s: inter phase 30 x 6.25 / (50/9) = 33.75 ms, total 51.25 / 47.5.
  model::HardwareSpec hw = round_machine();
  hw.nodes_per_leaf = 1;
  const auto hier = CollectiveAlgorithm::kHierarchical;
  hw.oversubscription = 1;
  ContentionModel full2(hw, 32, {.background_traffic = 0, .concurrent_jobs = 2});
  EXPECT_NEAR(full2.slowdown(model::CollectiveOp::kAllReduce, 1e9, hier, 32), 47.5 / 32.5, 1e-9);
  hw.oversubscription = 2;
  ContentionModel over2(hw, 32, {.background_traffic = 0, .concurrent_jobs = 2});
  EXPECT_NEAR(over2.slowdown(model::CollectiveOp::kAllReduce, 1e9, hier, 32), 77.5 / 47.5, 1e-9);
  ContentionModel over_bg(hw, 32, {.background_traffic = 0.5, .concurrent_jobs = 1});
  EXPECT_NEAR(over_bg.slowdown(model::CollectiveOp::kAllReduce, 1e9, hier, 32), 51.25 / 47.5, 1e-9);
}

// Two 4 MB layers on 4 nodes of one GPU each, no overlap (the buckets run after the backward),
// so every second of communication is on the step's critical path.
struct DdpCase {
  model::HardwareSpec hw = one_gpu_per_node();
  Predictor pr{std::make_shared<const model::Workload>(
                   model::build_from_layers({{"l0", 1000000, 1e9, 0}, {"l1", 1000000, 1e9, 0}})),
               hw};
  model::ClusterConfig cluster;
  model::ParallelismConfig par;
  StepPlan plan;
  DdpCase() {
    cluster.gpus = 4;
    cluster.gpus_per_node = 1;
    par.overlap = false;
    plan = pr.plan(cluster, fp32_adam(), par);
  }
};

TEST(ContentionEventTest, FlowWithoutCompetingTrafficEqualsClosedForm) {
  DdpCase c;
  EventOptions o;
  o.steps = 2;
  const EventResult plain = simulate_event(c.plan, o);
  o.network_flow = true;
  o.hardware = &c.hw;
  const EventResult flow = simulate_event(c.plan, o);
  EXPECT_EQ(flow.step_time_s, plain.step_time_s);
  ASSERT_TRUE(flow.contention.has_value());
  EXPECT_EQ(flow.contention->collectives_slowed, 0);
  EXPECT_EQ(flow.contention->max_slowdown, 1.0);
  ASSERT_EQ(flow.buckets.size(), plain.buckets.size());
  for (const BucketTiming& b : flow.buckets) EXPECT_EQ(b.contention_slowdown, 1.0);
  EXPECT_FALSE(plain.contention.has_value());
  EXPECT_FALSE(plain.buckets.at(0).contention_slowdown.has_value());
}

TEST(ContentionEventTest, SecondJobDoublesEveryExposedBucket) {
  // Every bucket is a NIC-bound ring (latency 0): x2 each. Without overlap the step is
  // compute + sum of buckets, so the step grows by exactly the communication time.
  DdpCase c;
  EventOptions o;
  o.steps = 1;
  const EventResult plain = simulate_event(c.plan, o);
  o.network_flow = true;
  o.hardware = &c.hw;
  o.contention.concurrent_jobs = 2;
  const EventResult two = simulate_event(c.plan, o);
  ASSERT_TRUE(two.contention.has_value());
  EXPECT_EQ(two.contention->collectives, static_cast<int>(c.plan.buckets.size()));
  EXPECT_EQ(two.contention->collectives_slowed, two.contention->collectives);
  EXPECT_NEAR(two.contention->max_slowdown, 2.0, 1e-9);
  EXPECT_NEAR(two.comm_time_s, 2 * plain.comm_time_s, 1e-8);
  EXPECT_NEAR(two.contention->comm_time_s, 2 * two.contention->comm_time_uncontended_s, 1e-12);
  for (const BucketTiming& b : two.buckets) {
    ASSERT_TRUE(b.contention_slowdown.has_value());
    EXPECT_NEAR(*b.contention_slowdown, 2.0, 1e-9);
  }
  EXPECT_NEAR(two.step_time_s[0] - plain.step_time_s[0], plain.comm_time_s, 1e-8);
  // The prediction carries it into the JSON's "contention" block.
  Prediction p = c.pr.predict(c.cluster, fp32_adam(), c.par);
  apply_event_result(p, two, o, c.pr.plan(c.cluster, fp32_adam(), c.par));
  ASSERT_TRUE(p.contention.has_value());
  EXPECT_EQ(p.contention->concurrent_jobs, 2);
}

}  // namespace
}  // namespace ddpsim::sim

namespace ddpsim::sim {
namespace {

// simulation.interference: the scenario's value, else the profile's measured factor, else 1.
TEST(InterferenceSourceTest, ScenarioThenProfileThenDefault) {
  const nlohmann::json doc = {{"model", {{"preset", "gpt2-xl"}}},
                              {"hardware", {{"preset", "dgx-h100"}}},
                              {"cluster", {{"gpus", 8}}},
                              {"training", {{"per_gpu_batch", 4}}}};
  model::Scenario s = model::parse_scenario(doc, "s.json");
  std::string source;
  EXPECT_EQ(resolve_interference(s, &source), 1.0);
  EXPECT_EQ(source, "default");

  nlohmann::json pdoc =
      model::read_json_file(std::string(DDPSIM_TEST_DATA_DIR) + "/profile/tiny-profile.json");
  // 1.5 ms with a collective running vs 1.2 ms alone: factor 1.25.
  pdoc["interference"] = {{"factor", 1.25},
                          {"ratio", 1.25},
                          {"op", "all_reduce"},
                          {"collective_bytes", 16 << 20},
                          {"ranks", 2},
                          {"gemm", {{"m", 256}, {"n", 256}, {"k", 256}, {"dtype", "fp32"}}},
                          {"alone", {{"repeats", 9}, {"time_s", 1.2e-3}}},
                          {"concurrent", {{"repeats", 9}, {"time_s", 1.5e-3}}}};
  s.hardware.profile =
      std::make_shared<const model::Profile>(model::Profile::from_json(pdoc, "p.json"));
  EXPECT_DOUBLE_EQ(resolve_interference(s, &source), 1.25);
  EXPECT_EQ(source, "profile");

  nlohmann::json given = doc;
  given["simulation"] = {{"interference", 1.1}};
  model::Scenario g = model::parse_scenario(given, "g.json");
  g.hardware.profile = s.hardware.profile;
  EXPECT_DOUBLE_EQ(resolve_interference(g, &source), 1.1);
  EXPECT_EQ(source, "scenario");
}

}  // namespace
}  // namespace ddpsim::sim
