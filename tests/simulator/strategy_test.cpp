// The sharded strategies (simulator/analytic/sharded.hpp): volumes per step by hand, DeepSpeed's
// bucket, slice and all-gather rules, ZeRO-2's n reduces, accumulation, HYBRID_SHARD's split, exact
// step times on the round machine, analytic/event agreement for every strategy, bad inputs.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "model/builders/builders.hpp"
#include "model/builders/zoo.hpp"
#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/sharded.hpp"
#include "simulator/event/simulate.hpp"
#include "simulator/event/trace.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

using fixtures::fp32_adam;
using fixtures::round_machine;
using model::Strategy;

model::ParallelismConfig strategy(Strategy s) {
  model::ParallelismConfig p;
  p.strategy = s;
  return p;
}

const std::vector<Strategy> kSharded = {Strategy::kZero1,           Strategy::kZero2,
                                        Strategy::kZero3,           Strategy::kFsdpFullShard,
                                        Strategy::kFsdpShardGradOp, Strategy::kFsdpHybrid};

TEST(StrategyTest, VolumePerStepByHand) {
  // 8 layers of 4 MB fp32 parameters (P = 32 MB) on the 8 GPUs of one node, fp32 gradients:
  // DDP all-reduces 2(n-1)/n P = 56 MB per rank; ZeRO-1/2 all-reduce every bucket (DeepSpeed's
  // default use_multi_rank_bucket_allreduce) and all-gather (n-1)/n P, 84 MB (1.5x DDP; with
  // one reduce per owner it would be (n-1)/n P + (n-1)/n P = 56 MB, below); SHARD_GRAD_OP
  // gathers once and reduce-scatters once, 56 MB; ZeRO-3 / FULL_SHARD gather twice, 3(n-1)/n P
  // = 84 MB.
  const Predictor pr(fixtures::lump_layers(8), round_machine());
  const double P = 8 * 4e6;
  const double n = 8;
  const model::ClusterConfig c{8, 8};
  const std::map<Strategy, double> expected = {
      {Strategy::kDdp, 2 * (n - 1) / n * P},
      {Strategy::kZero1, 3 * (n - 1) / n * P},
      {Strategy::kZero2, 3 * (n - 1) / n * P},
      {Strategy::kZero3, 3 * (n - 1) / n * P},
      {Strategy::kFsdpFullShard, 3 * (n - 1) / n * P},
      {Strategy::kFsdpShardGradOp, 2 * (n - 1) / n * P},
  };
  for (const auto& [s, bytes] : expected) {
    const Prediction p = pr.predict(c, fp32_adam(), strategy(s));
    EXPECT_DOUBLE_EQ(fixtures::per_rank_traffic(p, 8), bytes) << model::strategy_name(s);
  }
  model::ParallelismConfig reduces = strategy(Strategy::kZero2);
  reduces.use_multi_rank_bucket_allreduce = false;
  EXPECT_DOUBLE_EQ(fixtures::per_rank_traffic(pr.predict(c, fp32_adam(), reduces), 8),
                   2 * (n - 1) / n * P);
  // 56 MB is exactly 7/8 of 64 MB: the DDP number is the familiar 2(n-1)/n of the gradients.
  EXPECT_DOUBLE_EQ(2 * (n - 1) / n * P, 56e6);
}

TEST(StrategyTest, HalfPrecisionGradientsHalveOnlyTheGradientBytes) {
  // An fp16 reduce dtype (FSDP MixedPrecision reduce_dtype / the fp16 hook) halves the
  // reduce-scatter of fp32 gradients; the fp32 parameter all-gathers stay: (2 x 7/8 P) + 7/8 P/2.
  const Predictor pr(fixtures::lump_layers(8), round_machine());
  model::ParallelismConfig par = strategy(Strategy::kFsdpFullShard);
  par.comm_hook.kind = model::CommHook::Kind::kFp16;
  par.comm_hook.text = "fp16";
  const Prediction p = pr.predict({8, 8}, fp32_adam(), par);
  EXPECT_DOUBLE_EQ(fixtures::per_rank_traffic(p, 8), 2 * 28e6 + 14e6);
}

TEST(StrategyTest, HybridShardsWithinANodeAndAllReducesAcross) {
  // 16 GPUs in 2 nodes of 8: all-gathers and reduce-scatters run over the 8 GPUs of a node
  // (3 x 7/8 P per rank, as FULL_SHARD on 8), and each unit's 1/8 shard is all-reduced across
  // the 2 nodes: 2 (r-1)/r x P/8 = P/8 per rank.
  const Predictor pr(fixtures::lump_layers(8), round_machine());
  const double P = 32e6;
  const Prediction p = pr.predict({16, 8}, fp32_adam(), strategy(Strategy::kFsdpHybrid));
  const fixtures::SplitTraffic t = fixtures::split_traffic(p, 8, 2);
  EXPECT_DOUBLE_EQ(t.shard_group, 3 * 7.0 / 8.0 * P);
  EXPECT_DOUBLE_EQ(t.all_reduce_bytes, P / 8);
  EXPECT_DOUBLE_EQ(t.replicas, P / 8);
  // The optimizer steps 1/8 of the parameters (the shard group), not 1/16.
  const StepPlan sp = pr.plan({16, 8}, fp32_adam(), strategy(Strategy::kFsdpHybrid));
  EXPECT_EQ(sp.shard_group, 8);
  EXPECT_DOUBLE_EQ(sp.optimizer_s, 8 * 28 * 1e6 / 1e12 / 8);
  // Each shard all-reduce costs as a ring over the 2 nodes on one 12.5 GB/s rail:
  // 2 (r-1)/r x 0.5 MB / 12.5 GB/s = 40 us.
  for (const ScheduledCollective& c : sp.schedule) {
    if (c.cost.kind == model::CollectiveOp::kAllReduce) {
      EXPECT_NEAR(c.collective_s, 40e-6, 1e-15);
    }
  }
}

TEST(StrategyTest, DeepSpeedBucketsSlicesAndChunks) {
  // Three 1e6-element tensors walked from the last: {l2} is sent off when l1's gradient would
  // take it past 1.5e6 elements, {l1} when l0's would, {l0} at the end of the backward.
  const auto w = fixtures::lump_layers(3);
  const auto b = deepspeed_buckets(*w, 1.5e6);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].elements, 1000000);
  EXPECT_EQ(b[0].flat_begin, 2000000);
  EXPECT_EQ(b[0].trigger_layer, 1);
  EXPECT_EQ(b[1].trigger_layer, 0);
  EXPECT_EQ(b[2].trigger_layer, -1);
  EXPECT_EQ(b[2].flat_begin, 0);
  // With 2.5e6 elements, {l2, l1} fit together.
  const auto b2 = deepspeed_buckets(*w, 2.5e6);
  ASSERT_EQ(b2.size(), 2u);
  EXPECT_EQ(b2[0].elements, 2000000);
  EXPECT_EQ(b2[0].tensors, 2);
  // Slices per owner: 3e6 elements over 4 ranks are partitions of 750,000; the bucket
  // [1e6, 3e6) touches partitions 1 (250,000), 2 and 3 (750,000 each).
  EXPECT_EQ(owner_slices(1000000, 2000000, 3000000, 4),
            (std::vector<std::int64_t>{500000, 750000, 750000}));
  EXPECT_EQ(owner_slices(0, 3000000, 3000000, 4),
            (std::vector<std::int64_t>{750000, 750000, 750000, 750000}));
  // all_gather_dp_groups: 1e9 parameters on 8 ranks, partitions of 1.25e8, num_shards =
  // 1.25e8 x 8 // 5e8 = 2, so two all-gathers of 8 x 6.25e7 = 5e8 elements; 7 ranks: partition
  // 142,857,143, num_shards = 1,000,000,001 // 5e8 = 2, shard 71,428,571 and the remainder
  // 71,428,572.
  EXPECT_EQ(allgather_chunks(1000000000, 8, 5e8),
            (std::vector<std::int64_t>{500000000, 500000000}));
  EXPECT_EQ(allgather_chunks(1000000000, 7, 5e8),
            (std::vector<std::int64_t>{7 * 71428571LL, 7 * 71428572LL}));
  EXPECT_EQ(allgather_chunks(1000, 8, 5e8), (std::vector<std::int64_t>{1000}));
}

TEST(StrategyTest, AllgatherChunksAreCountedAndBoundedBeforeTheyAreMade) {
  // num_shards = max(1, part x n // allgather_bucket_size), counted without a vector: the same
  // count allgather_chunks makes.
  for (const std::int64_t total : {1000LL, 1000000000LL, 3000000007LL}) {
    for (const int n : {1, 7, 8, 64}) {
      for (const double bucket : {1e6, 5e8, 1e13}) {
        EXPECT_EQ(allgather_chunk_count(total, n, bucket),
                  static_cast<std::int64_t>(allgather_chunks(total, n, bucket).size()))
            << total << " " << n << " " << bucket;
      }
    }
  }
  // 1e13 parameters on 8 ranks: partitions of 1.25e12, 1e13 // 1e6 = 1e7 all-gathers, 20x the
  // step's 5e5 collectives (kMaxStepCollectives): refused, naming the key, the figures and the
  // smallest bucket the hint promises, ceil(1e13 / 5e5) = 2e7 elements.
  EXPECT_EQ(allgather_chunk_count(10000000000000LL, 8, 1e6), 10000000);
  try {
    check_allgather_chunks("s.json", 10000000000000LL, 8, 1e6);
    FAIL() << "1e7 all-gathers accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.json: /parallelism/allgather_bucket_size: expected a bucket size that gives at "
              "most 500000 all-gathers of the updated parameters (1e+13 parameters / 1e+06 = "
              "1e+07 all-gathers; at least 2e+07 elements per bucket), got 1000000");
  }
  // The hint is enough: 1e13 // 2e7 = 5e5 all-gathers, the bound itself, passes; 1.9e7 gives
  // 526,315 and is refused.
  EXPECT_EQ(allgather_chunk_count(10000000000000LL, 8, 2e7), 500000);
  EXPECT_NO_THROW(check_allgather_chunks("s.json", 10000000000000LL, 8, 2e7));
  EXPECT_THROW(check_allgather_chunks("s.json", 10000000000000LL, 8, 1.9e7), InputError);
  // 1e15 parameters (the model maximum) on one partition per element: no overflow, at most part.
  EXPECT_EQ(allgather_chunk_count(1000000000000000LL, 10000000, 1e-300), 100000000);
}

TEST(StrategyTest, ZeroTwoAllReducesEachBucketOrReducesOncePerOwningRank) {
  // Two layers (2e6 elements, one 8 MB bucket at the default 5e8 cap) on 4 GPUs of one node with
  // alpha = 1 us per step. DeepSpeed's default (use_multi_rank_bucket_allreduce) all-reduces the
  // bucket: a ring of 6 alpha + 2 x 3/4 x 8 MB / 100 GB/s = 126 us. Without it the bucket is 4
  // dist.reduce calls of 2 MB, each costing as a ring Broadcast, 3 alpha + 2 MB / 100 GB/s =
  // 23 us, 92 us in all: 12 alpha of latency, 4x the 3 alpha of one reduce-scatter (3 us + 3/4 x
  // 8 MB / 100 GB/s = 63 us). Both add average_tensor's memory passes on 1 TB/s: div_ and
  // flatten read and write the bucket, each rank copies back its quarter: (4 + 2/4) x 4 bytes x
  // 2e6 = 36 MB, 36 us.
  model::HardwareSpec hw = round_machine();
  hw.intra_tuning.latency = 1e-6;
  const Predictor pr(fixtures::lump_layers(2), hw);
  const StepPlan sp = pr.plan({4, 8}, fp32_adam(), strategy(Strategy::kZero2));
  ASSERT_EQ(sp.schedule.size(), 2u);  // the bucket, then the parameter all-gather
  const ScheduledCollective& a = sp.schedule[0];
  EXPECT_EQ(a.cost.kind, model::CollectiveOp::kAllReduce);
  EXPECT_EQ(a.cost.calls, 1);
  EXPECT_EQ(a.cost.bytes, 8000000);
  EXPECT_NEAR(a.collective_s, 6e-6 + 1.5 * 8e6 / 100e9, 1e-15);
  EXPECT_NEAR(a.overhead_s, 36e-6, 1e-15);
  EXPECT_EQ(a.name, "all_reduce bucket 0");
  model::ParallelismConfig reduces = strategy(Strategy::kZero2);
  reduces.use_multi_rank_bucket_allreduce = false;
  const ScheduledCollective r = pr.plan({4, 8}, fp32_adam(), reduces).schedule[0];
  EXPECT_EQ(r.cost.kind, model::CollectiveOp::kReduce);
  EXPECT_EQ(r.cost.calls, 4);
  EXPECT_EQ(r.cost.bytes, 8000000);
  EXPECT_NEAR(r.collective_s, 4 * (3e-6 + 2e6 / 100e9), 1e-15);
  EXPECT_NEAR(r.overhead_s, 36e-6, 1e-15);
  const StepPlan f = pr.plan({4, 8}, fp32_adam(), strategy(Strategy::kZero3));
  double rs = 0;
  for (const ScheduledCollective& c : f.schedule) {
    if (c.cost.kind == model::CollectiveOp::kReduceScatter) rs = c.collective_s;
  }
  EXPECT_NEAR(rs, 3e-6 + 0.75 * 8e6 / 100e9, 1e-15);
  // The parameter all-gather after the optimizer: 3 alpha + 3/4 x 8 MB / 100 GB/s.
  EXPECT_EQ(sp.schedule[1].scope, CommScope::kAfterOptimizer);
  EXPECT_EQ(sp.schedule[1].cost.phase, CommPhase::kOptimizer);
  EXPECT_NEAR(sp.schedule[1].collective_s, 63e-6, 1e-15);
}

TEST(StrategyTest, AccumulationCommunicatesPerMicroStepFromZeroTwoOn) {
  // k = 4 micro-batches: DDP (no_sync) and ZeRO-1 reduce gradients once, ZeRO-2 / ZeRO-3 /
  // FSDP in every micro-batch; the parameter all-gathers of ZeRO-3 / FSDP repeat every
  // micro-batch, ZeRO-1/2's post-optimizer all-gather happens once.
  const Predictor pr(fixtures::lump_layers(4), round_machine());
  const model::ClusterConfig c{8, 8};
  auto count = [&](Strategy s, int k) {
    std::map<std::string, int> n;
    for (const BucketTiming& b : pr.predict(c, fp32_adam(k), strategy(s)).buckets) {
      ++n[std::string(model::collective_op_name(b.kind)) + "/" + comm_phase_name(b.phase)];
    }
    return n;
  };
  for (Strategy s : {Strategy::kDdp, Strategy::kZero1}) {
    EXPECT_EQ(count(s, 4), count(s, 1)) << model::strategy_name(s);
  }
  auto z2 = count(Strategy::kZero2, 4);
  auto z2_1 = count(Strategy::kZero2, 1);
  EXPECT_EQ(z2["all_reduce/backward"], 4 * z2_1["all_reduce/backward"]);
  EXPECT_EQ(z2["all_gather/optimizer"], z2_1["all_gather/optimizer"]);
  for (Strategy s : {Strategy::kZero3, Strategy::kFsdpFullShard}) {
    auto a = count(s, 4);
    auto one = count(s, 1);
    EXPECT_EQ(one["all_gather/forward"], 4) << model::strategy_name(s);
    EXPECT_EQ(one["all_gather/backward"], 4) << model::strategy_name(s);
    EXPECT_EQ(a["all_gather/forward"], 16) << model::strategy_name(s);
    EXPECT_EQ(a["all_gather/backward"], 16) << model::strategy_name(s);
    EXPECT_EQ(a["reduce_scatter/backward"], 4 * one["reduce_scatter/backward"]);
  }
  // Gradient bytes reduced per step follow: 16 MB x 4 for ZeRO-2, 16 MB for ZeRO-1.
  EXPECT_DOUBLE_EQ(pr.predict(c, fp32_adam(4), strategy(Strategy::kZero2)).grad_bytes_total,
                   4 * 16e6);
  EXPECT_DOUBLE_EQ(pr.predict(c, fp32_adam(4), strategy(Strategy::kZero1)).grad_bytes_total, 16e6);
}

// Two layers on 2 GPUs of the round machine: forward 1 ms, backward 2 ms per layer; a 4 MB
// all-gather or reduce-scatter over 2 ranks takes 1/2 x 4 MB / 100 GB/s = 20 us, an 8 MB one
// 40 us; the Adam step of the 1/2 shard takes 28 bytes x 1e6 / 1 TB/s = 28 us.
TEST(StrategyTest, StepTimesByHand) {
  const Predictor pr(fixtures::lump_layers(2), round_machine());
  const model::ClusterConfig c{2, 8};
  auto step = [&](model::ParallelismConfig par) {
    return pr.predict(c, fp32_adam(), par).step_time_s;
  };
  // Each FSDP reduce-scatter of a 4 MB unit takes 20 us plus the post-backward hook's in-place
  // pre-division by 2 (fsdp_gradient_predivide_factor(2); read and write 4 MB at 1 TB/s, 8 us):
  // 28 us.
  // FULL_SHARD, backward_pre: gather l0 0-20 us and l1 20-40 us; F0 20-1020, F1 1020-2020;
  // at 2020 the backward gathers of l1 (2020-2040) and, prefetched, l0 (2040-2060); B1
  // 2040-4040; reduce-scatter l1 4040-4068; B0 4040-6040; reduce-scatter l0 6040-6068;
  // optimizer 6068-6096 us.
  EXPECT_NEAR(step(strategy(Strategy::kFsdpFullShard)), 6.096e-3, 1e-12);
  const Prediction fs = pr.predict(c, fp32_adam(), strategy(Strategy::kFsdpFullShard));
  EXPECT_NEAR(fs.exposed_comm_s, 68e-6, 1e-12);  // gather l0, gather l1 (bwd), scatter l0
  EXPECT_NEAR(fs.comm_time_s, 4 * 20e-6 + 2 * 28e-6, 1e-12);
  // backward_post: l0's backward gather waits for the end of B1 (4040-4060), ahead of l1's
  // reduce-scatter (4060-4088): B0 4060-6060, scatter l0 6060-6088, optimizer to 6116 us.
  model::ParallelismConfig post = strategy(Strategy::kFsdpFullShard);
  post.fsdp_prefetch = model::FsdpPrefetch::kBackwardPost;
  EXPECT_NEAR(step(post), 6.116e-3, 1e-12);
  // none: l0's gather queues behind l1's reduce-scatter: 4040-4068 scatter, 4068-4088 gather,
  // B0 4088-6088, scatter l0 6088-6116, optimizer to 6144 us.
  model::ParallelismConfig none = strategy(Strategy::kFsdpFullShard);
  none.fsdp_prefetch = model::FsdpPrefetch::kNone;
  EXPECT_NEAR(step(none), 6.144e-3, 1e-12);
  // SHARD_GRAD_OP: no backward gathers: B1 2020-4020, scatter l1 4020-4048, B0 4020-6020,
  // scatter l0 6020-6048, optimizer to 6076 us.
  EXPECT_NEAR(step(strategy(Strategy::kFsdpShardGradOp)), 6.076e-3, 1e-12);
  // ZeRO-3: FULL_SHARD's gathers; its one 8 MB DeepSpeed bucket is reduce-scattered at the end
  // of the backward (6040-6080 us); optimizer to 6108 us.
  EXPECT_NEAR(step(strategy(Strategy::kZero3)), 6.108e-3, 1e-12);
  // ZeRO-2 (and ZeRO-1 with k = 1): compute 0-6000 us, the 8 MB bucket all-reduced (1/2 x 2 x
  // 8 MB / 100 GB/s = 80 us) after average_tensor's passes ((4 + 2/2) x 4 bytes x 2e6 / 1 TB/s
  // = 40 us) 6000-6120, optimizer 6120-6148, all-gather of the 8 MB of parameters 6148-6188 us.
  EXPECT_NEAR(step(strategy(Strategy::kZero2)), 6.188e-3, 1e-12);
  EXPECT_NEAR(step(strategy(Strategy::kZero1)), 6.188e-3, 1e-12);
  const Prediction z2 = pr.predict(c, fp32_adam(), strategy(Strategy::kZero2));
  EXPECT_NEAR(z2.exposed_comm_s, 160e-6, 1e-12);
  // HYBRID on one node of 2: FULL_SHARD with nothing to all-reduce across nodes.
  EXPECT_NEAR(pr.predict({2, 2}, fp32_adam(), strategy(Strategy::kFsdpHybrid)).step_time_s,
              6.096e-3, 1e-12);
}

// FSDP1's gradient divide factors (PyTorch default_hooks.py DefaultState): predivide f doubles
// while world % f == 0 and world / f > f (so it can end on a non-divisor); world / f divides the
// shard. And the bytes
// its post-backward hook moves per gradient element, by hand.
TEST(StrategyTest, FsdpPostBackwardPassesByHand) {
  EXPECT_EQ(fsdp_gradient_predivide_factor(1), 1);
  EXPECT_EQ(fsdp_gradient_predivide_factor(2), 2);
  EXPECT_EQ(fsdp_gradient_predivide_factor(8), 4);
  EXPECT_EQ(fsdp_gradient_predivide_factor(16), 4);  // 16 / 4 = 4 is not > 4
  EXPECT_EQ(fsdp_gradient_predivide_factor(64), 8);
  EXPECT_EQ(fsdp_gradient_predivide_factor(6), 4);  // 2 divides 6 and 3 > 2: doubled to 4
  // 8 ranks, bf16 gradients reduced in fp32: cast 2 + 4, pre-divide 4 + 4, post-divide by 2 of
  // the fp32 shard 8 / 8 (already the parameter's dtype): 15 bytes.
  EXPECT_DOUBLE_EQ(fsdp_reduce_pass_bytes(8, 2, 4, false), 15.0);
  // bf16 reduced in bf16: pre-divide 4, post-divide 4 / 8, cast of the shard to fp32 6 / 8.
  EXPECT_DOUBLE_EQ(fsdp_reduce_pass_bytes(8, 2, 2, false), 4.0 + 0.5 + 0.75);
  // A bf16 hook casts itself: only the divisions. 2 ranks: post-divide factor 1, none.
  EXPECT_DOUBLE_EQ(fsdp_reduce_pass_bytes(8, 4, 2, true), 4.0 + 0.5);
  EXPECT_DOUBLE_EQ(fsdp_reduce_pass_bytes(2, 4, 4, false), 8.0);
  EXPECT_DOUBLE_EQ(fsdp_reduce_pass_bytes(1, 4, 4, false), 0.0);
}

TEST(StrategyTest, ZeroTwoOverlapsBucketsOnlyWithOverlapComm) {
  // Three layers, 1.5e6-element buckets {l2}, {l1}, {l0} on 2 GPUs. {l2} goes when l1's
  // gradient exists: F 0-3000 us, B2 3000-5000, B1 5000-7000. Each 4 MB bucket takes an
  // all-reduce of 1/2 x 2 x 4 MB / 100 GB/s = 40 us plus average_tensor's (4 + 1) x 4 bytes x
  // 1e6 / 1 TB/s = 20 us: 60 us. The optimizer takes 28 x 1.5e6 / 1 TB/s = 42 us, the parameter
  // all-gather of 12 MB over 2 ranks 60 us.
  const Predictor pr(fixtures::lump_layers(3), round_machine());
  model::ParallelismConfig par = strategy(Strategy::kZero2);
  par.reduce_bucket_elements = 1.5e6;
  // overlap_comm = true: {l2} on the reduction stream 7000-7060 beside B0 (7000-9000), then
  // {l1} 9000-9060 and {l0} 9060-9120; optimizer 9120-9162; all-gather to 9222 us.
  par.overlap = true;
  par.overlap_defaulted = false;
  const Prediction p = pr.predict({2, 8}, fp32_adam(), par);
  EXPECT_NEAR(p.step_time_s, 9.222e-3, 1e-12);
  ASSERT_EQ(p.buckets.size(), 4u);
  EXPECT_NEAR(p.buckets[0].start_s, 7e-3, 1e-12);
  EXPECT_NEAR(p.buckets[0].end_s, 7.06e-3, 1e-12);
  // overlap_comm = false, DeepSpeed's default below stage 3 (the key left out): the compute
  // stream runs {l2} 7000-7060 itself, B0 7060-9060, {l1} 9060-9120, {l0} 9120-9180,
  // optimizer 9180-9222, all-gather to 9282 us.
  par.overlap_defaulted = true;
  EXPECT_NEAR(pr.predict({2, 8}, fp32_adam(), par).step_time_s, 9.282e-3, 1e-12);
  par.overlap = false;
  par.overlap_defaulted = false;
  const Prediction q = pr.predict({2, 8}, fp32_adam(), par);
  EXPECT_NEAR(q.step_time_s, 9.282e-3, 1e-12);
  EXPECT_NEAR(q.buckets[0].start_s, 7e-3, 1e-12);
  // One dist.reduce per owner: {l1} spans both 1.5e6-element partitions, two calls.
  par.use_multi_rank_bucket_allreduce = false;
  EXPECT_EQ(pr.predict({2, 8}, fp32_adam(), par).buckets[1].calls, 2);
}

TEST(StrategyTest, OneGpuShardingEqualsDdp) {
  // On one GPU nothing is gathered or reduced and the optimizer steps every parameter.
  const Predictor pr(fixtures::lump_layers(4), round_machine());
  const Prediction ddp = pr.predict({1, 8}, fp32_adam(2), strategy(Strategy::kDdp));
  for (Strategy s : kSharded) {
    if (s == Strategy::kFsdpHybrid) continue;  // needs gpus_per_node to divide the GPUs
    const Prediction p = pr.predict({1, 8}, fp32_adam(2), strategy(s));
    EXPECT_NEAR(p.step_time_s, ddp.step_time_s, 1e-15) << model::strategy_name(s);
    EXPECT_TRUE(p.buckets.empty()) << model::strategy_name(s);
    EXPECT_NEAR(p.exposed_comm_s, 0.0, 1e-15);
  }
  EXPECT_NEAR(pr.predict({1, 1}, fp32_adam(2), strategy(Strategy::kFsdpHybrid)).step_time_s,
              ddp.step_time_s, 1e-15);
}

// Both engines on one configuration: within 1 ns per event on the critical path (and so far
// within 1%).
void expect_strategy_agreement(const Predictor& pr, const model::ClusterConfig& c,
                               const model::TrainingConfig& t,
                               const model::ParallelismConfig& par) {
  const StepPlan plan = pr.plan(c, t, par);
  const Prediction a = pr.predict(c, t, par);
  EventOptions o;
  o.steps = 3;
  const EventResult e = simulate_event(plan, o);
  const double tol =
      1e-9 * (2.0 * static_cast<double>(plan.layer_fwd_s.size() * 2) * t.grad_accumulation +
              2.0 * static_cast<double>(a.buckets.size()) + 4.0);
  const std::string what = model::strategy_name(par.strategy);
  ASSERT_EQ(e.step_time_s.size(), 3u);
  for (double s : e.step_time_s) EXPECT_NEAR(s, a.step_time_s, tol) << what;
  EXPECT_NEAR(e.mean_step_time_s, a.step_time_s, 0.01 * a.step_time_s) << what;
  EXPECT_NEAR(e.exposed_comm_s, a.exposed_comm_s, tol) << what;
  EXPECT_NEAR(e.forward_time_s, a.forward_time_s, tol) << what;
  EXPECT_NEAR(e.backward_time_s, a.backward_time_s, tol) << what;
  EXPECT_NEAR(e.comm_time_s, a.comm_time_s, tol) << what;
  ASSERT_EQ(e.buckets.size(), a.buckets.size()) << what;
  for (std::size_t i = 0; i < a.buckets.size(); ++i) {
    EXPECT_EQ(e.buckets[i].kind, a.buckets[i].kind);
    EXPECT_EQ(e.buckets[i].micro_batch, a.buckets[i].micro_batch);
    EXPECT_NEAR(e.buckets[i].ready_s, a.buckets[i].ready_s, tol) << what << " " << i;
    EXPECT_NEAR(e.buckets[i].start_s, a.buckets[i].start_s, tol) << what << " " << i;
    EXPECT_NEAR(e.buckets[i].end_s, a.buckets[i].end_s, tol) << what << " " << i;
  }
}

TEST(StrategyTest, EnginesAgreeForEveryStrategy) {
  // 6 layers on 16 GPUs over two nodes (the network is the bottleneck, so communication is
  // partly exposed), with and without accumulation and overlap, every prefetch mode.
  const Predictor pr(fixtures::lump_layers(6), round_machine());
  for (Strategy s : kSharded) {
    for (int k : {1, 3}) {
      model::ParallelismConfig par = strategy(s);
      par.reduce_bucket_elements = 2.5e6;
      expect_strategy_agreement(pr, {16, 8}, fp32_adam(k), par);
      par.overlap = false;
      expect_strategy_agreement(pr, {16, 8}, fp32_adam(k), par);
    }
  }
  for (auto pf : {model::FsdpPrefetch::kBackwardPost, model::FsdpPrefetch::kNone}) {
    model::ParallelismConfig par = strategy(Strategy::kFsdpFullShard);
    par.fsdp_prefetch = pf;
    expect_strategy_agreement(pr, {16, 8}, fp32_adam(2), par);
  }
}

// Compute overlapping a sharded collective runs `interference` times slower while the stream is
// busy (interfered_s), in both engines. FULL_SHARD as in StepTimesByHand with interference 1.5:
// gathers l0 0-20 us and l1 20-40; F0 starts at 20 with 20 us of l1's gather left, which do
// 20 / 1.5 = 13.33 us of its work: F0 1006.67 us, 20-1026.67; F1 alone 1026.67-2026.67; the
// backward gathers l1 2026.67-2046.67 and l0 2046.67-2066.67; B1 starts at 2046.67 beside 20 us
// of l0's gather: 2006.67 us, to 4053.33; scatter l1 (28 us) 4053.33-4081.33 beside B0 (2000 +
// 28 - 28 / 1.5 = 2009.33 us, to 6062.67); scatter l0 6062.67-6090.67; optimizer (alone) 28 us,
// to 6118.67 us.
TEST(StrategyTest, InterferenceSlowsComputeBesideShardedCollectives) {
  Predictor pr(fixtures::lump_layers(2), round_machine());
  pr.set_interference(1.5);
  const model::ClusterConfig c{2, 8};
  const model::ParallelismConfig par = strategy(Strategy::kFsdpFullShard);
  const Prediction p = pr.predict(c, fp32_adam(), par);
  const double b1_end = 2046.0 + 2.0 / 3.0 + 2000.0 + 20.0 - 20.0 / 1.5;
  const double step_us = b1_end + 2000.0 + 28.0 - 28.0 / 1.5 + 28.0 + 28.0;
  EXPECT_NEAR(step_us, 6118.0 + 2.0 / 3.0, 1e-9);
  EXPECT_NEAR(p.step_time_s, step_us * 1e-6, 1e-12);
  EXPECT_NEAR(p.forward_time_s, (1000.0 + 20.0 - 20.0 / 1.5 + 1000.0) * 1e-6, 1e-12);
  const StepPlan plan = pr.plan(c, fp32_adam(), par);
  EXPECT_DOUBLE_EQ(plan.interference, 1.5);
  EventOptions o;
  o.steps = 1;
  EXPECT_NEAR(simulate_event(plan, o).mean_step_time_s, step_us * 1e-6, 1e-8);  // ns rounding
  // The engines agree with interference for every strategy, accumulation and overlap.
  for (Strategy st : kSharded) {
    for (int k : {1, 3}) {
      model::ParallelismConfig q = strategy(st);
      q.reduce_bucket_elements = 2.5e6;
      expect_strategy_agreement(pr, {16, 8}, fp32_adam(k), q);
    }
  }
}

TEST(StrategyTest, EnginesAgreeOnPresets) {
  // gpt2-xl and llama-2-7b (bf16) on two HGX H200 nodes for every strategy.
  for (const char* preset : {"gpt2-xl", "llama-2-7b"}) {
    const auto w = std::make_shared<const model::Workload>(
        model::load_model_preset(preset, "test", "/model/preset", std::nullopt));
    const Predictor pr(w, round_machine());
    model::TrainingConfig t = fp32_adam(2);
    t.precision = model::Precision::kBf16;
    for (Strategy s : kSharded) expect_strategy_agreement(pr, {16, 8}, t, strategy(s));
  }
}

TEST(StrategyTest, TraceShowsTheShardedCollectives) {
  const Predictor pr(fixtures::lump_layers(2), round_machine());
  const StepPlan plan = pr.plan({2, 8}, fp32_adam(), strategy(Strategy::kFsdpFullShard));
  EventOptions o;
  o.steps = 2;
  o.record_timeline = true;
  const EventResult e = simulate_event(plan, o);
  std::set<std::string> comm;
  for (const Span& s : e.timeline) {
    if (s.stream == Stream::kComm) comm.insert(s.name);
  }
  EXPECT_EQ(comm,
            (std::set<std::string>{"all_gather fwd l0", "all_gather fwd l1", "all_gather bwd l0",
                                   "all_gather bwd l1", "reduce_scatter l0", "reduce_scatter l1"}));
  // 2 ranks x 2 steps x 6 collectives, and the writer's overlap check passes.
  EXPECT_EQ(e.timeline.size() - 2 * 2 * (4 + 1), 2u * 2 * 6);
  const auto trace = chrome_trace_json(e.timeline);
  EXPECT_TRUE(trace.contains("traceEvents"));
}

TEST(StrategyTest, ActivationCheckpointingRecomputesEachBlockForward) {
  const auto w = std::make_shared<const model::Workload>(
      model::load_model_preset("gpt2-xl", "test", "/model/preset", std::nullopt));
  const Predictor pr(w, round_machine());
  model::TrainingConfig t = fp32_adam();
  const StepPlan plain = pr.plan({8, 8}, t, strategy(Strategy::kZero3));
  t.activation_checkpointing = {model::CheckpointMode::kFull};
  const StepPlan ckpt = pr.plan({8, 8}, t, strategy(Strategy::kZero3));
  int blocks = 0;
  for (std::size_t i = 0; i < w->layers.size(); ++i) {
    const bool block = w->layers[i].kind == "transformer_block";
    blocks += block;
    EXPECT_DOUBLE_EQ(ckpt.layer_bwd_s[i],
                     plain.layer_bwd_s[i] + (block ? plain.layer_fwd_s[i] : 0.0));
  }
  EXPECT_EQ(blocks, 48);
  // And the activations shrink.
  const Prediction a = pr.predict({8, 8}, fp32_adam(), strategy(Strategy::kZero3));
  const Prediction b = pr.predict({8, 8}, t, strategy(Strategy::kZero3));
  EXPECT_LT(b.memory.activation_bytes, a.memory.activation_bytes / 4);
}

TEST(StrategyTest, BadInputsNameTheirPointer) {
  const Predictor pr(fixtures::lump_layers(2), round_machine(), "s.json");
  model::ParallelismConfig par = strategy(Strategy::kZero2);
  par.comm_hook.kind = model::CommHook::Kind::kPowerSgd;
  par.comm_hook.rank = 1;
  par.comm_hook.text = "powersgd:1";
  try {
    pr.plan({8, 8}, fp32_adam(), par);
    FAIL() << "PowerSGD with ZeRO-2 was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/parallelism/comm_hook");
  }
  try {
    pr.plan({4, 8}, fp32_adam(), strategy(Strategy::kFsdpHybrid));
    FAIL() << "HYBRID_SHARD on half a node was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/cluster/gpus_per_node");
  }
  // The scenario loader says the same before any prediction.
  const nlohmann::json base = {{"model", {{"preset", "gpt2-xl"}}},
                               {"hardware", {{"preset", "dgx-a100"}}},
                               {"cluster", {{"gpus", 4}}},
                               {"training", {{"per_gpu_batch", 1}}},
                               {"parallelism", {{"strategy", "fsdp_hybrid"}}}};
  try {
    model::parse_scenario(base, "hybrid.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/cluster/gpus_per_node");
  }
  nlohmann::json topk = base;
  topk["cluster"]["gpus"] = 8;
  topk["parallelism"] = {{"strategy", "zero3"}, {"comm_hook", "topk:0.01"}};
  try {
    model::parse_scenario(topk, "topk.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/parallelism/comm_hook");
  }
}

}  // namespace
}  // namespace ddpsim::sim
