#include "simulator/event/contention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "model/error.hpp"
#include "model/hardware/cluster.hpp"
#include "simulator/collectives/link_graph.hpp"
#include "simulator/collectives/network_flow.hpp"

namespace ddpsim::sim {

namespace {

// Background flows never finish within a collective: 1e30 bytes at any link rate outlast it by
// many orders of magnitude.
constexpr double kForever = 1e30;
// Slowdowns within this of 1 are 1 (the two flow runs of an uncontended collective agree to the
// last bits, but a ratio of two sums need not be exactly 1).
constexpr double kUnity = 1e-12;

model::CollectiveOp ring_form(model::CollectiveOp k) {
  switch (k) {
    case model::CollectiveOp::kAllReduce:
      return model::CollectiveOp::kAllReduce;
    case model::CollectiveOp::kAllGather:
      return model::CollectiveOp::kAllGather;
    case model::CollectiveOp::kReduceScatter:
    case model::CollectiveOp::kReduce:
      return model::CollectiveOp::kReduceScatter;
    case model::CollectiveOp::kBroadcast:
      return model::CollectiveOp::kBroadcast;
  }
  return model::CollectiveOp::kAllReduce;
}

// The collective's flows as an identical job on other GPUs of the same nodes runs them: the
// data-centre network's links are shared, every other link (its own NVLink, PCIe) is the
// job's private copy, links [offset, offset + links) of the extended capacity vector.
CollectiveFlows other_job(const CollectiveFlows& c, const LinkGraph& g, int offset) {
  CollectiveFlows out = c;
  for (RingPhase& p : out.phases)
    for (RingRoute& r : p.rings)
      for (std::vector<int>& hop : r.hops)
        for (int& l : hop)
          if (!g.network_link(l)) l += offset;
  return out;
}

// When the collective `c` ends, started at 0 on `g` together with `copies` other jobs running it
// (other_job) and a background flow capped at `background` of every network link's capacity.
double run_flows(const LinkGraph& g, const CollectiveFlows& c, int copies, double background) {
  std::vector<double> cap = g.capacity_bytes_per_s();
  const std::size_t links = cap.size();
  std::vector<std::vector<int>> bg_paths;
  if (background > 0) {
    for (std::size_t l = 0; l < links; ++l) {
      if (!g.network_link(static_cast<int>(l))) continue;
      // A virtual link of capacity f x C caps the flow at f x C; max-min does the rest.
      bg_paths.push_back({static_cast<int>(l), static_cast<int>(cap.size())});
      cap.push_back(background * cap[l]);
    }
  }
  std::vector<CollectiveFlows> others;
  for (int i = 0; i < copies; ++i) {
    others.push_back(other_job(c, g, static_cast<int>(cap.size())));
    for (std::size_t l = 0; l < links; ++l) cap.push_back(cap[l]);
  }
  NetworkSim net(std::move(cap));
  for (auto& p : bg_paths) net.start_flow(std::move(p), kForever, 0.0);
  for (const CollectiveFlows& o : others) net.start(o, 0.0, [](double) {});
  double end = -1;
  net.start(c, 0.0, [&end](double t) { end = t; });
  while (end < 0) {
    const double next = net.next_event_s();
    DDPSIM_ASSERT(next < std::numeric_limits<double>::infinity(), "contention: flows stalled");
    net.run_until(next);
  }
  return end;
}

}  // namespace

ContentionModel::ContentionModel(const model::HardwareSpec& hw, int gpus, ContentionOptions o)
    : hw_(hw), gpus_(gpus), o_(o) {
  DDPSIM_ASSERT(gpus >= 1, "contention: at least one rank");
  DDPSIM_ASSERT(o.background_traffic >= 0 && o.background_traffic < 1,
                "contention: background traffic outside [0, 1)");
  DDPSIM_ASSERT(o.concurrent_jobs >= 1, "contention: at least one job");
}

ContentionModel::~ContentionModel() = default;

double ContentionModel::slowdown(model::CollectiveOp kind, double bytes,
                                 model::CollectiveAlgorithm algorithm, int group) {
  group = std::clamp(group, 1, gpus_);
  if (group <= 1 || bytes <= 0) return 1.0;
  if (o_.background_traffic <= 0 && o_.concurrent_jobs <= 1) return 1.0;
  // NVLS_TREE's flows are the hierarchical form's: inside the node, then across on the rails.
  const bool hierarchical = kind == model::CollectiveOp::kAllReduce &&
                            (algorithm == model::CollectiveAlgorithm::kHierarchical ||
                             algorithm == model::CollectiveAlgorithm::kNvlsTree);
  const auto key = std::make_tuple(static_cast<int>(kind), bytes, hierarchical ? 1 : 0, group);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  ++simulations_;
  const model::Topology topo(hw_, group);
  const LinkGraph g(topo, hw_);
  const CollectiveFlows c =
      hierarchical && topo.nodes() > 1
          ? hierarchical_allreduce_flows(g, bytes, topo.bandwidths(), hw_)
          : ring_collective_flows(g, ring_form(kind), bytes, topo.bandwidths(), hw_);
  double s = 1.0;
  if (!c.phases.empty()) {
    const double alone = run_flows(g, c, 0, 0.0);
    const double with = run_flows(g, c, o_.concurrent_jobs - 1, o_.background_traffic);
    s = alone > 0 ? with / alone : 1.0;
    if (std::abs(s - 1.0) < kUnity) s = 1.0;
    DDPSIM_ASSERT(s >= 1.0 - 1e-9, "contention made a collective faster");
    s = std::max(s, 1.0);
  }
  cache_.emplace(key, s);
  return s;
}

StepPlan apply_contention(const StepPlan& plan, ContentionModel& cm, ContentionSummary* summary) {
  StepPlan out = plan;
  ContentionSummary sum;
  sum.background_traffic = cm.options().background_traffic;
  sum.concurrent_jobs = cm.options().concurrent_jobs;
  auto note = [&sum](double s, double collective_s, double overhead_s, double times) {
    ++sum.collectives;
    if (s > 1.001) ++sum.collectives_slowed;
    sum.max_slowdown = std::max(sum.max_slowdown, s);
    sum.comm_time_uncontended_s += times * (collective_s + overhead_s);
    sum.comm_time_s += times * (collective_s * s + overhead_s);
  };
  for (PlannedBucket& b : out.buckets) {
    const int calls = std::max(1, b.cost.calls);
    const double s = cm.slowdown(b.cost.kind, static_cast<double>(b.cost.bytes) / calls,
                                 b.cost.algorithm, plan.gpus);
    note(s, b.collective_s, b.overhead_s, 1.0);
    b.collective_s *= s;
    b.cost.contention_slowdown = s;
  }
  if (plan.first_iteration_allreduce_s > 0) {
    const double bytes = plan.grad_bytes_total * plan.wire_scale;
    const model::CollectiveAlgorithm a =
        plan.buckets.empty() ? model::CollectiveAlgorithm::kRing : plan.buckets[0].cost.algorithm;
    out.first_iteration_allreduce_s *=
        cm.slowdown(model::CollectiveOp::kAllReduce, bytes, a, plan.gpus);
  }
  const bool local_shards = plan.shard_group > 1 && plan.shard_group < plan.gpus;
  for (ScheduledCollective& c : out.schedule) {
    const int calls = std::max(1, c.cost.calls);
    // fsdp_hybrid: the sharded collectives run inside a shard group, the rest across all ranks.
    const int group = local_shards && c.cost.kind != model::CollectiveOp::kAllReduce
                          ? plan.shard_group
                          : plan.gpus;
    const double s = cm.slowdown(c.cost.kind, static_cast<double>(c.cost.bytes) / calls,
                                 c.cost.algorithm, group);
    const double times =
        c.scope == CommScope::kEveryMicroBatch ? static_cast<double>(plan.grad_accumulation) : 1.0;
    note(s, c.collective_s, c.overhead_s, times);
    c.collective_s *= s;
    c.cost.contention_slowdown = s;
  }
  if (summary != nullptr) *summary = sum;
  return out;
}

}  // namespace ddpsim::sim
