// PowerSGD and top-k communication hooks in the step plan, on a machine whose rates are round
// numbers so that every figure below can be checked by hand.
#include <gtest/gtest.h>

#include <memory>

#include "model/builders/builders.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/analytic.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/event/simulate.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

using model::DType;

// 1 TFLOP/s fp32 and 1 TB/s HBM at efficiency 1; 100 GB/s switched NVLink with a 10 us step
// latency, ring efficiency 1; one 1.25 GB/s (10 Gb/s) NIC per node with the same latency.
model::HardwareSpec slow_nic_machine() {
  model::HardwareSpec hw = fixtures::round_machine();
  hw.inter_node = {"nic", 1.25e9, 0};
  hw.nics_per_node = 1;
  hw.intra_tuning.latency = 10e-6;
  hw.inter_tuning.latency = 10e-6;
  return hw;
}

model::TrainingConfig fp32_sgd() {
  model::TrainingConfig t;
  t.per_gpu_batch = 1;
  t.precision = model::Precision::kFp32;
  t.optimizer = model::Optimizer::kSgd;
  return t;
}

model::ParallelismConfig hook(model::CommHook::Kind kind, int rank, double fraction,
                              const char* text) {
  model::ParallelismConfig par;
  par.algorithm = model::CollectiveAlgorithm::kRing;
  par.comm_hook.kind = kind;
  par.comm_hook.rank = rank;
  par.comm_hook.fraction = fraction;
  par.comm_hook.text = text;
  return par;
}

model::ParallelismConfig powersgd(int rank) {
  return hook(model::CommHook::Kind::kPowerSgd, rank, 0, rank == 1 ? "powersgd:1" : "powersgd:4");
}

// fc0.weight [4096, 4096] and fc0.bias [4096]: 16,781,312 fp32 gradients, one bucket (reverse
// order: the 16 KiB bias, then the weight closes the 1 MiB first bucket).
std::shared_ptr<const model::Workload> linear_4096() {
  return std::make_shared<const model::Workload>(model::build_mlp({{4096, 4096}}));
}

// Ring all-reduce of S bytes on the 8 GPUs of one node: 2(n-1) a + 2(n-1)/n S / B.
double ring_allreduce_8(double bytes) { return 14 * 10e-6 + 1.75 * bytes / 100e9; }

TEST(CompressionTest, PyTorchCompressionRule) {
  // (n + m) r min_compression_rate < n m, with r' = min(n, m, r).
  EXPECT_TRUE(powersgd_compresses(4096, 4096, 1));  // 16,384 < 16,777,216
  EXPECT_TRUE(powersgd_compresses(4096, 4096, 4));  // 65,536 < 16,777,216
  EXPECT_FALSE(powersgd_compresses(10, 10, 4));     // 160 >= 100
  EXPECT_TRUE(powersgd_compresses(10, 10, 1));      // 40 < 100
  EXPECT_FALSE(powersgd_compresses(4096, 1, 1));    // a bias viewed as 4096 x 1: 8194 >= 4096
  EXPECT_FALSE(powersgd_compresses(100, 100, 25));  // 10,000 >= 10,000: strict inequality
  EXPECT_TRUE(powersgd_compresses(100, 100, 24));   // 9,600 < 10,000
}

TEST(CompressionTest, BucketSplitAndRankCap) {
  // A conv weight [64, 3, 7, 7] is viewed as 64 x 147: rank 4 gives P 256, Q 588 elements.
  model::Workload w = model::build_from_layers({{"l", 1, 0, 0}});
  w.tensors.clear();
  model::add_tensor(w, 0, "conv.weight", {64, 3, 7, 7});
  model::add_tensor(w, 0, "small.weight", {10, 10});  // (10+10)*4*2 = 160 >= 100: kept
  model::add_tensor(w, 0, "bias", {4096});
  model::add_tensor(w, 0, "thin.weight", {3, 1000});  // r' = min(3, 1000, 4) = 3: (1003)*3*2
                                                      // = 6018 >= 3000: kept
  model::Bucket b;
  b.tensors = {0, 1, 2, 3};
  const PowerSgdBucket pb = powersgd_bucket(w, b, 4);
  EXPECT_EQ(pb.elements, 9408 + 100 + 4096 + 3000);
  EXPECT_EQ(pb.uncompressed_elements, 100 + 4096 + 3000);
  ASSERT_EQ(pb.compressed.size(), 1u);
  EXPECT_EQ(pb.compressed[0].n, 64);
  EXPECT_EQ(pb.compressed[0].m, 147);
  EXPECT_EQ(pb.p_elements, 256);
  EXPECT_EQ(pb.q_elements, 588);
  // The rank cap: at rank 200 a 64 x 147 matrix has r' = 64, (211)*64*2 = 27,008 >= 9408.
  EXPECT_TRUE(powersgd_bucket(w, b, 200).compressed.empty());
}

TEST(CompressionTest, PowerSgdBucketByHand) {
  const Predictor p(linear_4096(), slow_nic_machine());
  const double l = 16781312;
  struct Case {
    int rank;
    double p_elements, overhead_s;
  };
  // Overhead, g = 4 bytes, U = 4096 (the bias), L = 16,781,312:
  //  element-wise 4 (8L + 6U + 2|Q|) bytes at 1 TB/s;
  //  3 GEMMs of 4096 x 4096 x r: max(2 n m r / 1e12, 4 (n m + 2 n r) / 1e12);
  //  2 orthogonalisations of 4096 x r: max(2 n r^2 / 1e12, 4 n (3r + 2r(r-1)) / 1e12).
  // r = 1: 537.133056 + 3 x 67.141632 (HBM-bound) + 2 x 0.049152 = 738.656256 us.
  // r = 4: 537.231360 + 3 x 134.217728 (FLOP-bound) + 2 x 0.589824 = 941.064192 us.
  for (const Case c : {Case{1, 4096, 738.656256e-6}, Case{4, 16384, 941.064192e-6}}) {
    const StepPlan sp = p.plan({8, 8}, fp32_sgd(), powersgd(c.rank));
    ASSERT_EQ(sp.buckets.size(), 1u);
    const PlannedBucket& b = sp.buckets[0];
    const double u = 4 * 4096.0, pq = 4 * c.p_elements;  // bytes; |P| = |Q| (square matrix)
    EXPECT_EQ(b.cost.grad_bytes, 4 * 16781312);
    EXPECT_EQ(b.cost.bytes, static_cast<std::int64_t>(u + 2 * pq)) << c.rank;
    // Three chained all-reduces, three latencies; the same as collective_cost says.
    const auto ar = [&](double s) {
      return collective_cost(model::CollectiveOp::kAllReduce, sp.bandwidths, p.hardware(), s,
                             model::CollectiveAlgorithm::kRing)
          .time_s;
    };
    EXPECT_NEAR(b.collective_s, ar(u) + 2 * ar(pq), 1e-15);
    EXPECT_NEAR(b.collective_s, ring_allreduce_8(u) + 2 * ring_allreduce_8(pq), 1e-12);
    EXPECT_NEAR(b.overhead_s, c.overhead_s, 1e-12) << c.rank;
    EXPECT_NEAR(b.duration_s(), b.collective_s + b.overhead_s, 0);
    // Memory: error_dict (L) + P + Q, plus the clone of the bucket (L), 4 bytes each.
    EXPECT_NEAR(sp.hook_memory_bytes, 4 * (2 * l + 2 * c.p_elements), 0.5);
    // The warm-up phase is the plain all-reduce of the whole bucket.
    ASSERT_EQ(sp.warmup_buckets.size(), 1u);
    EXPECT_NEAR(sp.warmup_buckets[0].collective_s, ar(4 * l), 1e-15);
    EXPECT_EQ(sp.warmup_buckets[0].overhead_s, 0);
  }
}

TEST(CompressionTest, TopKByHand) {
  // One lump tensor of 1e6 fp32 parameters on 8 ranks, F = 0.01: k = 10,000; the all-gather
  // gathers 8 x 10,000 x (4 + 8) = 960,000 bytes: ring (n-1) a + (n-1)/n S / B = 70 + 8.4 us.
  const auto w =
      std::make_shared<const model::Workload>(model::build_from_layers({{"l0", 1000000, 1e9, 0}}));
  const Predictor p(w, slow_nic_machine());
  EXPECT_EQ(topk_count(1000000, 0.01), 10000);
  EXPECT_EQ(topk_count(1000001, 0.01), 10001);
  EXPECT_EQ(topk_gather_bytes(8, 10000, 4), 960000);
  const StepPlan sp = p.plan({8, 8}, fp32_sgd(), hook(model::CommHook::Kind::kTopK, 0, 0.01, "t"));
  ASSERT_EQ(sp.buckets.size(), 1u);
  const PlannedBucket& b = sp.buckets[0];
  EXPECT_EQ(b.cost.bytes, 960000);
  EXPECT_NEAR(b.collective_s,
              collective_cost(model::CollectiveOp::kAllGather, sp.bandwidths, p.hardware(), 960000,
                              model::CollectiveAlgorithm::kRing)
                  .time_s,
              1e-15);
  EXPECT_NEAR(b.collective_s, 78.4e-6, 1e-12);
  // Selection 4 x 7e6 + 1e4 x 12 = 28.12 MB; scatter-add 4 x 3e6 + 8e4 x 20 = 13.6 MB: 41.72 us.
  EXPECT_NEAR(b.overhead_s, 41.72e-6, 1e-12);
  // Iteration 1 (one bucket of every gradient) runs the hook too: the same single bucket here.
  EXPECT_NEAR(sp.first_iteration_allreduce_s, b.duration_s(), 1e-15);
  EXPECT_TRUE(sp.warmup_buckets.empty());
}

// 8 linears of 8192 x 8192 (537 M fp32 parameters) on two nodes joined by one 10 Gb/s NIC each.
std::shared_ptr<const model::Workload> wide_mlp() {
  return std::make_shared<const model::Workload>(
      model::build_mlp({{8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192}}));
}

TEST(CompressionTest, PowerSgdBeatsPlainAllReduceOnASlowNetwork) {
  const Predictor p(wide_mlp(), slow_nic_machine());
  const model::ParallelismConfig none = hook(model::CommHook::Kind::kNone, 0, 0, "none");
  const Prediction plain = p.predict({16, 8}, fp32_sgd(), none);
  const Prediction psgd = p.predict({16, 8}, fp32_sgd(), powersgd(1));
  const Prediction topk =
      p.predict({16, 8}, fp32_sgd(), hook(model::CommHook::Kind::kTopK, 0, 0.01, "topk:0.01"));
  EXPECT_LT(psgd.step_time_s, 0.5 * plain.step_time_s);
  EXPECT_LT(topk.step_time_s, plain.step_time_s);
  // Before start_powerSGD_iter the hook is a plain all-reduce: the step without a hook.
  ASSERT_TRUE(psgd.warmup_step_time_s.has_value());
  EXPECT_NEAR(*psgd.warmup_step_time_s, plain.step_time_s, 1e-12);
  EXPECT_FALSE(plain.warmup_step_time_s.has_value());
  // The hook's state is a buffer: error feedback alone is as large as the gradients.
  EXPECT_GT(psgd.memory.buffer_bytes, plain.memory.buffer_bytes + 4 * 537e6);
  // The event engine consumes the same plan and, without jitter, agrees (up to its integer
  // nanosecond clock: each of the ~100 events here is rounded, as event_dp_test allows).
  const StepPlan sp = p.plan({16, 8}, fp32_sgd(), powersgd(1));
  EXPECT_NEAR(simulate_event(sp, EventOptions{}).mean_step_time_s, psgd.step_time_s, 1e-7);
}

TEST(CompressionTest, GradientAccumulationAddsOnlyCompute) {
  const Predictor p(wide_mlp(), slow_nic_machine());
  model::TrainingConfig t2 = fp32_sgd();
  t2.grad_accumulation = 2;
  const Prediction k1 = p.predict({16, 8}, fp32_sgd(), powersgd(4));
  const Prediction k2 = p.predict({16, 8}, t2, powersgd(4));
  EXPECT_NEAR(k2.comm_time_s, k1.comm_time_s, 1e-15);  // one synchronisation per step
  EXPECT_GT(k2.step_time_s, k1.step_time_s);
}

TEST(CompressionTest, OneGpuCommunicatesNothing) {
  const Predictor p(wide_mlp(), slow_nic_machine());
  const Prediction plain =
      p.predict({1, 8}, fp32_sgd(), hook(model::CommHook::Kind::kNone, 0, 0, "none"));
  for (const model::ParallelismConfig& par :
       {powersgd(1), powersgd(4), hook(model::CommHook::Kind::kTopK, 0, 0.01, "topk:0.01")}) {
    const StepPlan sp = p.plan({1, 8}, fp32_sgd(), par);
    for (const PlannedBucket& b : sp.buckets) {
      EXPECT_EQ(b.collective_s, 0);
      EXPECT_EQ(b.overhead_s, 0);
    }
    EXPECT_EQ(sp.first_iteration_allreduce_s, 0);
    EXPECT_NEAR(p.predict({1, 8}, fp32_sgd(), par).step_time_s, plain.step_time_s, 1e-15);
  }
}

}  // namespace
}  // namespace ddpsim::sim
