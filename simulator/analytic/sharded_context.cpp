#include "simulator/analytic/sharded_context.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ddpsim::sim {

void begin_sharded_plan(StepPlan& sp, model::Strategy strategy, int shard) {
  sp.strategy = strategy;
  sp.shard_group = shard;
  sp.optimizer_s /= shard;  // each rank steps its 1/shard of the parameters
  sp.buckets.clear();
  sp.warmup_buckets.clear();
  sp.buffer_broadcast_s = 0;
  sp.used_map_allreduce_s = 0;
  sp.first_iteration_allreduce_s = 0;
  sp.schedule.clear();
}

ScheduledCollective scheduled_collective(model::CollectiveOp kind, CommPhase phase, double bytes,
                                         const CollectiveCost& cc, CommScope scope, int gate,
                                         int block, std::string name) {
  ScheduledCollective c;
  c.cost.kind = kind;
  c.cost.phase = phase;
  c.cost.bytes = static_cast<std::int64_t>(std::llround(bytes));
  c.cost.algorithm = cc.algorithm;
  c.cost.protocol = cc.protocol;
  c.cost.channels = cc.channels;
  c.cost.busbw_gbytes_per_s = cc.busbw_gbytes_per_s;
  c.collective_s = cc.time_s;
  c.scope = scope;
  c.gate_op = gate;
  c.block_op = block;
  c.name = std::move(name);
  return c;
}

model::CollectiveBandwidths cross_node_rail_bandwidths(const model::CollectiveBandwidths& all,
                                                       int replicas) {
  model::CollectiveBandwidths cross = all;
  cross.gpus = replicas;
  cross.nodes = replicas;
  cross.gpus_per_node = 1;
  cross.channels = 1;
  cross.ring_bus = std::min(all.inter_node_per_gpu, all.ring_bus);
  cross.intra_node_bus = cross.ring_bus;
  cross.inter_node_per_gpu = cross.ring_bus;
  cross.nvls_bus = 0;
  return cross;
}

ParamCounts param_counts(const model::Workload& w) {
  ParamCounts c;
  c.layer_elements.assign(w.layers.size(), 0);
  c.layer_tensors.assign(w.layers.size(), 0);
  c.tensor_elements.reserve(w.tensors.size());
  for (const model::ParamTensor& t : w.tensors) {
    c.tensor_elements.push_back(t.numel());
    if (t.tied_to >= 0) continue;
    c.layer_elements[static_cast<std::size_t>(t.layer)] += c.tensor_elements.back();
    ++c.layer_tensors[static_cast<std::size_t>(t.layer)];
    c.total += c.tensor_elements.back();
  }
  return c;
}

}  // namespace ddpsim::sim
