// contention.hpp: link contention for the event engine (simulation.network = "flow").
//
// The closed form (collective.hpp) assumes a collective has the network to itself. With
// simulation.network "flow" the event engine instead times every gradient/parameter collective
// by running it as flows on the cluster graph (simulator/collectives/network_flow.hpp: max-min fair
// sharing, a fluid simulation, rings expanded into their 2(n-1) / (n-1) steps per member) TOGETHER
// with the traffic it competes with, and scales the closed-form time by what the flows measure:
//
//   slowdown = T_flows(collective + competing traffic) / T_flows(collective alone)
//   duration = collective_s x slowdown + overhead_s
//
// so with nothing competing the slowdown is exactly 1 and every result equals the closed form
// (the expanded ring equals the formula to 1e-9 anyway; the ratio also keeps the tree / NVLS /
// profile-measured times of the plan as the base). Competing traffic, both on the links of the
// data-centre network only (NIC <-> leaf <-> spine, LinkGraph::network_link), since other jobs
// run on other GPUs and do not cross this job's NVLink or PCIe:
//  - concurrent_jobs - 1 other jobs of the same shape that run the same collective at the same
//    moment (the worst case of a shared cluster: identical jobs in lockstep), on other GPUs of
//    the same nodes: each is a copy of the collective's flows that shares the network links and
//    has private copies of every other link (its own NVLink, PCIe), so its intra-node phases
//    take as long as ours and only the network phases contend. Two NIC-bound rings on one NIC:
//    the bandwidth term doubles (network_flow_test, contention_test).
//  - background_traffic f in [0, 1): on every network link (each direction) a flow that wants f
//    of the link's capacity for ever (a virtual link of capacity f x C in its path caps it);
//    max-min gives it min(f C, fair share). One ring flow on a NIC with f = 0.5: the ring gets
//    C/2 (x2 on that link's transfers); f = 0.25: 3C/4 (x4/3).
// An oversubscribed spine (hardware.network.oversubscription) is part of the graph: the closed
// form already divides the leaf uplinks by it, and competing traffic on the uplinks is slowed
// accordingly (a 2:1 spine is already the bottleneck, so background traffic that fits in the
// NICs' spare capacity slows only the cross-spine phase).
// Which flows stand for which collective: all-reduce with the hierarchical algorithm (several
// nodes) -> hierarchical_allreduce_flows; every other all-reduce, reduce-scatter, all-gather and
// DeepSpeed's per-owner reduce (same bytes as a reduce-scatter) -> the ring form (tree and NVLS
// are slowed by the ratio their ring form gets: an approximation, they cross the same NICs).
// A collective of a sharded plan over a smaller group (fsdp_hybrid's node-local shards) is
// costed on a cluster of shard_group GPUs. Slowdowns are cached per (kind, bytes, algorithm,
// group). The job's own collectives still run one after another on one communication stream
// (event/simulate.hpp), so they never contend with each other.
//
//   ContentionModel cm(hw, 64, {.background_traffic = 0.5, .concurrent_jobs = 1});
//   double s = cm.slowdown(model::CollectiveOp::kAllReduce, 100e6,
//   model::CollectiveAlgorithm::kRing, 64); StepPlan slowed = apply_contention(plan, cm);   //
//   collective_s scaled, contention_slowdown set
#pragma once

#include <map>
#include <memory>
#include <tuple>

#include "model/hardware/hardware.hpp"
#include "simulator/analytic/step_plan.hpp"

namespace ddpsim::sim {

struct ContentionOptions {
  double background_traffic = 0;  ///< [0, 1): share of each network link other traffic wants
  int concurrent_jobs = 1;        ///< >= 1: this job plus identical jobs in lockstep
};

class ContentionModel {
 public:
  /// `gpus`: the job's ranks (>= 1). Preconditions (DDPSIM_ASSERT): 0 <= background < 1,
  /// concurrent_jobs >= 1.
  ContentionModel(const model::HardwareSpec& hw, int gpus, ContentionOptions o);
  ~ContentionModel();

  /// T(with competing traffic) / T(alone) >= 1 for collective `kind` of nccl-tests size `bytes`
  /// run by `algorithm` over `group` ranks (<= gpus). 1 for one rank or no bytes.
  double slowdown(model::CollectiveOp kind, double bytes, model::CollectiveAlgorithm algorithm,
                  int group);

  const ContentionOptions& options() const { return o_; }
  /// Flow simulations run so far (distinct collectives; a cache hit runs none).
  int simulations() const { return simulations_; }

 private:
  const model::HardwareSpec& hw_;
  int gpus_;
  ContentionOptions o_;
  std::map<std::tuple<int, double, int, int>, double> cache_;
  int simulations_ = 0;
};

/// `plan` with every bucket's / scheduled collective's collective_s (and the first iteration's
/// all-reduce) multiplied by its slowdown and BucketTiming::contention_slowdown set on each;
/// `summary` (optional; ContentionSummary is in prediction.hpp, where Prediction carries it)
/// receives the totals. Buffer broadcasts and the local_used_map
/// all-reduce (a few bytes) keep their closed-form time.
StepPlan apply_contention(const StepPlan& plan, ContentionModel& cm,
                          ContentionSummary* summary = nullptr);

}  // namespace ddpsim::sim
