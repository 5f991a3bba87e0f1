// sharded_context.hpp: what every sharded schedule (sharded.hpp: ZeRO and FSDP1;
// fsdp2_schedule.hpp: FSDP2) is planned from and built of: the context the Predictor gives it,
// the plan readied for a schedule, one entry of the schedule with its cost, and the bandwidths
// of a replica group across nodes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hardware/cluster.hpp"
#include "model/hardware/hardware.hpp"
#include "model/scenario/scenario.hpp"
#include "model/workload/workload.hpp"
#include "simulator/analytic/step_plan.hpp"
#include "simulator/collectives/collective.hpp"

namespace ddpsim::sim {

/// What plan_sharded needs besides the StepPlan it fills (layer times, optimizer_s and
/// bandwidths already set by Predictor::plan).
/// Each parameter tensor's elements and their sums per layer (tied tensors once): what every
/// sharded plan reads. numel() walks a tensor's shape with overflow checks; a Predictor counts
/// once per workload instead of once per prediction (ShardedContext::counts).
struct ParamCounts {
  std::vector<std::int64_t> tensor_elements;  ///< numel() of every tensor, tied ones included
  std::vector<std::int64_t> layer_elements;   ///< per layer, tied tensors left out
  std::vector<int> layer_tensors;             ///< per layer, tied tensors left out
  std::int64_t total = 0;                     ///< every untied tensor's elements
};
ParamCounts param_counts(const model::Workload& w);

struct ShardedContext {
  const model::Workload* workload = nullptr;
  /// param_counts(*workload), computed by the caller once (nullptr: counted per plan).
  const ParamCounts* counts = nullptr;
  const model::HardwareSpec* hardware = nullptr;
  model::ClusterConfig cluster;
  model::TrainingConfig training;
  model::ParallelismConfig parallelism;
  /// Bandwidths of the shard group: all GPUs, or one node's gpus_per_node GPUs for fsdp_hybrid.
  model::CollectiveBandwidths group_bandwidths;
  /// fsdp2 only: HSDP's replicate group (cross_node_rail_bandwidths across nodes, or the GPUs of
  /// one node) and the post-forward group of an integer reshard_after_forward.
  model::CollectiveBandwidths replicate_bandwidths;
  model::CollectiveBandwidths post_forward_bandwidths;
  double memory_bytes_per_s = 1e12;  ///< HBM x efficiency (cast kernels)
  std::string file;                  ///< names the scenario in errors
};

/// Readies `sp` for a sharded schedule: its strategy and shard group, the optimizer on the 1/shard
/// of the parameters each rank steps, and none of DDP's buckets, broadcasts or first-iteration
/// costs.
void begin_sharded_plan(StepPlan& sp, model::Strategy strategy, int shard);

/// One schedule entry with its collective's cost (`cc`) filled in.
ScheduledCollective scheduled_collective(model::CollectiveOp kind, CommPhase phase, double bytes,
                                         const CollectiveCost& cc, CommScope scope, int gate,
                                         int block, std::string name);

/// The replica group of a hybrid / HSDP mesh across nodes: `replicas` ranks, one per node on the
/// same rail, each GPU's own NIC, no faster than a flat ring over every GPU gets across the
/// network (`all`: the bandwidths of the whole cluster).
model::CollectiveBandwidths cross_node_rail_bandwidths(const model::CollectiveBandwidths& all,
                                                       int replicas);

}  // namespace ddpsim::sim
