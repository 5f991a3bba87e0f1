#include "simulator/collectives/network_flow.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <utility>

#include "model/error.hpp"

namespace ddpsim::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Two times closer than this (relative to the time, at least 1 ps) are one event: flows in
// lockstep finish "together" even when their finish times differ in the last bits.
constexpr double kTimeEps = 1e-12;
// A link whose fair share is within this factor of the round's bottleneck share saturates in
// the same round (shares computed from different residuals differ in the last bits).
constexpr double kShareEps = 1e-12;

double eps_at(double t) { return kTimeEps * std::max(1.0, std::abs(t)); }

}  // namespace

std::vector<double> max_min_rates(const std::vector<double>& capacity,
                                  const std::vector<std::span<const int>>& paths) {
  const std::size_t flows = paths.size();
  const std::size_t links = capacity.size();
  std::vector<double> rate(flows, 0.0);
  std::vector<char> frozen(flows, 0);
  std::vector<int> count(links, 0);
  std::size_t unfrozen = 0;
  for (std::size_t f = 0; f < flows; ++f) {
    if (paths[f].empty()) {
      rate[f] = kInf;
      frozen[f] = 1;
      continue;
    }
    ++unfrozen;
    for (int l : paths[f]) {
      DDPSIM_ASSERT(l >= 0 && static_cast<std::size_t>(l) < links, "flow path: link out of range");
      ++count[static_cast<std::size_t>(l)];
    }
  }
  // Flows of each link (CSR), and the links that carry any flow.
  std::vector<int> first(links + 1, 0);
  for (std::size_t l = 0; l < links; ++l) first[l + 1] = first[l] + count[l];
  std::vector<int> fill(first.begin(), first.end() - 1);
  std::vector<int> members(static_cast<std::size_t>(first[links]));
  for (std::size_t f = 0; f < flows; ++f)
    for (int l : paths[f])
      members[static_cast<std::size_t>(fill[static_cast<std::size_t>(l)]++)] = static_cast<int>(f);
  std::vector<int> used;
  for (std::size_t l = 0; l < links; ++l) {
    if (count[l] == 0) continue;
    DDPSIM_ASSERT(capacity[l] > 0, "flow link: capacity must be > 0");
    used.push_back(static_cast<int>(l));
  }

  // Progressive filling: all unfrozen flows rise by the smallest fair share of any link
  // (residual / unfrozen flows on it); the links reaching it are full, and their flows freeze
  // at the level reached. Each round freezes at least one flow, so it ends in <= flows rounds.
  std::vector<double> residual(capacity);
  std::vector<int> saturated;
  double level = 0;
  while (unfrozen > 0) {
    double delta = kInf;
    for (int l : used) {
      const auto li = static_cast<std::size_t>(l);
      if (count[li] > 0) delta = std::min(delta, residual[li] / count[li]);
    }
    DDPSIM_ASSERT(delta < kInf, "max-min: unfrozen flow on no link");
    level += delta;
    saturated.clear();
    for (int l : used) {
      const auto li = static_cast<std::size_t>(l);
      if (count[li] == 0) continue;
      if (residual[li] / count[li] <= delta * (1.0 + kShareEps)) {
        residual[li] = 0;
        saturated.push_back(l);
      } else {
        residual[li] -= delta * count[li];
      }
    }
    for (int l : saturated) {
      const auto li = static_cast<std::size_t>(l);
      for (int i = first[li]; i < first[li + 1]; ++i) {
        const auto f = static_cast<std::size_t>(members[static_cast<std::size_t>(i)]);
        if (frozen[f]) continue;
        frozen[f] = 1;
        rate[f] = level;
        --unfrozen;
        for (int l2 : paths[f]) --count[static_cast<std::size_t>(l2)];
      }
    }
  }
  return rate;
}

std::vector<double> max_min_rates(const std::vector<double>& capacity,
                                  const std::vector<std::vector<int>>& paths) {
  std::vector<std::span<const int>> views(paths.begin(), paths.end());
  return max_min_rates(capacity, views);
}

// ---------------------------------------------------------------------------------------------
// FlowSimulator

FlowSimulator::FlowSimulator(std::vector<double> capacity) : capacity_(std::move(capacity)) {
  for (double c : capacity_) DDPSIM_ASSERT(c > 0, "flow link: capacity must be > 0");
}

int FlowSimulator::add_path(std::vector<int> links) {
  for (int l : links)
    DDPSIM_ASSERT(l >= 0 && static_cast<std::size_t>(l) < capacity_.size(),
                  "flow path: link out of range");
  paths_.push_back(std::move(links));
  return static_cast<int>(paths_.size() - 1);
}

void FlowSimulator::add_flow(int path_id, double bytes, double start_s, FlowListener* listener,
                             std::uint64_t tag) {
  DDPSIM_ASSERT(path_id >= 0 && static_cast<std::size_t>(path_id) < paths_.size(),
                "flow: unknown path");
  DDPSIM_ASSERT(bytes >= 0, "flow: negative size");
  DDPSIM_ASSERT(start_s >= now_ - eps_at(now_), "flow: starts in the past");
  Flow f;
  f.path = path_id;
  f.remaining = bytes;
  f.listener = listener;
  f.tag = tag;
  pending_.push(Pending{std::max(start_s, now_), seq_++, f});
}

double FlowSimulator::departure(const Flow& f) const { return f.t_last + f.remaining / f.rate; }

double FlowSimulator::next_event_s() const {
  double t = pending_.empty() ? kInf : pending_.top().start;
  for (const Flow& f : active_) t = std::min(t, departure(f));
  return t;
}

void FlowSimulator::run_until(double limit_s) {
  std::vector<Flow> done;
  for (;;) {
    double t_dep = kInf;
    for (const Flow& f : active_) t_dep = std::min(t_dep, departure(f));
    const double t_arr = pending_.empty() ? kInf : pending_.top().start;
    const double t = std::min(t_dep, t_arr);
    if (t == kInf || t > limit_s) break;  // idle, or past the limit
    now_ = std::max(now_, t);
    const double horizon = now_ + eps_at(now_);
    bool changed = false;

    // Departures first: their listeners may start flows at now_, which the arrivals below
    // pick up in the same round (one rate computation per instant).
    done.clear();
    if (t_dep <= horizon) {
      auto keep = std::partition(active_.begin(), active_.end(),
                                 [&](const Flow& f) { return departure(f) > horizon; });
      done.assign(keep, active_.end());
      active_.erase(keep, active_.end());
      changed = true;
    }
    for (const Flow& f : done)
      if (f.listener != nullptr) f.listener->on_flow_done(f.tag, now_);

    while (!pending_.empty() && pending_.top().start <= horizon) {
      Flow f = pending_.top().flow;
      pending_.pop();
      f.t_last = now_;
      f.rate = 0;
      if (f.remaining <= 0 || paths_[static_cast<std::size_t>(f.path)].empty()) {
        // Nothing to move: it arrives at its start (its listener may queue more at now_).
        if (f.listener != nullptr) f.listener->on_flow_done(f.tag, now_);
        continue;
      }
      active_.push_back(f);
      changed = true;
    }
    if (changed) recompute_rates();
  }
  if (limit_s < kInf && limit_s > now_) now_ = limit_s;
}

void FlowSimulator::recompute_rates() {
  ++recomputations_;
  std::vector<std::span<const int>> views;
  views.reserve(active_.size());
  for (const Flow& f : active_) views.emplace_back(paths_[static_cast<std::size_t>(f.path)]);
  const std::vector<double> rates = max_min_rates(capacity_, views);
  for (std::size_t i = 0; i < active_.size(); ++i) {
    Flow& f = active_[i];
    // A flow whose rate did not change keeps its (t_last, remaining): its finish time is then
    // computed once, from its start, exactly as a lone transfer's would be.
    if (rates[i] == f.rate) continue;
    if (f.rate > 0) f.remaining = std::max(0.0, f.remaining - f.rate * (now_ - f.t_last));
    f.t_last = now_;
    f.rate = rates[i];
  }
}

std::vector<double> FlowSimulator::link_load_bytes_per_s() const {
  std::vector<double> load(capacity_.size(), 0.0);
  for (const Flow& f : active_)
    for (int l : paths_[static_cast<std::size_t>(f.path)])
      load[static_cast<std::size_t>(l)] += f.rate;
  return load;
}

double FlowSimulator::bytes_in_flight() const {
  double b = 0;
  for (const Flow& f : active_) b += std::max(0.0, f.remaining - f.rate * (now_ - f.t_last));
  for (auto q = pending_; !q.empty(); q.pop()) b += q.top().flow.remaining;
  return b;
}

// ---------------------------------------------------------------------------------------------
// NetworkSim

struct NetworkSim::Running {
  CollectiveFlows c;
  std::function<void(double)> done;
  std::size_t phase = 0;
  // Per ring of the current phase: path id per hop; per member: steps started, sends
  // completed, chunks received.
  std::vector<std::vector<int>> paths;
  std::vector<std::vector<int>> started, sent, received;
  std::size_t members_left = 0;
};

namespace {
// tag = collective id (24 bits) | ring (16 bits) | member (24 bits).
std::uint64_t make_tag(std::size_t id, int ring, int member) {
  return (static_cast<std::uint64_t>(id) << 40) | (static_cast<std::uint64_t>(ring) << 24) |
         static_cast<std::uint64_t>(member);
}
}  // namespace

NetworkSim::NetworkSim(std::vector<double> capacity) : flows_(std::move(capacity)) {}
NetworkSim::~NetworkSim() = default;

void NetworkSim::start(const CollectiveFlows& c, double start_s, std::function<void(double)> done) {
  std::size_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = running_.size();
    running_.emplace_back();
  }
  DDPSIM_ASSERT(id < (std::size_t{1} << 24), "network: too many concurrent collectives");
  auto r = std::make_unique<Running>();
  r->c = c;
  r->done = std::move(done);
  running_[id] = std::move(r);
  ++running_count_;
  begin_phase(id, std::max(start_s, flows_.now_s()));
}

void NetworkSim::begin_phase(std::size_t id, double at_s) {
  Running& r = *running_[id];
  while (r.phase < r.c.phases.size()) {
    const RingPhase& p = r.c.phases[r.phase];
    std::size_t members = 0;
    for (const RingRoute& ring : p.rings) members += ring.hops.size();
    if (p.steps > 0 && members > 0) break;
    ++r.phase;  // nothing to do in this phase
  }
  if (r.phase == r.c.phases.size()) {
    auto done = std::move(r.done);
    running_[id].reset();
    free_ids_.push_back(id);
    --running_count_;
    if (done) done(at_s);
    return;
  }
  const RingPhase& p = r.c.phases[r.phase];
  DDPSIM_ASSERT(p.rings.size() < (std::size_t{1} << 16), "network: too many rings");
  r.paths.assign(p.rings.size(), {});
  r.started.assign(p.rings.size(), {});
  r.sent.assign(p.rings.size(), {});
  r.received.assign(p.rings.size(), {});
  r.members_left = 0;
  for (std::size_t k = 0; k < p.rings.size(); ++k) {
    const auto m = p.rings[k].hops.size();
    DDPSIM_ASSERT(m < (std::size_t{1} << 24), "network: ring too long");
    for (const auto& hop : p.rings[k].hops) r.paths[k].push_back(flows_.add_path(hop));
    r.started[k].assign(m, 0);
    r.sent[k].assign(m, 0);
    r.received[k].assign(m, 0);
    r.members_left += m;
  }
  for (std::size_t k = 0; k < p.rings.size(); ++k)
    for (std::size_t i = 0; i < p.rings[k].hops.size(); ++i)
      try_step(r, id, static_cast<int>(k), static_cast<int>(i), at_s);
}

void NetworkSim::try_step(Running& r, std::size_t id, int ring, int member, double at_s) {
  const RingPhase& p = r.c.phases[r.phase];
  const auto k = static_cast<std::size_t>(ring);
  const auto i = static_cast<std::size_t>(member);
  int& started = r.started[k][i];
  // One send in flight per member, and step s needs the chunk of step s-1 from the previous
  // member (received counts the chunks that have arrived).
  if (started >= p.steps || r.sent[k][i] < started || r.received[k][i] < started) return;
  ++started;
  flows_.add_flow(r.paths[k][i], p.chunk_bytes, at_s + p.step_latency_s, this,
                  make_tag(id, ring, member));
}

void NetworkSim::on_flow_done(std::uint64_t tag, double at_s) {
  const auto id = static_cast<std::size_t>(tag >> 40);
  const int ring = static_cast<int>((tag >> 24) & 0xffff);
  const int member = static_cast<int>(tag & 0xffffff);
  Running& r = *running_[id];
  const RingPhase& p = r.c.phases[r.phase];
  const auto k = static_cast<std::size_t>(ring);
  const int m = static_cast<int>(p.rings[k].hops.size());
  const int next = (member + 1) % m;
  ++r.sent[k][static_cast<std::size_t>(member)];
  ++r.received[k][static_cast<std::size_t>(next)];
  // A member is finished once it has sent and received all steps; count it when the event that
  // completes it happens (this flow's send for `member`, its receive for `next`).
  auto finished = [&](int q) {
    const auto qi = static_cast<std::size_t>(q);
    return r.sent[k][qi] == p.steps && r.received[k][qi] == p.steps;
  };
  if (finished(member)) --r.members_left;
  if (next != member && finished(next)) --r.members_left;
  if (r.members_left == 0) {
    ++r.phase;
    begin_phase(id, at_s);
    return;
  }
  try_step(r, id, ring, member, at_s);
  if (next != member) try_step(r, id, ring, next, at_s);
}

}  // namespace ddpsim::sim
