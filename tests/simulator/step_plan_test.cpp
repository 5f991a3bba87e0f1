// The pure pieces of a step plan (simulator/analytic/step_plan.hpp), by hand.
#include "simulator/analytic/step_plan.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "model/builders/builders.hpp"
#include "model/scenario/scenario.hpp"
#include "model/workload/bucketing.hpp"
#include "simulator/analytic/analytic.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

using model::CommHook;
using model::DType;
using model::Precision;

TEST(StepPlanTest, RecomputationAddsEachTransformerBlocksForwardToItsBackward) {
  // Layers: embedding, two blocks, head. Only the blocks run their forward again:
  // bwd = {2, 4 + 1, 6 + 3, 8} and 2 blocks recomputed.
  model::Workload w;
  for (const char* kind : {"embedding", "transformer_block", "transformer_block", "linear"}) {
    model::Layer l;
    l.kind = kind;
    w.layers.push_back(l);
  }
  const model::ActivationCheckpointing full{model::CheckpointMode::kFull};
  std::vector<double> bwd = {2, 4, 6, 8};
  const std::vector<double> fwd = {10, 1, 3, 20};
  const std::vector<double> op = {0, 0.25, 0.5, 0};  // what op-selective reruns of each forward
  EXPECT_EQ(add_recomputation(w, full, bwd, fwd, op), 2);
  EXPECT_EQ(bwd, (std::vector<double>{2, 5, 9, 8}));
  // Op-selective: every block reruns its op share: {2, 4 + 0.25, 6 + 0.5, 8}.
  bwd = {2, 4, 6, 8};
  EXPECT_EQ(add_recomputation(w, {model::CheckpointMode::kSelectiveOp}, bwd, fwd, op), 2);
  EXPECT_EQ(bwd, (std::vector<double>{2, 4.25, 6.5, 8}));
  // Every 2nd block (torchtitan's counter from 1, (i + 1) % 2 == 0): only block 1, the layer at
  // index 2, reruns its forward: {2, 4, 6 + 3, 8}.
  bwd = {2, 4, 6, 8};
  EXPECT_EQ(add_recomputation(w, {model::CheckpointMode::kSelectiveLayer, 2}, bwd, fwd, op), 1);
  EXPECT_EQ(bwd, (std::vector<double>{2, 4, 9, 8}));
  // None: nothing.
  bwd = {2, 4, 6, 8};
  EXPECT_EQ(add_recomputation(w, {}, bwd, fwd, op), 0);
  EXPECT_EQ(bwd, (std::vector<double>{2, 4, 6, 8}));
  // An MLP has no blocks: nothing changes.
  const model::Workload mlp = model::build_mlp({{4, 4, 4}});
  std::vector<double> b2 = {1, 1};
  EXPECT_EQ(add_recomputation(mlp, full, b2, {5, 5}, {0, 0}), 0);
  EXPECT_EQ(b2, (std::vector<double>{1, 1}));
}

TEST(StepPlanTest, WireFormatOfTheHooksAndReduceDtypes) {
  model::TrainingConfig t;
  t.precision = Precision::kFp32;
  CommHook none;
  // fp32 gradients, no hook: fp32 on the wire, no casts.
  WireFormat f = ddp_wire_format(t, none);
  EXPECT_EQ(f.dtype, DType::kFp32);
  EXPECT_EQ(f.cast_bytes_per_element, 0.0);
  // fp16_compress_hook on fp32 gradients: to(fp16) read 4 + write 2, div_ read 2 + write 2,
  // copy_ back read 2 + write 4 = 16 B.
  CommHook fp16;
  fp16.kind = CommHook::Kind::kFp16;
  f = ddp_wire_format(t, fp16);
  EXPECT_EQ(f.dtype, DType::kFp16);
  EXPECT_EQ(f.cast_bytes_per_element, 16.0);
  // bf16 gradients (bf16 training) under a bf16 hook: already narrow, no cast.
  CommHook bf16;
  bf16.kind = CommHook::Kind::kBf16;
  t.precision = Precision::kBf16;
  f = ddp_wire_format(t, bf16);
  EXPECT_EQ(f.dtype, DType::kBf16);
  EXPECT_EQ(f.cast_bytes_per_element, 0.0);
  // grad_reduce_dtype without a hook: that dtype on the wire, no hook casts.
  t.precision = Precision::kFp32;
  t.grad_reduce_dtype = DType::kBf16;
  f = ddp_wire_format(t, none);
  EXPECT_EQ(f.dtype, DType::kBf16);
  EXPECT_EQ(f.cast_bytes_per_element, 0.0);
}

TEST(StepPlanTest, ReducerCopyInPerLayerByHand) {
  // Two layers of 1e6 fp32 parameters: each layer's copy reads and writes 4e6 bytes,
  // 8e6 / 1e12 B/s = 8 us, whichever bucket its tensors are in.
  const auto w = fixtures::two_layers();
  model::BucketOptions o;
  o.grad_bytes = 4;
  o.cap_bytes = 25 << 20;
  const model::BucketPlan plan = model::assign_buckets(*w, o);
  const std::vector<double> c = reducer_copy_in_s(*w, plan, DType::kFp32, 1e12);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_DOUBLE_EQ(c[0], 8e-6);
  EXPECT_DOUBLE_EQ(c[1], 8e-6);
  // bf16 gradients move half the bytes.
  EXPECT_DOUBLE_EQ(reducer_copy_in_s(*w, plan, DType::kBf16, 1e12)[0], 4e-6);
}

TEST(StepPlanTest, InterferedTimeOfTheHeaderExample) {
  // 2 ms of work, 40 us busy, factor 1.5: 40 us do 26.667 us of work, the other 1.97333 ms run
  // at full rate: 2.01333 ms.
  EXPECT_NEAR(interfered_s(2e-3, 40e-6, 1.5), 40e-6 + (2e-3 - 40e-6 / 1.5), 1e-15);
  EXPECT_NEAR(interfered_s(2e-3, 40e-6, 1.5), 2.0133333e-3, 1e-10);
}

// Without a given or measured interference, NCCL's own SM use: on a DGX A100 (108 SMs) the
// collectives run on c channels, one thread block and SM each, so the compute beside them keeps
// 108 - c SMs: interference 108 / (108 - c), c the widest collective's channel count (DDP's
// bucket all-reduces; FSDP's all-gathers and reduce-scatters). A given simulation.interference
// wins.
TEST(StepPlanTest, DefaultInterferenceIsTheSmsNcclChannelsTake) {
  for (const char* strategy : {"ddp", "fsdp_full_shard"}) {
    SCOPED_TRACE(strategy);
    nlohmann::json doc = {{"name", "i"},
                          {"model", {{"mlp", {{"widths", {4096, 4096, 4096, 4096}}}}}},
                          {"hardware", {{"preset", "dgx-a100"}}},
                          {"cluster", {{"gpus", 16}}},
                          {"training", {{"per_gpu_batch", 64}}},
                          {"parallelism", {{"strategy", strategy}}}};
    const model::Scenario s = model::parse_scenario(doc, "i.json");
    const StepPlan plan = Predictor(s).plan(s.cluster, s.training, s.parallelism);
    int channels = 0;
    for (const PlannedBucket& b : plan.buckets) channels = std::max(channels, b.cost.channels);
    for (const ScheduledCollective& c : plan.schedule)
      channels = std::max(channels, c.cost.channels);
    ASSERT_GT(channels, 0);
    EXPECT_EQ(plan.interference_source, "nccl_channels");
    // The MLP's backward has its memory-bound share m (element-wise kernels); the widest
    // collective's kernel takes h = 3 busbw / (2039 GB/s x 0.8) of HBM:
    // (1 - m) 108 / (108 - c) + m / (1 - h).
    double busbw = 0;
    for (const PlannedBucket& b : plan.buckets) busbw = std::max(busbw, b.cost.busbw_gbytes_per_s);
    for (const ScheduledCollective& c : plan.schedule)
      busbw = std::max(busbw, c.cost.busbw_gbytes_per_s);
    const double h = 3 * busbw / (2039 * 0.8);
    const double m = plan.backward_memory_share;
    EXPECT_GT(m, 0);
    EXPECT_LT(m, 0.5);
    EXPECT_NEAR(plan.interference_hbm_share, h, 1e-12);
    EXPECT_NEAR(plan.interference, (1 - m) * 108.0 / (108.0 - channels) + m / (1 - h), 1e-12);
    doc["simulation"] = {{"interference", 1.05}};
    const model::Scenario given = model::parse_scenario(doc, "i.json");
    const StepPlan plan_given =
        Predictor(given).plan(given.cluster, given.training, given.parallelism);
    EXPECT_EQ(plan_given.interference_source, "scenario");
    EXPECT_DOUBLE_EQ(plan_given.interference, 1.05);
  }
}

}  // namespace
}  // namespace ddpsim::sim
