// FSDP2 (simulator/prediction/fsdp2.hpp): the volumes of the issue's goals by hand (1.5x DDP with
// reshard_after_forward=true, all-gather x1 with false, HSDP's all-reduce of 1/shard), exact step
// times on the round machine (copy-out and copy-in kernels, the reduce-scatter waits, HSDP's
// all-reduce on its own communicator), accumulation without gradient sync, the groups of each
// `units` mode, the dtype rules, memory by hand, both engines agreeing, bad meshes.
#include "simulator/prediction/fsdp2.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "model/builders/builders.hpp"
#include "model/builders/zoo.hpp"
#include "model/error.hpp"
#include "model/hardware/cluster.hpp"
#include "model/scenario/hardware_io.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/sharded.hpp"
#include "simulator/collectives/collective.hpp"
#include "simulator/event/simulate.hpp"
#include "simulator/prediction/memory.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

using fixtures::fp32_adam;
using fixtures::round_machine;
using model::Strategy;

// fully_shard on every layer (the lumps are not transformer blocks).
model::ParallelismConfig fsdp2() {
  model::ParallelismConfig p;
  p.strategy = Strategy::kFsdp2;
  p.fsdp2.units = model::Fsdp2Units::kLayers;
  return p;
}

// Collectives of one kind in the step.
int count(const Prediction& p, model::CollectiveOp kind) {
  int n = 0;
  for (const BucketTiming& b : p.buckets) n += b.kind == kind;
  return n;
}

TEST(Fsdp2Test, VolumesAreTheIssuesGoals) {
  // P = 8 x 4 MB = 32 MB on 8 GPUs of one node. DDP all-reduces 2 (n-1)/n P = 56 MB per rank.
  // reshard_after_forward=true: all-gather in forward and again in backward, reduce-scatter:
  // 3 (n-1)/n P = 84 MB = 1.5 x DDP. false: one all-gather and the reduce-scatter, 56 MB.
  const Predictor pr(fixtures::lump_layers(8), round_machine());
  const double P = 32e6, n = 8;
  model::ParallelismConfig ddp;
  const double ddp_bytes = fixtures::per_rank_traffic(pr.predict({8, 8}, fp32_adam(), ddp), 8);
  EXPECT_DOUBLE_EQ(ddp_bytes, 2 * (n - 1) / n * P);
  const double full = fixtures::per_rank_traffic(pr.predict({8, 8}, fp32_adam(), fsdp2()), 8);
  EXPECT_DOUBLE_EQ(full, 3 * (n - 1) / n * P);
  EXPECT_DOUBLE_EQ(full / ddp_bytes, 1.5);
  model::ParallelismConfig keep = fsdp2();
  keep.fsdp2.reshard_after_forward = false;
  EXPECT_DOUBLE_EQ(fixtures::per_rank_traffic(pr.predict({8, 8}, fp32_adam(), keep), 8),
                   2 * (n - 1) / n * P);
  // reshard_after_forward=2: the backward all-gather runs within pairs, 1/2 x P per rank.
  model::ParallelismConfig pairs = fsdp2();
  pairs.fsdp2.reshard_after_forward_group = 2;
  const Prediction pp = pr.predict({8, 8}, fp32_adam(), pairs);
  double fwd = 0, bwd_gather = 0, scatter = 0;
  for (const BucketTiming& b : pp.buckets) {
    if (b.kind == model::CollectiveOp::kReduceScatter) {
      scatter += per_rank_traffic_bytes(b.kind, static_cast<double>(b.bytes), 8);
    } else if (b.phase == CommPhase::kForward) {
      fwd += per_rank_traffic_bytes(b.kind, static_cast<double>(b.bytes), 8);
    } else {
      bwd_gather += per_rank_traffic_bytes(b.kind, static_cast<double>(b.bytes), 2);
    }
  }
  EXPECT_DOUBLE_EQ(fwd, 7.0 / 8.0 * P);
  EXPECT_DOUBLE_EQ(scatter, 7.0 / 8.0 * P);
  EXPECT_DOUBLE_EQ(bwd_gather, 0.5 * P);
  // MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32) over fp32 parameters (amp_bf16):
  // the all-gathers move 2-byte parameters, the reduce-scatter 4-byte gradients:
  // 7/8 x (2 x P/2 + P) = 56 MB.
  model::TrainingConfig amp = fp32_adam();
  amp.precision = model::Precision::kAmpBf16;
  model::ParallelismConfig mp = fsdp2();
  mp.fsdp2.param_dtype = model::DType::kBf16;
  mp.fsdp2.reduce_dtype = model::DType::kFp32;
  EXPECT_DOUBLE_EQ(fixtures::per_rank_traffic(pr.predict({8, 8}, amp, mp), 8), 7.0 / 8.0 * (P + P));
}

TEST(Fsdp2Test, HsdpAllReducesOneShardAcrossReplicas) {
  // 16 GPUs, mesh 8 shard x 2 replicate: all-gathers and reduce-scatters over 8 GPUs
  // (3 x 7/8 P), and each group's reduce-scattered 1/8 all-reduced across the 2 replicas:
  // 2 (r-1)/r x P/8 = P/8 per rank.
  const Predictor pr(fixtures::lump_layers(8), round_machine());
  const double P = 32e6;
  model::ParallelismConfig par = fsdp2();
  par.fsdp2.mesh_shard = 8;
  const Prediction p = pr.predict({16, 8}, fp32_adam(), par);
  const fixtures::SplitTraffic t = fixtures::split_traffic(p, 8, 2);
  EXPECT_DOUBLE_EQ(t.shard_group, 3 * 7.0 / 8.0 * P);
  EXPECT_DOUBLE_EQ(t.all_reduce_bytes, P / 8);
  EXPECT_DOUBLE_EQ(t.replicas, P / 8);
  // replicate given instead of shard: the same mesh.
  model::ParallelismConfig by_replicas = fsdp2();
  by_replicas.fsdp2.mesh_replicate = 2;
  EXPECT_DOUBLE_EQ(pr.predict({16, 8}, fp32_adam(), by_replicas).step_time_s, p.step_time_s);
  EXPECT_EQ(pr.plan({16, 8}, fp32_adam(), par).shard_group, 8);
}

TEST(Fsdp2Test, StepTimesByHand) {
  // 2 layers of 4 MB on 2 GPUs of one node: an all-gather or reduce-scatter of 4 MB takes
  // 1/2 x 4 MB / 100 GB/s = 20 us (fp32 reduces with NCCL's AVG: no division kernels). On the
  // compute stream: each all-gather's copy-out 2 x 4 MB / 1 TB/s = 8 us before the layer, each
  // reduce-scatter's copy-in (chunk_cat) 4 + 4 bytes x 1e6 / 1 TB/s = 8 us after it.
  const Predictor pr(fixtures::lump_layers(2), round_machine());
  const model::ClusterConfig c{2, 8};
  // Forward: gathers l0 0-20 and l1 20-40 (both may run ahead: the all-gather stream waits for
  // the copy-out two groups back); F0 (1008) 20-1028, F1 1028-2036. Backward: l1's gather
  // 2036-2056 and, prefetched by l1's pre-backward, l0's 2056-2076; B1 (2000 + 8 copy-out + 8
  // copy-in) 2056-4072; reduce-scatter l1 4072-4092; B0 4072-6088; reduce-scatter l0
  // 6088-6108; optimizer (28 bytes x 1e6 / 1 TB/s) 6108-6136 us.
  const Prediction p = pr.predict(c, fp32_adam(), fsdp2());
  EXPECT_NEAR(p.step_time_s, 6.136e-3, 1e-12);
  EXPECT_NEAR(p.exposed_comm_s, 60e-6, 1e-12);  // l0's forward gather, l1's backward, last RS
  EXPECT_NEAR(p.comm_time_s, 6 * 20e-6, 1e-12);
  // reshard_after_forward=false: no backward gathers or copy-outs: B1 (2008) 2036-4044,
  // scatter l1 4044-4064, B0 4044-6052, scatter l0 6052-6072, optimizer to 6100 us.
  model::ParallelismConfig keep = fsdp2();
  keep.fsdp2.reshard_after_forward = false;
  EXPECT_NEAR(pr.predict(c, fp32_adam(), keep).step_time_s, 6.100e-3, 1e-12);
  // backward_prefetch 0: l0's gather is issued in its own pre-backward, behind l1's
  // reduce-scatter (4072-4092): 4092-4112, B0 4112-6128, scatter 6128-6148, optimizer to 6176.
  model::ParallelismConfig none = fsdp2();
  none.fsdp2.backward_prefetch = 0;
  EXPECT_NEAR(pr.predict(c, fp32_adam(), none).step_time_s, 6.176e-3, 1e-12);
  // The engines agree on each.
  EventOptions o;
  o.steps = 1;
  for (const auto& par : {fsdp2(), keep, none}) {
    EXPECT_NEAR(simulate_event(pr.plan(c, fp32_adam(), par), o).mean_step_time_s,
                pr.predict(c, fp32_adam(), par).step_time_s, 1e-8);
  }
}

TEST(Fsdp2Test, HsdpAllReduceRunsOnItsOwnCommunicator) {
  // 16 GPUs, mesh 8 x 2, 2 layers. Over the 8 GPUs of a node a 4 MB gather or scatter takes
  // 7/8 x 4 MB / 100 GB/s = 35 us; each 0.5 MB shard is all-reduced over the 2 nodes on one
  // 12.5 GB/s rail, 2 x 1/2 x 0.5 MB / 12.5 GB/s = 40 us, on the replicate communicator right
  // after its reduce-scatter, while the shard group's stream goes on.
  // Gathers l0 0-35, l1 35-70; F0 35-1043, F1 1043-2051; backward gathers l1 2051-2086, l0
  // 2086-2121; B1 2086-4102; scatter l1 4102-4137, its all-reduce 4137-4177 (beside B0);
  // B0 4102-6118; scatter l0 6118-6153, all-reduce 6153-6193; optimizer (28 x 2e6 / 8 / 1e12
  // = 7 us) 6193-6200 us.
  const Predictor pr(fixtures::lump_layers(2), round_machine());
  model::ParallelismConfig par = fsdp2();
  par.fsdp2.mesh_shard = 8;
  const Prediction p = pr.predict({16, 8}, fp32_adam(), par);
  EXPECT_NEAR(p.step_time_s, 6.200e-3, 1e-12);
  const StepPlan sp = pr.plan({16, 8}, fp32_adam(), par);
  int all_reduces = 0;
  for (const ScheduledCollective& c : sp.schedule) {
    if (c.cost.kind != model::CollectiveOp::kAllReduce) continue;
    ++all_reduces;
    EXPECT_EQ(c.stream, 1);
    ASSERT_GE(c.after, 0);
    EXPECT_EQ(sp.schedule[static_cast<std::size_t>(c.after)].cost.kind,
              model::CollectiveOp::kReduceScatter);
    EXPECT_NEAR(c.collective_s, 40e-6, 1e-12);
  }
  EXPECT_EQ(all_reduces, 2);
  EventOptions o;
  o.steps = 2;
  EXPECT_NEAR(simulate_event(sp, o).mean_step_time_s, p.step_time_s, 1e-8);
  // set_requires_all_reduce(False) with 2 micro-batches: the all-reduces run in the last only.
  par.fsdp2.requires_all_reduce = false;
  const Prediction q = pr.predict({16, 8}, fp32_adam(2), par);
  EXPECT_EQ(count(q, model::CollectiveOp::kAllReduce), 2);
  EXPECT_EQ(count(q, model::CollectiveOp::kReduceScatter), 4);
}

// FSDP2 reduces fp32 and bf16 gradients with ReduceOp.AVG (_fsdp_collectives.py
// _get_gradient_divide_factors): NCCL runs that as PreMulSum, never on NVLS
// (model::Reduction). On one DGX B200 with NCCL 2.26.2 a sum of a 16 MiB layer's gradients
// would reduce-scatter on NVLS; FSDP2's runs on the ring.
TEST(Fsdp2Test, ReduceScatterAveragesSoNcclKeepsItOffNvls) {
  const model::HardwareSpec hw = model::resolve_hardware(
      {{"preset", "dgx-b200"}, {"collectives", {{"nccl_version", "2.26.2"}}}}, "t.json",
      "/hardware");
  const Predictor pr(std::make_shared<const model::Workload>(model::build_from_layers(
                         {{"l0", 4194304, 1e9, 1e9}, {"l1", 4194304, 1e9, 1e9}})),
                     hw);
  const StepPlan sp = pr.plan({8, 8}, fp32_adam(), fsdp2());
  const model::CollectiveBandwidths bw = model::Topology(hw, 8).bandwidths();
  int scatters = 0;
  for (const ScheduledCollective& c : sp.schedule) {
    if (c.cost.kind != model::CollectiveOp::kReduceScatter) continue;
    ++scatters;
    const auto bytes = static_cast<double>(c.cost.bytes);
    EXPECT_EQ(
        collective_cost(c.cost.kind, bw, hw, bytes, model::CollectiveAlgorithm::kAuto).algorithm,
        model::CollectiveAlgorithm::kNvls);
    EXPECT_EQ(c.cost.algorithm, model::CollectiveAlgorithm::kRing);
  }
  EXPECT_EQ(scatters, 2);
}

TEST(Fsdp2Test, NoGradientSyncReducesInTheLastMicroBatchOnly) {
  // k = 3: gathers in every micro-batch (2 groups x 2 x 3 = 12), reduce-scatters only in the
  // last (2); the memory holds every unsharded gradient in the reduce dtype (2 x 4 MB).
  const Predictor pr(fixtures::lump_layers(2), round_machine());
  model::ParallelismConfig par = fsdp2();
  par.fsdp2.requires_gradient_sync = false;
  const Prediction p = pr.predict({2, 8}, fp32_adam(3), par);
  for (const BucketTiming& b : p.buckets) {
    if (b.kind == model::CollectiveOp::kReduceScatter) {
      EXPECT_EQ(b.micro_batch, 2);
    }
  }
  EXPECT_EQ(count(p, model::CollectiveOp::kAllGather), 12);
  EXPECT_EQ(count(p, model::CollectiveOp::kReduceScatter), 2);
  const Prediction synced = pr.predict({2, 8}, fp32_adam(3), fsdp2());
  EXPECT_NEAR(p.memory.buffer_bytes - synced.memory.buffer_bytes, 8e6, 1);
  EventOptions o;
  o.steps = 1;
  EXPECT_NEAR(simulate_event(pr.plan({2, 8}, fp32_adam(3), par), o).mean_step_time_s, p.step_time_s,
              1e-8);
}

TEST(Fsdp2Test, GroupsOfEachUnitsMode) {
  // A Llama-style preset: blocks = one group per transformer block plus the root (embeddings,
  // final norm, head) first; layers = one per layer with parameters; model = the root alone.
  const model::Workload w =
      model::load_model_preset("llama-2-7b", "test", "/model/preset", std::nullopt);
  int blocks = 0, with_params = 0;
  for (const model::Layer& l : w.layers) {
    blocks += l.kind == "transformer_block";
    with_params += l.tensor_count > 0;
  }
  const auto b = fsdp2_groups(w, model::Fsdp2Units::kBlocks);
  ASSERT_EQ(static_cast<int>(b.size()), blocks + 1);
  EXPECT_TRUE(b.front().root);
  std::int64_t sum = 0;
  for (const Fsdp2Group& g : b) sum += g.elements;
  EXPECT_EQ(sum, w.param_count());
  EXPECT_EQ(static_cast<int>(fsdp2_groups(w, model::Fsdp2Units::kLayers).size()), with_params);
  const auto m = fsdp2_groups(w, model::Fsdp2Units::kModel);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.front().elements, w.param_count());
}

// torchtitan's grouping since 2025 (apply_fsdp at 238fa9953): the embeddings alone, every block,
// then [norm, output] as one group that keeps its parameters unsharded from forward to backward;
// the root holds nothing. Llama-2-7B: 1 + 32 + 1 groups; the tail is the final norm (4,096) and
// lm_head (32,000 x 4,096). Memory: the tail's bf16 parameters stay gathered through the step
// (2 x 131,076,096 bytes, not 1/8 of them), the embeddings no longer do; the backward gathers
// every block and the embeddings but not the tail.
TEST(Fsdp2Test, TorchtitansGrouping) {
  const model::Workload w =
      model::load_model_preset("llama-2-7b", "test", "/model/preset", std::nullopt);
  const auto g = fsdp2_groups(w, model::Fsdp2Units::kTorchtitan);
  ASSERT_EQ(g.size(), 34u);
  EXPECT_FALSE(g.front().root);
  EXPECT_EQ(g.front().name, "model.embed_tokens");
  EXPECT_TRUE(g.front().reshard);
  EXPECT_EQ(g.back().name, "norm+output");
  EXPECT_FALSE(g.back().reshard);
  EXPECT_EQ(g.back().elements, 4096 + 32000 * 4096);
  std::int64_t sum = 0;
  for (const Fsdp2Group& x : g) sum += x.elements;
  EXPECT_EQ(sum, w.param_count());
}

TEST(Fsdp2Test, DtypesFollowThePolicy) {
  model::TrainingConfig t = fp32_adam();
  model::Fsdp2Config c;
  Fsdp2Dtypes d = fsdp2_dtypes("s.json", t, c);
  EXPECT_EQ(d.param, model::DType::kFp32);
  EXPECT_EQ(d.reduce, model::DType::kFp32);
  t.precision = model::Precision::kAmpBf16;  // torchtitan: fp32 parameters, bf16 policy
  c.param_dtype = model::DType::kBf16;
  d = fsdp2_dtypes("s.json", t, c);
  EXPECT_EQ(d.orig, model::DType::kFp32);
  EXPECT_EQ(d.param, model::DType::kBf16);
  EXPECT_EQ(d.reduce, model::DType::kBf16);  // reduce_dtype defaults to param_dtype
  t.grad_reduce_dtype = model::DType::kFp32;
  EXPECT_EQ(fsdp2_dtypes("s.json", t, c).reduce, model::DType::kFp32);
  t.precision = model::Precision::kFp32;  // bf16 all-gathers of fp32 compute: refused
  try {
    fsdp2_dtypes("s.json", t, c);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/parallelism/fsdp2/mixed_precision/param_dtype");
  }
}

TEST(Fsdp2Test, MemoryByHand) {
  // 2 layers of 1e6 fp32 parameters on 8 GPUs, Adam, fp32: model states 16 bytes x 2e6 / 8.
  // Buffers (fsdp2_buffer_bytes): forward 2 gather outputs + 1 unsharded unit = 12 MB;
  // backward 2 units of parameters (current + prefetched), one of gradients and one
  // reduce-scatter input = 16 MB; the larger, 16 MB. reshard_after_forward=false keeps both
  // units (8 MB) from forward to backward; reshard to 2 keeps half of that.
  const auto w = fixtures::lump_layers(2);
  MemoryInputs in;
  in.workload = w.get();
  in.strategy = Strategy::kFsdp2;
  in.dp_size = 8;
  in.include_runtime = false;
  in.fsdp2.units = model::Fsdp2Units::kLayers;
  MemoryEstimate m = estimate_memory(in);
  EXPECT_DOUBLE_EQ(m.model_state_bytes(), 16.0 * 2e6 / 8);
  EXPECT_DOUBLE_EQ(m.buffer_bytes, 16e6);
  in.fsdp2.reshard_after_forward = false;
  EXPECT_DOUBLE_EQ(estimate_memory(in).buffer_bytes, 24e6);
  in.fsdp2.reshard_after_forward = true;
  in.fsdp2.reshard_after_forward_group = 2;
  EXPECT_DOUBLE_EQ(estimate_memory(in).buffer_bytes, 20e6);
  // HSDP over 2 x 4: the states are sharded over the 4 ranks of the shard dimension.
  in.fsdp2.reshard_after_forward_group = 0;
  in.fsdp2.mesh_shard = 4;
  EXPECT_DOUBLE_EQ(estimate_memory(in).model_state_bytes(), 16.0 * 2e6 / 4);
}

TEST(Fsdp2Test, EnginesAgree) {
  const Predictor pr(fixtures::lump_layers(6), round_machine());
  for (int k : {1, 3}) {
    for (int variant = 0; variant < 6; ++variant) {
      model::ParallelismConfig par = fsdp2();
      if (variant == 1) par.fsdp2.reshard_after_forward = false;
      if (variant == 2) par.fsdp2.mesh_shard = 8;
      if (variant == 3) par.fsdp2.reshard_after_forward_group = 8;
      if (variant == 4) par.fsdp2.forward_prefetch = 2;
      if (variant == 5) {
        par.fsdp2.mesh_shard = 4;
        par.fsdp2.requires_gradient_sync = false;
      }
      const StepPlan sp = pr.plan({16, 8}, fp32_adam(k), par);
      EventOptions o;
      o.steps = 2;
      EXPECT_NEAR(simulate_event(sp, o).mean_step_time_s,
                  pr.predict({16, 8}, fp32_adam(k), par).step_time_s, 1e-8)
          << "variant " << variant << " k " << k;
    }
  }
}

TEST(Fsdp2Test, CpuOffloadByHand) {
  // 2 layers on 2 GPUs as StepTimesByHand, CPUOffloadPolicy with 10 GB/s of host memory
  // bandwidth shared by the host's 2 ranks. Each all-gather first copies its 2 MB fp32 shard
  // host-to-device over the 100 GB/s PCIe path (20 us: 40 us with the gather), each
  // reduce-scatter's shard goes back (40 us). Gathers l0 0-40, l1 40-80; F0 40-1048, F1
  // 1048-2056; backward gathers 2056-2096 and 2096-2136; B1 2096-4112; scatter l1 4112-4152;
  // B0 4112-6128; scatter l0 6128-6168; the optimizer on the CPU moves the bytes of the GPU's
  // 28 us at 5 GB/s instead of 1 TB/s: 5,600 us, to 11,768 us.
  const Predictor pr(fixtures::lump_layers(2), round_machine());
  model::ParallelismConfig par = fsdp2();
  par.fsdp2.cpu_offload = model::Fsdp2Config::CpuOffload{true, 10e9};
  const Prediction p = pr.predict({2, 8}, fp32_adam(), par);
  EXPECT_NEAR(p.step_time_s, 11.768e-3, 1e-12);
  EXPECT_NEAR(p.optimizer_time_s, 5.6e-3, 1e-12);
  EXPECT_DOUBLE_EQ(p.memory.params_bytes + p.memory.grads_bytes + p.memory.optimizer_bytes, 0.0);
  // Unpinned: the backward waits for each device-to-host copy: B0 4152-6168, scatter l0
  // 6168-6208, optimizer to 11,808 us.
  par.fsdp2.cpu_offload->pin_memory = false;
  EXPECT_NEAR(pr.predict({2, 8}, fp32_adam(), par).step_time_s, 11.808e-3, 1e-12);
  EventOptions o;
  o.steps = 1;
  EXPECT_NEAR(simulate_event(pr.plan({2, 8}, fp32_adam(), par), o).mean_step_time_s, 11.808e-3,
              1e-8);
}

// Compute beside the collectives slowed by interference: the engines agree when HSDP's
// all-reduces queue on their own communicator behind the reduce-scatters they follow (the event
// engine projects that queue as the analytic timeline lays it out).
TEST(Fsdp2Test, EnginesAgreeWithInterferenceAcrossCommunicators) {
  Predictor pr(fixtures::lump_layers(6), round_machine());
  pr.set_interference(1.5);
  for (int k : {1, 2}) {
    model::ParallelismConfig par = fsdp2();
    par.fsdp2.mesh_shard = 8;
    par.fsdp2.requires_all_reduce = k == 1;
    EventOptions o;
    o.steps = 2;
    EXPECT_NEAR(simulate_event(pr.plan({16, 8}, fp32_adam(k), par), o).mean_step_time_s,
                pr.predict({16, 8}, fp32_adam(k), par).step_time_s, 1e-8)
        << "k " << k;
  }
}

TEST(Fsdp2Test, BadMeshesNameTheirPointer) {
  model::Fsdp2Config c;
  c.mesh_shard = 3;
  auto p = fsdp2_mesh_problem(c, 16);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pointer, "/parallelism/fsdp2/mesh/shard");
  c.mesh_shard = 8;
  c.mesh_replicate = 4;
  EXPECT_EQ(fsdp2_mesh_problem(c, 16)->pointer, "/parallelism/fsdp2/mesh/replicate");
  c.mesh_replicate = 2;
  EXPECT_FALSE(fsdp2_mesh_problem(c, 16).has_value());
  c.reshard_after_forward_group = 3;
  EXPECT_EQ(fsdp2_mesh_problem(c, 16)->pointer, "/parallelism/fsdp2/reshard_after_forward");
  const Predictor pr(fixtures::lump_layers(2), round_machine());
  model::ParallelismConfig par = fsdp2();
  par.fsdp2.mesh_shard = 3;
  EXPECT_THROW(pr.predict({16, 8}, fp32_adam(), par), InputError);
  model::ParallelismConfig hook = fsdp2();
  hook.comm_hook.kind = model::CommHook::Kind::kBf16;
  hook.comm_hook.text = "bf16";
  EXPECT_THROW(pr.predict({16, 8}, fp32_adam(), hook), InputError);
}

}  // namespace
}  // namespace ddpsim::sim
