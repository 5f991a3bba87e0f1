// The analytic step model on machines and models small enough to compute by hand.
#include "simulator/analytic/analytic.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "model/builders/builders.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/normal_order_stats.hpp"
#include "simulator/event/simulate.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

using fixtures::fp32_adam;
using fixtures::round_machine;
using fixtures::two_layers;

using model::DType;

TEST(AnalyticTest, TwoGpuStepByHand) {
  // forward: 1 ms per layer; backward 2 ms per layer. Adam in fp32 reads param, grad, m, v and
  // writes param, m, v: 28 bytes x 2e6 / 1e12 = 56 us. Buckets (default cap): {l1} (4 MB >=
  // 1 MiB closes the first bucket), then {l0}. The Reducer copies each layer's 4 MB of
  // gradients into its bucket during the backward (read + write: 8e6 / 1e12 = 8 us) and back
  // into .grad in finalize_backward (8 us per bucket, after its all-reduce).
  // Backward starts at 2 ms; l1's gradients are in bucket 0 at 2 + 2 + 0.008 = 4.008 ms; a
  // 2-rank ring all-reduce of 4e6 bytes takes 2*(1/2)*4e6/1e11 = 40 us: it ends at 4.048 ms.
  // l0 is in bucket 1 at 6.016 ms (the end of the backward); its all-reduce ends at 6.056 ms.
  // finalize: bucket 0 copied back 6.016..6.024, bucket 1 6.056..6.064; + 56 us optimizer =
  // 6.120 ms. Exposed (compute stream idle, waiting): 6.064 - 6.016 - 0.016 = 32 us.
  const Predictor p(two_layers(), round_machine());
  const Prediction r = p.predict({2, 8}, fp32_adam(), {});
  ASSERT_EQ(r.buckets.size(), 2u);
  EXPECT_NEAR(r.buckets[0].ready_s, 4.008e-3, 1e-12);
  EXPECT_NEAR(r.buckets[0].end_s, 4.048e-3, 1e-12);
  EXPECT_NEAR(r.buckets[1].start_s, 6.016e-3, 1e-12);
  EXPECT_NEAR(r.buckets[1].end_s, 6.056e-3, 1e-12);
  EXPECT_NEAR(r.forward_time_s, 2e-3, 1e-12);
  EXPECT_NEAR(r.backward_time_s, 4.032e-3, 1e-12);  // 4 ms + 16 us in + 16 us back
  EXPECT_NEAR(r.grad_copy_time_s, 32e-6, 1e-12);
  EXPECT_NEAR(r.optimizer_time_s, 56e-6, 1e-12);
  EXPECT_NEAR(r.exposed_comm_s, 32e-6, 1e-12);
  EXPECT_NEAR(r.comm_time_s, 80e-6, 1e-12);
  EXPECT_NEAR(r.step_time_s, 6.120e-3, 1e-12);
  EXPECT_NEAR(r.forward_time_s + r.backward_time_s + r.exposed_comm_s + r.optimizer_time_s,
              r.step_time_s, 1e-12);
  // Weak scaling: 1 GPU (no Reducer, no copies) takes 6.056 ms with the same per-GPU batch.
  EXPECT_NEAR(r.weak_scaling_efficiency, 6.056 / 6.120, 1e-9);
  // Strong scaling: 1 GPU processes the global batch of 2 as two micro-batches and one
  // optimizer step: 12.056 ms; T1 / (N TN) = 12.056 / (2 * 6.120).
  EXPECT_NEAR(r.strong_scaling_efficiency, 12.056 / 12.240, 1e-9);
  EXPECT_NEAR(r.throughput_samples_per_s, 2 / 6.120e-3, 1e-6);
  // Iteration 1: one 8 MB bucket after the whole backward: 6.016 + 0.08 + 0.016 (copy back)
  // + 0.056 ms.
  EXPECT_NEAR(r.first_step_time_s, 6.168e-3, 1e-12);
  // Memory: params 8 MB, grads 8 MB, Adam m and v 16 MB, DDP bucket copy of the grads 8 MB.
  EXPECT_DOUBLE_EQ(r.memory.params_bytes, 8e6);
  EXPECT_DOUBLE_EQ(r.memory.grads_bytes, 8e6);
  EXPECT_DOUBLE_EQ(r.memory.optimizer_bytes, 16e6);
  EXPECT_DOUBLE_EQ(r.memory.buffer_bytes, 8e6);
  EXPECT_TRUE(r.fits_in_memory);
}

// What users compare against, on TwoGpuStepByHand's step (6.120 ms, 2 GPUs, batch 1 each):
// model FLOPs per GPU per step = (1e9 forward + 2e9 backward) x 2 layers = 6e9; TFLOP/s per GPU
// = 6e9 / 6.120e-3 / 1e12 = 0.98039; MFU against the 1 TFLOP/s fp32 peak the same 0.98039;
// no checkpointing, so HFU = MFU; one "token" per sample: 2 / 6.120e-3 / 2 = 163.40 per GPU.
TEST(AnalyticTest, UtilisationAndTokensByHand) {
  const Predictor p(two_layers(), round_machine());
  const Prediction r = p.predict({2, 8}, fp32_adam(), {});
  EXPECT_DOUBLE_EQ(r.model_flops_per_step, 6e9);
  EXPECT_DOUBLE_EQ(r.hardware_flops_per_step, 6e9);
  EXPECT_DOUBLE_EQ(r.peak_flops_per_gpu, 1e12);
  EXPECT_NEAR(model_tflops_per_gpu(r), 6e9 / 6.120e-3 / 1e12, 1e-9);
  EXPECT_NEAR(mfu(r), 6e9 / 6.120e-3 / 1e12, 1e-9);
  EXPECT_DOUBLE_EQ(hfu(r), mfu(r));
  EXPECT_NEAR(tokens_per_s_per_gpu(r), 1.0 / 6.120e-3, 1e-6);
}

// HFU adds what checkpointing recomputes: one more forward of every transformer block. A
// 2-layer GPT-2 (h 64, 4 heads, f 256, V 100, s 32) block's forward FLOPs per sample: QKV
// 2 s h 3h = 786,432; c_proj 2 s h h = 262,144; MLP 2 x 2 s h f = 2,097,152; attention core
// 4 s^2 h = 262,144; total 3,407,872. Two blocks, batch 2: 13,631,488 FLOPs on top.
TEST(AnalyticTest, HardwareFlopsCountTheRecomputation) {
  const nlohmann::json config = {{"model_type", "gpt2"}, {"n_embd", 64},      {"n_layer", 2},
                                 {"n_head", 4},          {"vocab_size", 100}, {"n_positions", 32}};
  const auto w = std::make_shared<const model::Workload>(
      model::build_hf_transformer(config, "tiny.json", std::int64_t{32}));
  model::TrainingConfig t = fp32_adam();
  t.per_gpu_batch = 2;
  t.activation_checkpointing = {model::CheckpointMode::kFull};
  const Prediction r = Predictor(w, round_machine()).predict({1, 8}, t, {});
  EXPECT_DOUBLE_EQ(r.hardware_flops_per_step - r.model_flops_per_step, 13'631'488.0);
  EXPECT_EQ(r.tokens_per_sample, 32);
  EXPECT_GT(hfu(r), mfu(r));
}

// Autocast casts each GEMM weight to 16 bits in every forward (read 4, write 2) and its
// gradient back to fp32 in the backward (read 2, write 4): one nn.Linear(1000, 1000) has a
// 1e6-element weight, 6e6 bytes each way at 1 TB/s = 6 us per micro-batch in the forward and
// 6 us in the backward over pure bf16 training (same GEMMs, no casts); the bias is 1-D and the
// bf16 run's activations are the amp run's, so nothing else differs.
TEST(AnalyticTest, AutocastWeightCastsCostTime) {
  model::MlpOptions o;
  o.widths = {1000, 1000};
  o.activation = "none";
  const auto w = std::make_shared<const model::Workload>(model::build_mlp(o));
  const Predictor p(w, round_machine());
  model::TrainingConfig amp = fp32_adam(2);
  amp.precision = model::Precision::kAmpBf16;
  model::TrainingConfig pure = amp;
  pure.precision = model::Precision::kBf16;
  const Prediction a = p.predict({1, 8}, amp, {});
  const Prediction b = p.predict({1, 8}, pure, {});
  EXPECT_NEAR(a.forward_time_s - b.forward_time_s, 2 * 6e-6, 1e-15);  // two micro-batches
  EXPECT_NEAR(a.backward_time_s - b.backward_time_s, 2 * 6e-6, 1e-15);
}

// find_unused_parameters without static_graph: DDP never rebuilds its buckets, so iteration 1
// already runs the cap-sized buckets of every later step (here the two 4 MB buckets of
// TwoGpuStepByHand, walked in parameters() order and handed over reversed: the same {l1}, {l0}).
TEST(AnalyticTest, FindUnusedParametersKeepsItsInitialBucketsFromIterationOne) {
  const Predictor p(two_layers(), round_machine());
  model::ParallelismConfig par;
  par.find_unused_parameters = true;
  const Prediction r = p.predict({2, 8}, fp32_adam(), par);
  EXPECT_DOUBLE_EQ(r.first_step_time_s, r.step_time_s);
  par.static_graph = true;  // static_graph rebuilds: iteration 1 is one bucket again
  EXPECT_NEAR(p.predict({2, 8}, fp32_adam(), par).first_step_time_s, 6.168e-3, 1e-12);
}

TEST(AnalyticTest, InterferenceSlowsTheBackwardWhileACollectiveIsInFlight) {
  // TwoGpuStepByHand with compute 1.5x slower while a collective runs (interfered_s). l1's
  // backward runs alone (2..4 ms), its copy to 4.008 ms; bucket 0's all-reduce is in flight
  // 4.008..4.048 ms, so l0's 2 ms of work do 40/1.5 = 26.667 us in the first 40 us and the
  // remaining 1973.333 us at full rate: l0 ends at 6.021333 ms, its copy at 6.029333 ms.
  // Bucket 1: 6.029333..6.069333 ms; copies back: bucket 0 6.029333..6.037333, bucket 1
  // 6.069333..6.077333 ms; + 56 us optimizer = 6.133333 ms. The backward grows by 13.333 us;
  // the exposed time stays 6.077333 - 6.029333 - 0.016 = 32 us.
  Predictor p(two_layers(), round_machine());
  p.set_interference(1.5);
  const Prediction r = p.predict({2, 8}, fp32_adam(), {});
  ASSERT_EQ(r.buckets.size(), 2u);
  EXPECT_NEAR(r.buckets[0].end_s, 4.048e-3, 1e-12);
  EXPECT_NEAR(r.buckets[1].start_s, 6.029333333e-3, 1e-12);
  EXPECT_NEAR(r.backward_time_s, 4.045333333e-3, 1e-12);
  EXPECT_NEAR(r.exposed_comm_s, 32e-6, 1e-12);
  EXPECT_NEAR(r.step_time_s, 6.133333333e-3, 1e-12);
  EXPECT_NEAR(r.forward_time_s + r.backward_time_s + r.exposed_comm_s + r.optimizer_time_s,
              r.step_time_s, 1e-12);
  // The event engine applies the same rule to the same plan.
  EventOptions eo;
  eo.steps = 3;
  const StepPlan plan = p.plan({2, 8}, fp32_adam(), {});
  ASSERT_EQ(plan.interference, 1.5);  // the one source both engines read
  const EventResult e = simulate_event(plan, eo);
  EXPECT_NEAR(e.mean_step_time_s, 6.133333333e-3, 2e-9);  // integer nanoseconds
  // Without overlap nothing runs beside a collective: TwoGpu's 6.160 ms.
  model::ParallelismConfig par;
  par.overlap = false;
  EXPECT_NEAR(p.predict({2, 8}, fp32_adam(), par).step_time_s, 6.160e-3, 1e-12);
}

TEST(AnalyticTest, InterferedTimeByHand) {
  // 1 ms of work, factor 2: inside a 4 ms busy window it takes 2 ms; with 1 ms busy, 0.5 ms of
  // work in the first 1 ms and the other 0.5 ms at full rate = 1.5 ms; never busy: 1 ms.
  EXPECT_DOUBLE_EQ(interfered_s(1e-3, 4e-3, 2.0), 2e-3);
  EXPECT_DOUBLE_EQ(interfered_s(1e-3, 1e-3, 2.0), 1.5e-3);
  EXPECT_DOUBLE_EQ(interfered_s(1e-3, 0.0, 2.0), 1e-3);
  EXPECT_DOUBLE_EQ(interfered_s(1e-3, 4e-3, 1.0), 1e-3);
}

TEST(AnalyticTest, NoOverlapLaunchesAfterBackward) {
  // Both buckets start at the end of the backward, 6.016 ms (copies in included): they end at
  // 6.056 and 6.096 ms; copies back 6.056..6.064 and 6.096..6.104; + 56 us optimizer.
  const Predictor p(two_layers(), round_machine());
  model::ParallelismConfig par;
  par.overlap = false;
  const Prediction r = p.predict({2, 8}, fp32_adam(), par);
  EXPECT_NEAR(r.step_time_s, 6.160e-3, 1e-12);
  EXPECT_NEAR(r.exposed_comm_s, 72e-6, 1e-12);  // 6.104 - 6.016 - 0.016
}

TEST(AnalyticTest, GradientAsBucketViewSkipsTheCopyBack) {
  // gradient_as_bucket_view: the gradients are views into the buckets. No copy back; instead of
  // the copy in, the in-place division by N (the same 8 us per layer). Bucket 0 ends at 4.048,
  // bucket 1 at 6.056 ms; step = 6.056 + 0.056 ms.
  const Predictor p(two_layers(), round_machine());
  model::ParallelismConfig par;
  par.gradient_as_bucket_view = true;
  const Prediction r = p.predict({2, 8}, fp32_adam(), par);
  EXPECT_NEAR(r.step_time_s, 6.112e-3, 1e-12);
  EXPECT_NEAR(r.grad_copy_time_s, 16e-6, 1e-12);
  EXPECT_NEAR(r.exposed_comm_s, 40e-6, 1e-12);
}

TEST(AnalyticTest, GradientAccumulationSyncsOnce) {
  // k = 2: one silent micro-batch (6 ms, no Reducer: no copies), then forward (2 ms) and the
  // synced backward: buckets ready at 10.008 and 12.016 ms, the last ends at 12.056 ms, its
  // copy back at 12.064 ms; step = 12.120 ms. Global batch 2*1*2 = 4.
  const Predictor p(two_layers(), round_machine());
  const Prediction r = p.predict({2, 8}, fp32_adam(2), {});
  EXPECT_NEAR(r.step_time_s, 12.120e-3, 1e-12);
  EXPECT_EQ(r.global_batch, 4);
  EXPECT_NEAR(r.comm_time_s, 80e-6, 1e-12);
}

TEST(AnalyticTest, OneGpuHasNoCommunication) {
  const Predictor p(two_layers(), round_machine());
  const Prediction r = p.predict({1, 8}, fp32_adam(), {});
  EXPECT_EQ(r.comm_time_s, 0.0);
  EXPECT_EQ(r.exposed_comm_s, 0.0);
  EXPECT_NEAR(r.step_time_s, 6.056e-3, 1e-12);
  EXPECT_DOUBLE_EQ(r.weak_scaling_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(r.strong_scaling_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(r.memory.buffer_bytes, 0.0);  // no Reducer on one process
}

TEST(AnalyticTest, Fp16HookHalvesTheWireAndAddsCasts) {
  // fp16_compress_hook: 2e6 bytes per bucket on the wire (20 us), plus its passes (cast down
  // 4+2, div_ 2+2, copy_ back 2+4 bytes per element): 16 bytes x 1e6 / 1e12 = 16 us per bucket.
  const Predictor p(two_layers(), round_machine());
  model::ParallelismConfig par;
  par.comm_hook.kind = model::CommHook::Kind::kFp16;
  const Prediction r = p.predict({2, 8}, fp32_adam(), par);
  EXPECT_EQ(r.buckets[0].bytes, 2000000);
  EXPECT_EQ(r.buckets[0].grad_bytes, 4000000);
  EXPECT_NEAR(r.comm_time_s, 2 * (20e-6 + 16e-6), 1e-12);
}

TEST(AnalyticTest, SeedExampleTenBillionParameters) {
  // 10B parameters in 100 tensors of 1e8, bf16 gradients (2e10 bytes), 64 GPUs one per node on
  // 400 Gb/s: the single first-iteration bucket takes 2*63/64 * 2e10 / 5e10 = 0.7875 s.
  std::vector<model::LumpLayer> layers;
  for (int i = 0; i < 100; ++i) layers.push_back({"l" + std::to_string(i), 100000000, 1e6, 0});
  auto w = std::make_shared<const model::Workload>(model::build_from_layers(layers));
  model::HardwareSpec hw = round_machine();
  hw.gpus_per_node = 1;
  hw.inter_node = {"ndr", 50e9, 0};
  hw.nics_per_node = 1;
  hw.pcie = {"pcie", 64e9, 0};
  const Predictor p(w, hw);
  model::TrainingConfig t = fp32_adam();
  t.precision = model::Precision::kBf16;
  const Prediction r = p.predict({64, 1}, t, {});
  EXPECT_DOUBLE_EQ(r.grad_bytes_total, 2e10);
  const double bwd_end = r.forward_time_s + r.backward_time_s;
  EXPECT_NEAR(r.first_step_time_s - bwd_end - r.optimizer_time_s, 0.7875, 1e-9);
  // Steady state: 100 buckets of 2e8 bytes, the same bytes in total.
  EXPECT_EQ(r.buckets.size(), 100u);
  EXPECT_NEAR(r.comm_time_s, 0.7875, 1e-9);
}

TEST(AnalyticTest, OverlapIsNeverSlowerAndBandwidthHelps) {
  const Predictor p(two_layers(), round_machine());
  model::ParallelismConfig on, off;
  off.overlap = false;
  for (int gpus : {2, 4, 8, 16, 64}) {
    EXPECT_LE(p.predict({gpus, 8}, fp32_adam(), on).step_time_s,
              p.predict({gpus, 8}, fp32_adam(), off).step_time_s);
  }
  model::HardwareSpec fast = round_machine();
  fast.inter_node.bandwidth *= 4;
  const Predictor pf(two_layers(), fast);
  EXPECT_LE(pf.predict({64, 8}, fp32_adam(), off).step_time_s,
            p.predict({64, 8}, fp32_adam(), off).step_time_s);
}

TEST(AnalyticTest, MeasuredStepIsSplitByFlops) {
  // single_gpu_step_s = 10.056 ms: 10 ms of forward+backward after the 56 us optimizer, split
  // by FLOPs (1:2 forward:backward): forward 10/3 ms, backward 20/3 ms.
  const Predictor p(two_layers(), round_machine());
  model::TrainingConfig t = fp32_adam();
  t.single_gpu_step_s = 10.056e-3;
  const Prediction r = p.predict({1, 8}, t, {});
  EXPECT_NEAR(r.forward_time_s, 10e-3 / 3, 1e-12);
  EXPECT_NEAR(r.backward_time_s, 20e-3 / 3, 1e-12);
  EXPECT_NEAR(r.step_time_s, 10.056e-3, 1e-12);
}

TEST(AnalyticTest, JitterSlowsTheSynchronousStep) {
  // cv 0.1 on 8 GPUs: compute scales by 1 + 0.1 * 1.4236 on average; the Reducer's copies are
  // memory-bound kernels, not jittered.
  const Predictor p(two_layers(), round_machine());
  const Prediction base = p.predict({8, 8}, fp32_adam(), {});
  const Prediction j = p.predict({8, 8}, fp32_adam(), {}, std::nullopt, 0.1);
  EXPECT_NEAR(j.grad_copy_time_s, base.grad_copy_time_s, 1e-15);
  EXPECT_NEAR(
      j.backward_time_s - j.grad_copy_time_s,
      (base.backward_time_s - base.grad_copy_time_s) * (1 + 0.1 * expected_max_std_normal(8)),
      1e-9);
  ASSERT_TRUE(j.p50_step_time_s && j.p99_step_time_s);
  EXPECT_LT(*j.p50_step_time_s, *j.p99_step_time_s);
  EXPECT_GT(*j.p50_step_time_s, base.step_time_s);
}

TEST(AnalyticTest, LearningRateAndTimeToTrain) {
  // Linear scaling (Goyal et al.): base 0.1 at 128, global batch 64 GPUs x 4 = 256 -> 0.2.
  const Predictor p(two_layers(), round_machine());
  model::TrainingConfig t = fp32_adam();
  t.per_gpu_batch = 4;
  t.lr = model::LrConfig{0.1, 128, model::LrScaling::kLinear, 0};
  t.critical_batch = model::CriticalBatchTarget{256, 1000};
  const Prediction r = p.predict({64, 8}, t, {}, 2.0);
  EXPECT_NEAR(*r.lr, 0.2, 1e-12);  // 256 / 128 * 0.1
  // S = S_min (1 + B_noise / B) = 1000 * (1 + 256/256) = 2000 steps.
  EXPECT_NEAR(*r.steps_to_target, 2000, 1e-9);
  EXPECT_NEAR(*r.time_to_train_s, 2000 * r.step_time_s, 1e-9);
  EXPECT_NEAR(*r.gpu_hours, *r.time_to_train_s * 64 / 3600, 1e-9);
  EXPECT_NEAR(*r.cost_usd, *r.gpu_hours * 2.0, 1e-9);
  t.lr->scaling = model::LrScaling::kSqrt;
  EXPECT_NEAR(*p.predict({64, 8}, t, {}).lr, 0.1 * std::sqrt(2.0), 1e-12);
}

TEST(AnalyticTest, OptimizerImplementationsByHand) {
  // Two layers of 1e6 fp32 parameters on one round GPU (1 TB/s): the optimizer step moves, per
  // parameter, 28 bytes fused (read param, grad, m, v; write param, m, v), 72 bytes as PyTorch's
  // foreach Adam (adam.py _multi_tensor_adam: lerp 12, mul 8, addcmul 12, sqrt 8, div 8, add 8,
  // addcdiv 16), 80 as foreach AdamW (+ the parameter decay pass), the same as a for-loop.
  const Predictor p(two_layers(), round_machine());
  model::TrainingConfig t = fp32_adam();
  auto opt = [&](model::OptimizerImpl impl, model::Optimizer o, model::Strategy s) {
    t.optimizer_impl = impl;
    t.optimizer = o;
    model::ParallelismConfig par;
    par.strategy = s;
    return p.predict({1, 8}, t, par).optimizer_time_s;
  };
  using model::Optimizer;
  using model::OptimizerImpl;
  using model::Strategy;
  EXPECT_NEAR(opt(OptimizerImpl::kFused, Optimizer::kAdam, Strategy::kDdp), 56e-6, 1e-15);
  EXPECT_NEAR(opt(OptimizerImpl::kForeach, Optimizer::kAdam, Strategy::kDdp), 144e-6, 1e-15);
  EXPECT_NEAR(opt(OptimizerImpl::kForLoop, Optimizer::kAdam, Strategy::kDdp), 144e-6, 1e-15);
  EXPECT_NEAR(opt(OptimizerImpl::kForeach, Optimizer::kAdamW, Strategy::kDdp), 160e-6, 1e-15);
  EXPECT_NEAR(opt(OptimizerImpl::kForeach, Optimizer::kMomentum, Strategy::kDdp), 64e-6, 1e-15);
  // Left out, the library decides: PyTorch's foreach under ddp, DeepSpeed's FusedAdam under
  // ZeRO (on one GPU ZeRO steps every parameter, as ddp), foreach SGD under ZeRO too.
  t.optimizer_impl_defaulted = true;
  EXPECT_NEAR(opt(OptimizerImpl::kFused, Optimizer::kAdam, Strategy::kDdp), 144e-6, 1e-15);
  EXPECT_NEAR(opt(OptimizerImpl::kFused, Optimizer::kAdam, Strategy::kZero2), 56e-6, 1e-15);
  EXPECT_NEAR(opt(OptimizerImpl::kFused, Optimizer::kMomentum, Strategy::kZero2), 64e-6, 1e-15);
  // bf16 with fp32 master weights: fused 2 + 4 + 4 (param) + 2 (grad) + 16 (m, v) = 28 bytes;
  // foreach casts the gradients up and the master down around its 72: 84 bytes.
  t.precision = model::Precision::kBf16;
  t.optimizer_impl_defaulted = false;
  EXPECT_NEAR(opt(OptimizerImpl::kFused, Optimizer::kAdam, Strategy::kDdp), 56e-6, 1e-15);
  EXPECT_NEAR(opt(OptimizerImpl::kForeach, Optimizer::kAdam, Strategy::kDdp), 168e-6, 1e-15);
}

}  // namespace
}  // namespace ddpsim::sim
