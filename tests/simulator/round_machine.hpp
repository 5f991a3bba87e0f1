// round_machine.hpp: the test machine of the simulator tests. 1 TFLOP/s fp32 (2 TFLOP/s bf16)
// at efficiency 1, 1 TB/s HBM at efficiency 1, 100 GB/s switched NVLink, eight 12.5 GB/s NICs
// per node, latency 0 and collective efficiency 1 everywhere: every time in the tests is a ratio
// of round numbers that a comment can derive by hand.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/builders/builders.hpp"
#include "model/hardware/hardware.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/analytic/sharded.hpp"
#include "simulator/analytic/step_plan.hpp"

namespace ddpsim::sim::fixtures {

inline model::HardwareSpec round_machine() {
  using model::DType;
  model::HardwareSpec hw;
  hw.name = "round";
  hw.gpu.name = "round-gpu";
  hw.gpu.peak_flops[DType::kFp32] = 1e12;
  hw.gpu.efficiency[DType::kFp32] = 1.0;
  hw.gpu.peak_flops[DType::kBf16] = 2e12;
  hw.gpu.efficiency[DType::kBf16] = 1.0;
  hw.gpu.memory_bytes = 80e9;
  hw.gpu.memory_bandwidth = 1e12;
  hw.gpu.memory_efficiency = 1.0;
  hw.gpus_per_node = 8;
  hw.intra_node = {"fabric", 100e9, 0};
  hw.intra_node_switched = true;
  hw.pcie = {"pcie", 100e9, 0};
  hw.inter_node = {"nic", 12.5e9, 0};
  hw.nics_per_node = 8;
  hw.intra_tuning = {1.0, 1.0, 0.0, 0.0};
  hw.inter_tuning = {1.0, 1.0, 0.0, 0.0};
  hw.collective_model = model::CollectiveModel::kAlphaBeta;  // the hand-computed line
  return hw;
}

/// Two layers of 1e6 fp32 parameters (4 MB each) and 1e9 forward FLOPs per sample.
inline std::shared_ptr<const model::Workload> two_layers() {
  return std::make_shared<const model::Workload>(
      model::build_from_layers({{"l0", 1000000, 1e9, 0}, {"l1", 1000000, 1e9, 0}}));
}

/// `n` layers "l0".."l<n-1>" of 1e6 fp32 parameters (4 MB, one tensor each) and 1e9 forward FLOPs
/// per sample: 1 ms forward and 2 ms backward per layer on the round machine.
inline std::shared_ptr<const model::Workload> lump_layers(int n) {
  std::vector<model::LumpLayer> ls;
  for (int i = 0; i < n; ++i) ls.push_back({"l" + std::to_string(i), 1000000, 1e9, 0});
  return std::make_shared<const model::Workload>(model::build_from_layers(ls));
}

/// Bytes each rank sends in one step: nccl-tests' bus factor times each collective's size.
inline double per_rank_traffic(const Prediction& p, int ranks) {
  double sum = 0;
  for (const BucketTiming& b : p.buckets) {
    sum += per_rank_traffic_bytes(b.kind, static_cast<double>(b.bytes), ranks);
  }
  return sum;
}

/// A hybrid / HSDP step's traffic per rank: the shard group's all-gathers and reduce-scatters over
/// `shard` ranks, the replicas' all-reduces over `replicas` ranks, and those all-reduces' sizes.
struct SplitTraffic {
  double shard_group = 0;
  double replicas = 0;
  double all_reduce_bytes = 0;
};
inline SplitTraffic split_traffic(const Prediction& p, int shard, int replicas) {
  SplitTraffic t;
  for (const BucketTiming& b : p.buckets) {
    const auto bytes = static_cast<double>(b.bytes);
    if (b.kind == model::CollectiveOp::kAllReduce) {
      t.replicas += per_rank_traffic_bytes(b.kind, bytes, replicas);
      t.all_reduce_bytes += bytes;
    } else {
      t.shard_group += per_rank_traffic_bytes(b.kind, bytes, shard);
    }
  }
  return t;
}

/// One sample per GPU, k micro-batches, fp32 with Adam as one fused kernel (28 bytes per
/// parameter: the hand-computed steps of the tests count that; foreach is tested on its own).
inline model::TrainingConfig fp32_adam(int k = 1) {
  model::TrainingConfig t;
  t.per_gpu_batch = 1;
  t.grad_accumulation = k;
  t.precision = model::Precision::kFp32;
  t.optimizer = model::Optimizer::kAdam;
  t.optimizer_impl = model::OptimizerImpl::kFused;
  t.optimizer_impl_defaulted = false;
  return t;
}

/// A hand-made DDP plan on `gpus` ranks: one layer per entry of `fwd_s` / `bwd_s`, one bucket of
/// `bucket_s` seconds (1000 bytes) ready after layer `ready_layer`'s backward, no optimizer.
inline StepPlan one_bucket_plan(int gpus, std::vector<double> fwd_s, std::vector<double> bwd_s,
                                double bucket_s, int ready_layer) {
  StepPlan plan;
  plan.gpus = gpus;
  plan.layer_fwd_s = std::move(fwd_s);
  plan.layer_bwd_s = std::move(bwd_s);
  PlannedBucket b;
  b.cost.bytes = 1000;
  b.collective_s = bucket_s;
  b.ready_layer = ready_layer;
  plan.buckets = {b};
  return plan;
}

}  // namespace ddpsim::sim::fixtures
