// network_flow.hpp: link contention on the cluster graph (a fluid flow model).
//
// Three layers, each usable alone:
//  1. max_min_rates: the max-min fair share of link bandwidth among flows, each a path of links,
//     by progressive filling (water-filling): every unfrozen flow's rate rises together until a
//     link is full; the flows crossing it freeze at that level; repeat with the rest. Exact
//     (no iteration to convergence): two flows on one link get half each; a flow bottlenecked
//     elsewhere leaves the rest of a shared link to the other.
//  2. FlowSimulator: a fluid event simulation. Flows have a start time, a size and a path; rates
//     are the max-min shares of the flows active at the moment and are recomputed at every
//     arrival and departure; between two events every flow moves at a constant rate. A listener
//     hears each flow's finish (and may start further flows at or after it).
//  3. model::CollectiveOp expansion (NetworkSim; the routes and ring forms of a collective on the
//     cluster graph are simulator/collectives/link_graph.hpp's): a collective is a sequence of
//     phases, each a set of rings running at once. A ring AllReduce over n ranks is 2(n-1) steps,
//     ReduceScatter and AllGather n-1; in each step every member sends one chunk (S/n per ring for
//     AllReduce, split over the channels) to the next member along the hop's path. Member i starts
//     step k+1 when its step-k chunk from member i-1 has arrived and its own step-k send has left;
//     every step first waits the per-step latency alpha. So two collectives on one NIC, or rails
//     across an oversubscribed spine, are simulated rather than assumed; with no contention the
//     expanded ring is exactly collective.hpp's formula (steps * alpha + volume / (eta * B),
//     with B = model::CollectiveBandwidths::ring_bus), which network_flow_test checks.
//
// Units: bytes, bytes/s, seconds (double). Preconditions (DDPSIM_ASSERT): capacities > 0; link
// indices in range; sizes >= 0; start times >= now. A flow with an empty path or no bytes
// finishes at its start.
//
//   model::Topology topo(hw, 16);
//   LinkGraph g(topo, hw);
//   NetworkSim net(g.capacity_bytes_per_s());
//   double end = 0;
//   net.start(ring_collective_flows(g, model::CollectiveOp::kAllReduce, 1e9, topo.bandwidths(),
//   hw), 0.0,
//             [&](double t) { end = t; });
//   net.run();   // end == 2(n-1) alpha + 2(n-1)/n * 1e9 / (eta * ring_bus) without contention
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <span>
#include <string>
#include <vector>

#include "model/hardware/cluster.hpp"
#include "model/hardware/hardware.hpp"
#include "simulator/collectives/collective.hpp"

namespace ddpsim::sim {

/// Max-min fair rates (bytes/s) of flows over links. capacity_bytes_per_s[l] > 0; paths[f] lists
/// the links of flow f (each at most once). A flow with an empty path gets +infinity.
std::vector<double> max_min_rates(const std::vector<double>& capacity_bytes_per_s,
                                  const std::vector<std::vector<int>>& paths);

/// Same on views (no copies); the form FlowSimulator uses.
std::vector<double> max_min_rates(const std::vector<double>& capacity_bytes_per_s,
                                  const std::vector<std::span<const int>>& paths);

/// Hears flow completions. `tag` is the caller's, given to add_flow.
class FlowListener {
 public:
  virtual ~FlowListener() = default;
  virtual void on_flow_done(std::uint64_t tag, double at_s) = 0;
};

class FlowSimulator {
 public:
  explicit FlowSimulator(std::vector<double> capacity_bytes_per_s);

  /// Registers a path (link indices); returns its id for add_flow.
  int add_path(std::vector<int> links);
  /// A flow of `bytes` over path `path_id` starting at `start_s` (>= now_s()). `listener` (not
  /// owned, may be null) hears its finish. Returns nothing: the tag identifies it.
  void add_flow(int path_id, double bytes, double start_s, FlowListener* listener,
                std::uint64_t tag);

  /// Processes every arrival and departure up to and including `limit_s`.
  void run_until(double limit_s);
  /// Processes events until no flow is active or pending.
  void run() { run_until(std::numeric_limits<double>::infinity()); }
  /// The time of the next arrival or departure; +infinity when idle.
  double next_event_s() const;

  double now_s() const { return now_; }
  std::size_t active_flows() const { return active_.size(); }
  bool idle() const { return active_.empty() && pending_.empty(); }
  /// Bytes per second each link carries now (sum of its active flows' rates).
  std::vector<double> link_load_bytes_per_s() const;
  /// Sum over active flows of the bytes not yet delivered (a trace counter).
  double bytes_in_flight() const;
  const std::vector<double>& capacity_bytes_per_s() const { return capacity_; }
  std::uint64_t rate_recomputations() const { return recomputations_; }

 private:
  struct Flow {
    int path = -1;
    double remaining = 0;  ///< bytes left at t_last
    double rate = 0;       ///< bytes/s since t_last
    double t_last = 0;
    FlowListener* listener = nullptr;
    std::uint64_t tag = 0;
  };
  struct Pending {
    double start;
    std::uint64_t seq;
    Flow flow;
    bool operator>(const Pending& o) const {
      return start != o.start ? start > o.start : seq > o.seq;
    }
  };
  double departure(const Flow& f) const;
  void recompute_rates();

  std::vector<double> capacity_;
  std::vector<std::vector<int>> paths_;
  std::vector<Flow> active_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  std::uint64_t seq_ = 0;
  double now_ = 0;
  std::uint64_t recomputations_ = 0;
};

/// One ring: hops[i] is the path (link indices) from member i to member i+1 (mod members).
struct RingRoute {
  std::vector<std::vector<int>> hops;
};

/// Rings that run at once, each for `steps` steps of `chunk_bytes` per member and step.
struct RingPhase {
  std::vector<RingRoute> rings;
  int steps = 0;
  double chunk_bytes = 0;     ///< on the wire per step, already divided by the efficiency eta
  double step_latency_s = 0;  ///< alpha, waited before every step's send
};

/// A collective as flows: its phases run one after another (a phase ends when its last flow
/// has arrived).
struct CollectiveFlows {
  std::vector<RingPhase> phases;
};

/// Runs collectives (CollectiveFlows) on a FlowSimulator; concurrent ones share links.
class NetworkSim : private FlowListener {
 public:
  explicit NetworkSim(std::vector<double> capacity_bytes_per_s);
  ~NetworkSim() override;
  NetworkSim(const NetworkSim&) = delete;
  NetworkSim& operator=(const NetworkSim&) = delete;

  /// Starts `c` at `start_s` (>= now_s()); `done(end_s)` is called once its last phase ends.
  void start(const CollectiveFlows& c, double start_s, std::function<void(double)> done);
  /// A lone flow of `bytes` over `links` from `start_s` (>= now_s()), e.g. background traffic
  /// (simulator/event/contention.hpp); nobody hears its end and it does not count in running().
  void start_flow(std::vector<int> links, double bytes, double start_s) {
    flows_.add_flow(flows_.add_path(std::move(links)), bytes, start_s, nullptr, 0);
  }
  void run_until(double limit_s) { flows_.run_until(limit_s); }
  void run() { flows_.run(); }
  double next_event_s() const { return flows_.next_event_s(); }
  double now_s() const { return flows_.now_s(); }
  bool idle() const { return flows_.idle(); }
  std::size_t running() const { return running_count_; }
  const FlowSimulator& flows() const { return flows_; }

 private:
  struct Running;
  void on_flow_done(std::uint64_t tag, double at_s) override;
  void begin_phase(std::size_t id, double at_s);
  void try_step(Running& r, std::size_t id, int ring, int member, double at_s);

  FlowSimulator flows_;
  std::vector<std::unique_ptr<Running>> running_;  ///< by collective id; null once done
  std::vector<std::size_t> free_ids_;
  std::size_t running_count_ = 0;
};

}  // namespace ddpsim::sim
