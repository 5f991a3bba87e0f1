// ZeRO / FSDP steps on the event engine (ShardedModel; contract: simulator/event/simulate.hpp).
#include "simulator/event/detail/sharded_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "model/error.hpp"
#include "simulator/analytic/sharded_layout.hpp"
#include "simulator/event/detail/model_common.hpp"

namespace ddpsim::sim::event_detail {

namespace {

// A sharded strategy's steps (StepPlan::schedule, simulator/analytic/sharded.hpp). Every rank runs
// its compute ops in order (per micro-batch the forward layers, then the backward layers in
// reverse; then the optimizer); op g starts once the previous op has ended and every collective
// that blocks g has ended. The collectives of the step (expand_schedule) run on FIFO
// communication streams (one per communicator, ScheduledCollective::stream; all but FSDP2 use
// one): each launches once every rank has arrived at its gate op, the previous one of its stream
// has ended and, when it has one, the collective it must follow (`after`) has ended. The step ends
// on a rank when its optimizer and the collectives that block the step end (ZeRO-1/2's parameter
// all-gather) have ended. Jitter, stragglers and the timeline follow DpModel.
class ShardedModel {
 public:
  ShardedModel(const StepPlan& plan, const EventOptions& o, int extra_traced_rank = -1)
      : plan_(plan),
        o_(o),
        extra_traced_(extra_traced_rank),
        n_(plan.gpus),
        layers_(static_cast<int>(plan.layer_fwd_s.size())),
        per_(micro_batch_end_op(layers_)),
        opt_(per_ * plan.grad_accumulation),
        end_(opt_ + 1),
        inst_(expand_schedule(plan)) {
    check_plan(plan, o);
    DDPSIM_ASSERT(plan.buffer_broadcast_s == 0, "a sharded plan with a buffer broadcast");
    const std::size_t ops = static_cast<std::size_t>(end_) + 1;
    blockers_.assign(ops, 0);
    gated_.assign(ops, {});
    for (std::size_t i = 0; i < inst_.size(); ++i) {
      const ScheduleInstance& in = inst_[i];
      DDPSIM_ASSERT(in.gate >= 0 && in.gate <= in.block && in.block <= end_, "bad instance");
      DDPSIM_ASSERT(in.stream >= 0 && in.stream < kCommStreams, "bad stream");
      DDPSIM_ASSERT(in.after < static_cast<int>(i), "a collective after a later one");
      ++blockers_[static_cast<std::size_t>(in.block)];
      gated_[static_cast<std::size_t>(in.gate)].push_back(static_cast<int>(i));
      queue_[static_cast<std::size_t>(in.stream)].push_back(static_cast<int>(i));
      duration_.push_back(
          to_sim_time(plan.schedule[static_cast<std::size_t>(in.index)].duration_s()));
    }
    projected_.assign(inst_.size(), SimTime(0));
    projected_pass_.assign(inst_.size(), 0);
    ranks_ = seeded_ranks(o, n_);
    const auto steps = static_cast<std::size_t>(o.steps);
    step_end_.assign(steps, SimTime(0));
    opt_done_.assign(steps, 0);
    compute_end_.assign(steps, std::vector<SimTime>(static_cast<std::size_t>(n_)));
    last_.assign(static_cast<std::size_t>(n_), {0.0, 0.0, 0.0});
    engine_.set_observer(o.observer);
  }

  EventResult run() {
    begin_comm_step(0);
    for (int r = 0; r < n_; ++r) arrive(r, 0);
    engine_.run();
    return result();
  }

 private:
  RankState& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }

  bool traced(int r) const {
    return o_.record_timeline &&
           (o_.timeline_max_ranks <= 0 || r < o_.timeline_max_ranks || r == extra_traced_);
  }

  SimTime compute_time(RankState& rs, double nominal_s) {
    const double j = jitter_(rs);
    // As DpModel: interfered_s over the time the communication stream stays busy, the
    // collective in flight and those already launchable behind it (StepPlan::interference).
    const double d = nominal_s * rs.factor * j;
    if (plan_.interference <= 1.0) return to_sim_time(d);
    // The communication stays busy until the collectives in flight and those launchable behind
    // them end, laid out as the analytic timeline does: each stream FIFO, and a collective that
    // follows another (`after`, HSDP's all-reduce) starting when that one ends. Visited in
    // instance order so that the one followed is projected first.
    ++pass_;
    const SimTime now = engine_.now();
    std::array<std::size_t, kCommStreams> pos = next_;
    std::array<SimTime, kCommStreams> free;
    std::array<bool, kCommStreams> stopped{};
    free.fill(now);
    bool any = false;
    const auto project = [&](std::size_t i, SimTime end) {
      projected_[i] = end;
      projected_pass_[i] = pass_;
      any = true;
    };
    for (std::size_t st = 0; st < queue_.size(); ++st) {
      if (!busy_[st]) continue;
      const auto cur = static_cast<std::size_t>(queue_[st][pos[st]++]);
      free[st] = start_[cur] + duration_[cur];
      project(cur, free[st]);
    }
    for (;;) {
      std::size_t st = queue_.size();
      for (std::size_t c = 0; c < queue_.size(); ++c) {
        if (stopped[c] || pos[c] >= queue_[c].size()) continue;
        if (st == queue_.size() || queue_[c][pos[c]] < queue_[st][pos[st]]) st = c;
      }
      if (st == queue_.size()) break;
      const auto i = static_cast<std::size_t>(queue_[st][pos[st]]);
      SimTime begin = free[st];
      const int after = inst_[i].after;
      if (after >= 0 && !ended_[static_cast<std::size_t>(after)]) {
        const auto af = static_cast<std::size_t>(after);
        if (projected_pass_[af] == pass_) {
          begin = std::max(begin, projected_[af]);
        } else {
          stopped[st] = true;  // it follows one that cannot start yet
          continue;
        }
      }
      if (arrived_[i] < n_) {
        stopped[st] = true;  // FIFO: nothing behind it starts before it
        continue;
      }
      free[st] = begin + duration_[i];
      project(i, free[st]);
      ++pos[st];
    }
    if (!any) return to_sim_time(d);
    const SimTime until = *std::max_element(free.begin(), free.end());
    return to_sim_time(interfered_s(d, to_seconds(until - engine_.now()), plan_.interference));
  }

  const std::string& layer_name(std::size_t l) const {
    static const std::string unnamed = "layer";
    return plan_.workload && l < plan_.workload->layers.size() ? plan_.workload->layers[l].name
                                                               : unnamed;
  }

  void begin_comm_step(int s) {
    comm_step_ = s;
    const std::size_t c = inst_.size();
    arrived_.assign(c, 0);
    ready_.assign(c, SimTime(0));
    start_.assign(c, SimTime(0));
    finish_.assign(c, SimTime(0));
    ended_.assign(c, 0);
    unended_blockers_ = blockers_;
    next_.fill(0);
    busy_.fill(false);
    ended_count_ = 0;
  }

  // Rank r has finished op g-1 of its step (g = 0: the step has begun) and stands before op g.
  void arrive(int r, int g) {
    RankState& rs = rank(r);
    rs.layer = g;  // the op it stands before
    if (!inst_.empty() && rs.step == comm_step_) {
      bool any = false;
      for (int i : gated_[static_cast<std::size_t>(g)]) {
        auto& rd = ready_[static_cast<std::size_t>(i)];
        rd = std::max(rd, engine_.now());
        any |= ++arrived_[static_cast<std::size_t>(i)] == n_;
      }
      if (any) try_launch();
    }
    try_start(r);
  }

  bool blocked(const RankState& rs, int g) const {
    // A rank in an earlier step than the communication stream has had all its collectives.
    return !inst_.empty() && rs.step == comm_step_ &&
           unended_blockers_[static_cast<std::size_t>(g)] > 0;
  }

  void try_start(int r) {
    RankState& rs = rank(r);
    const int g = rs.layer;
    if (blocked(rs, g)) {
      rs.waiting_for_comm = true;
      return;
    }
    if (g == end_) {
      finish_step(r);
      return;
    }
    const int j = g % per_;
    const bool optimizer = g == opt_;
    const bool forward = !optimizer && j < layers_;
    const auto l = static_cast<std::size_t>(forward ? j : per_ - 1 - j);
    const double nominal =
        optimizer ? plan_.optimizer_s : (forward ? plan_.layer_fwd_s[l] : plan_.layer_bwd_s[l]);
    const SimTime d = compute_time(rs, nominal);
    (optimizer ? rs.opt_s : forward ? rs.fwd_s : rs.bwd_s) += to_seconds(d);
    if (traced(r)) {
      if (optimizer) {
        timeline_.push_back(Span{r, Stream::kCompute, rs.step, "optimizer", "", -1, engine_.now(),
                                 engine_.now() + d});
      } else {
        const std::string& name = layer_name(l);
        timeline_.push_back(Span{r, Stream::kCompute, rs.step, (forward ? "fwd " : "bwd ") + name,
                                 name, -1, engine_.now(), engine_.now() + d});
      }
    }
    engine_.schedule_in(
        d,
        [this, r] {
          RankState& s = rank(r);
          const int next = s.layer + 1;
          if (next == opt_) {
            s.bwd_end = engine_.now();
            compute_end_[static_cast<std::size_t>(s.step)][static_cast<std::size_t>(r)] = s.bwd_end;
          }
          arrive(r, next);
        },
        optimizer ? "optimizer" : (forward ? "forward" : "backward"));
  }

  void try_launch() {
    for (std::size_t s = 0; s < queue_.size(); ++s) {
      const auto& q = queue_[s];
      if (busy_[s] || next_[s] >= q.size()) continue;
      const auto i = static_cast<std::size_t>(q[next_[s]]);
      const int after = inst_[i].after;
      if (arrived_[i] < n_ || (after >= 0 && !ended_[static_cast<std::size_t>(after)])) continue;
      busy_[s] = true;
      start_[i] = engine_.now();
      engine_.schedule_in(
          duration_[i], [this, s] { end_collective(s); }, "collective");
    }
  }

  void end_collective(std::size_t s) {
    const auto i = static_cast<std::size_t>(queue_[s][next_[s]]);
    finish_[i] = engine_.now();
    if (o_.record_timeline) {
      const ScheduledCollective& c = plan_.schedule[static_cast<std::size_t>(inst_[i].index)];
      for (int q = 0; q < n_; ++q) {
        if (traced(q)) {
          timeline_.push_back(
              Span{q, Stream::kComm, comm_step_, c.name, "", c.cost.bytes, start_[i], finish_[i]});
        }
      }
    }
    ended_[i] = 1;
    --unended_blockers_[static_cast<std::size_t>(inst_[i].block)];
    busy_[s] = false;
    ++next_[s];
    if (++ended_count_ == inst_.size()) {
      done_ready_ = ready_;
      done_start_ = start_;
      done_finish_ = finish_;
      done_step_ = comm_step_;
      // Every rank has arrived at every gate of this step and none can pass the last
      // collective's block before now, so no rank is in the next step yet.
      if (comm_step_ + 1 < o_.steps) begin_comm_step(comm_step_ + 1);
    } else {
      try_launch();
    }
    for (int q = 0; q < n_; ++q) {
      RankState& qs = rank(q);
      if (qs.waiting_for_comm) {
        qs.waiting_for_comm = false;
        try_start(q);
      }
    }
  }

  void finish_step(int r) {
    RankState& rs = rank(r);
    const auto s = static_cast<std::size_t>(rs.step);
    step_end_[s] = std::max(step_end_[s], engine_.now());
    if (rs.step + 1 == o_.steps)
      last_[static_cast<std::size_t>(r)] = {rs.fwd_s, rs.bwd_s, rs.opt_s};
    if (++opt_done_[s] == n_) engine_.report_progress(static_cast<double>(s + 1) / o_.steps);
    if (rs.step + 1 < o_.steps) {
      ++rs.step;
      rs.fwd_s = rs.bwd_s = rs.opt_s = 0;
      arrive(r, 0);
    }
  }

  EventResult result() {
    EventResult out;
    out.ranks = n_;
    out.events_processed = engine_.events_processed();
    out.end_time = engine_.now();
    const SimTime last_start =
        fill_step_statistics(out, n_, opt_done_, step_end_, compute_end_, last_);
    const auto& lf = last_[static_cast<std::size_t>(out.slowest_rank)];
    if (!inst_.empty()) {
      DDPSIM_ASSERT(done_step_ == o_.steps - 1, "the last step's collectives did not finish");
      for (std::size_t i = 0; i < inst_.size(); ++i) {
        out.comm_time_s += to_seconds(duration_[i]);
        BucketTiming bt = plan_.schedule[static_cast<std::size_t>(inst_[i].index)].cost;
        bt.micro_batch = inst_[i].micro_batch;
        bt.ready_s = to_seconds(done_ready_[i] - last_start);
        bt.start_s = to_seconds(done_start_[i] - last_start);
        bt.end_s = to_seconds(done_finish_[i] - last_start);
        out.buckets.push_back(bt);
      }
    }
    // Communication not hidden: the slowest rank's step minus its own compute.
    out.exposed_comm_s = std::max(0.0, out.step_time_s.back() - lf[0] - lf[1] - lf[2]);
    if (o_.record_timeline) out.timeline = std::move(timeline_);
    return out;
  }

  const StepPlan& plan_;
  const EventOptions& o_;
  const int extra_traced_;
  const int n_;
  const int layers_;
  const int per_, opt_, end_;  ///< ops per micro-batch, the optimizer op, the step-end op
  const std::vector<ScheduleInstance> inst_;
  std::vector<SimTime> duration_;                     ///< per instance
  std::vector<int> blockers_;                         ///< per op: instances blocking it
  std::vector<std::vector<int>> gated_;               ///< per op: instances gated there
  std::array<std::vector<int>, kCommStreams> queue_;  ///< per stream: its instances in order
  Engine engine_;
  std::vector<RankState> ranks_;
  Jitter jitter_{o_};
  // The communication of step comm_step_.
  int comm_step_ = 0;
  std::vector<int> arrived_;
  std::vector<SimTime> ready_, start_, finish_;
  std::vector<char> ended_;
  std::vector<int> unended_blockers_;             ///< per op, this step
  std::array<std::size_t, kCommStreams> next_{};  ///< per stream: position in queue_
  std::array<bool, kCommStreams> busy_{};
  std::vector<SimTime> projected_;        ///< compute_time's projected end per instance
  std::vector<unsigned> projected_pass_;  ///< the compute_time call that projected it
  unsigned pass_ = 0;
  std::size_t ended_count_ = 0;
  std::vector<SimTime> done_ready_, done_start_, done_finish_;
  int done_step_ = -1;
  // Per step / rank.
  std::vector<SimTime> step_end_;
  std::vector<int> opt_done_;
  std::vector<std::vector<SimTime>> compute_end_;
  std::vector<std::array<double, 3>> last_;
  std::vector<Span> timeline_;
};

}  // namespace

EventResult run_sharded(const StepPlan& plan, const EventOptions& opts) {
  return run_model<ShardedModel>(plan, opts);
}

}  // namespace ddpsim::sim::event_detail
