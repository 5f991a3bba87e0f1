#include "simulator/event/detail/dp_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <utility>

#include "model/error.hpp"
#include "model/profile/profile.hpp"
#include "simulator/event/detail/model_common.hpp"

namespace ddpsim::sim {

namespace event_detail {

namespace {

// A collective of the gradient phase: a DDP bucket, the local_used_map all-reduce or the
// first iteration's single bucket.
struct PlannedCollective {
  SimTime duration{0};
  int ready_layer = 0;  ///< its gradients exist once this layer's backward ends
  int gate_layer = 0;   ///< it may launch once this layer's backward ends (0 without overlap)
  int bucket = -1;      ///< index in plan.buckets, -1 for the others
  std::int64_t bytes = -1;
  SimTime copy_out{0};  ///< the Reducer's copy back into .grad after it (PlannedBucket)
  /// Its contention (PlannedBucket's compute_slowdown, collective_slowdown, paired_s, and its
  /// duration as collective_s): what collective_rate and the compute's slowdown read.
  PlannedBucket rates;
  double compute_slowdown = 1;
  std::string name;
};

// One collective in flight: its work left (seconds of its time alone), at `rate` since `since`.
struct Flight {
  std::size_t index = 0;
  double left = 0, rate = 0, since = 0;
  std::uint64_t generation = 0;
};

// What a compute kernel does when it ends.
enum class Phase { kForward, kBackward, kCopyIn, kOptimizer };

// The compute kernel a rank runs: `left` seconds of work at full speed, progressing at `rate`
// since `since` (seconds); a kernel rescheduled when its rate changes keeps one generation
// number, so the end events scheduled before are ignored.
struct Kernel {
  bool active = false;
  bool slowable = false;  ///< slowed beside collectives, and slowing them (not the copies)
  Phase phase = Phase::kForward;
  double left = 0, slowdown = 1, since = 0;  ///< it progresses 1 / slowdown per second
  SimTime begin{0};                          ///< the layer's start (the copy continues its span)
  std::uint64_t generation = 0;
};

// What the last rank's notifications and the communication stream have done in this step.
struct CollectiveState {
  int gated = 0;  ///< ranks on which it may launch
  SimTime ready_max{0};
  SimTime start{0};
  SimTime end{0};
};

class DpModel {
 public:
  /// With o.record_timeline, records ranks below o.timeline_max_ranks (all if 0) and `extra`.
  DpModel(const StepPlan& plan, const EventOptions& o, int extra_traced_rank = -1)
      : plan_(plan),
        o_(o),
        extra_traced_(extra_traced_rank),
        n_(plan.gpus),
        layers_(static_cast<int>(plan.layer_fwd_s.size())) {
    check_plan(plan, o);
    broadcast_ = to_sim_time(plan.buffer_broadcast_s);
    steady_ = collectives(false);
    first_ = plan.first_iteration_one_bucket ? collectives(true) : steady_;
    ranks_ = seeded_ranks(o, n_);
    const auto steps = static_cast<std::size_t>(o.steps);
    step_end_.assign(steps, SimTime(0));
    opt_done_.assign(steps, 0);
    compute_end_.assign(steps, std::vector<SimTime>(static_cast<std::size_t>(n_)));
    engine_.set_observer(o.observer);
  }

  EventResult run() {
    begin_step_collectives(0);
    for (int r = 0; r < n_; ++r) start_micro_batch(r);
    engine_.run();
    return result();
  }

 private:
  std::vector<PlannedCollective> collectives(bool first) const {
    std::vector<PlannedCollective> out;
    if (first) {
      PlannedCollective c;
      c.duration = to_sim_time(plan_.first_iteration_allreduce_s);
      c.bytes = static_cast<std::int64_t>(std::llround(plan_.grad_bytes_total * plan_.wire_scale));
      c.name = "allreduce first-iteration bucket";
      c.rates.collective_s = plan_.first_iteration_allreduce_s;
      c.compute_slowdown = plan_.interference;
      double copy_out = 0;
      for (const PlannedBucket& b : plan_.buckets) copy_out += b.copy_out_s;
      c.copy_out = to_sim_time(copy_out);
      out.push_back(c);
      return out;
    }
    for (std::size_t i = 0; i < plan_.buckets.size(); ++i) {
      const PlannedBucket& b = plan_.buckets[i];
      PlannedCollective c;
      c.duration = to_sim_time(b.duration_s());
      c.ready_layer = b.ready_layer;
      c.gate_layer = plan_.overlap ? b.ready_layer : 0;
      c.bucket = static_cast<int>(i);
      c.bytes = b.cost.bytes;
      c.name = "allreduce bucket " + std::to_string(i);
      c.copy_out = to_sim_time(b.copy_out_s);
      c.rates = b;
      c.compute_slowdown = compute_slowdown_of(plan_, b);
      out.push_back(c);
    }
    if (plan_.used_map_allreduce_s > 0) {
      PlannedCollective c;
      c.duration = to_sim_time(plan_.used_map_allreduce_s);
      c.name = "allreduce local_used_map";
      c.rates.collective_s = plan_.used_map_allreduce_s;
      c.compute_slowdown = plan_.interference;
      out.push_back(c);
    }
    return out;
  }

  const std::vector<PlannedCollective>& current() const {
    return o_.include_first_iteration && comm_step_ == 0 ? first_ : steady_;
  }

  // Called when no rank has yet notified anything of step `s` (every rank is in its optimizer
  // of step s-1 or earlier in step s).
  void begin_step_collectives(int s) {
    comm_step_ = s;
    const auto& cs = current();
    state_.assign(cs.size(), CollectiveState{});
    gates_.assign(static_cast<std::size_t>(std::max(layers_, 1)), {});
    readies_.assign(static_cast<std::size_t>(std::max(layers_, 1)), {});
    for (std::size_t i = 0; i < cs.size(); ++i) {
      gates_[static_cast<std::size_t>(cs[i].gate_layer)].push_back(static_cast<int>(i));
      readies_[static_cast<std::size_t>(cs[i].ready_layer)].push_back(static_cast<int>(i));
    }
    next_ = 0;
    ended_ = 0;
    flights_.clear();
    if (cs.empty()) {
      // Nothing to reduce (no gradients): this step and, as every later step has the same
      // plan, all later ones are done with communication.
      comm_done_through_ = o_.steps - 1;
      done_step_ = o_.steps - 1;
      done_states_.clear();
    }
  }

  // Contention as processor sharing (ddp_timeline.hpp): a slowable kernel runs the largest
  // compute_slowdown of the collectives in flight slower, and each collective in flight runs at
  // collective_rate (its collective_slowdown while any rank computes a slowable kernel, the pair
  // rate while two are in flight). When a rate changes, the work done so far is settled and the
  // end is scheduled anew (the end scheduled before is ignored: its generation is stale).
  double now_s() const { return to_seconds(engine_.now()); }

  double compute_slowdown() const {
    double f = 1;
    for (const Flight& x : flights_) f = std::max(f, current()[x.index].compute_slowdown);
    return f;
  }

  // Starts rank r's kernel of `work_s` seconds at full speed.
  void start_kernel(int r, double work_s, bool slowable, Phase phase, SimTime begin) {
    Kernel& k = kernels_[static_cast<std::size_t>(r)];
    k.active = true;
    k.slowable = slowable;
    k.phase = phase;
    k.left = work_s;
    k.since = now_s();
    k.begin = begin;
    k.slowdown = slowable ? compute_slowdown() : 1.0;
    if (slowable && computing_++ == 0) retime_flights();  // the collectives now run beside it
    schedule_kernel(r);
  }

  void schedule_kernel(int r) {
    Kernel& k = kernels_[static_cast<std::size_t>(r)];
    const std::uint64_t g = ++k.generation;
    engine_.schedule_in(
        to_sim_time(k.left * k.slowdown),
        [this, r, g] {
          if (kernels_[static_cast<std::size_t>(r)].generation == g) end_kernel(r);
        },
        "compute");
  }

  // The collectives in flight changed: every slowable kernel takes the new compute rate.
  void retime_kernels() {
    const double f = compute_slowdown();
    for (std::size_t r = 0; r < kernels_.size(); ++r) {
      Kernel& k = kernels_[r];
      if (!k.active || !k.slowable || k.slowdown == f) continue;
      k.left = std::max(0.0, k.left - (now_s() - k.since) / k.slowdown);
      k.since = now_s();
      k.slowdown = f;
      schedule_kernel(static_cast<int>(r));
    }
  }

  // The collectives in flight or the compute beside them changed: each takes its new rate.
  void retime_flights() {
    const auto& cs = current();
    const int in_flight = static_cast<int>(flights_.size());
    for (Flight& x : flights_) {
      const double rate = collective_rate(cs[x.index].rates, in_flight, computing_ > 0);
      if (rate == x.rate) continue;
      x.left = std::max(0.0, x.left - x.rate * (now_s() - x.since));
      x.since = now_s();
      x.rate = rate;
      const std::uint64_t g = ++x.generation;
      const std::size_t index = x.index;
      engine_.schedule_in(
          to_sim_time(x.left / rate), [this, index, g] { end_collective(index, g); }, "collective");
    }
  }

  void end_kernel(int r) {
    Kernel& k = kernels_[static_cast<std::size_t>(r)];
    k.active = false;
    if (k.slowable && --computing_ == 0) retime_flights();
    RankState& rs = rank(r);
    switch (k.phase) {
      case Phase::kForward:
        end_forward_layer(r);
        return;
      case Phase::kBackward: {
        // The last micro-batch's backward also copies the layer's gradients into their buckets.
        const auto l = static_cast<std::size_t>(rs.layer);
        if (rs.micro_batch + 1 == plan_.grad_accumulation && !plan_.layer_grad_copy_s.empty() &&
            plan_.layer_grad_copy_s[l] > 0) {
          start_kernel(r, to_seconds(to_sim_time(plan_.layer_grad_copy_s[l])), false,
                       Phase::kCopyIn, k.begin);
          return;
        }
        end_backward_layer(r);
        return;
      }
      case Phase::kCopyIn:
        end_backward_layer(r);
        return;
      case Phase::kOptimizer:
        end_optimizer(r);
        return;
    }
  }

  bool traced(int r) const {
    return o_.record_timeline &&
           (o_.timeline_max_ranks <= 0 || r < o_.timeline_max_ranks || r == extra_traced_);
  }

  void span(int r, Stream st, int step, std::string name, std::string layer, std::int64_t bytes,
            SimTime start, SimTime end) {
    timeline_.push_back(Span{r, st, step, std::move(name), std::move(layer), bytes, start, end});
  }

  RankState& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }

  void start_micro_batch(int r) {
    RankState& rs = rank(r);
    if (rs.micro_batch == 0) rs.fwd_s = rs.bwd_s = rs.opt_s = 0;
    if (broadcast_ > SimTime::zero()) {
      // broadcast_buffers: a collective of all ranks, so the rank waits for the last one.
      if (++barrier_ < n_) return;
      barrier_ = 0;
      const SimTime start = engine_.now();
      engine_.schedule_in(
          broadcast_,
          [this, start] {
            for (int q = 0; q < n_; ++q) {
              RankState& qs = rank(q);
              // The compute stream of every rank is blocked from its arrival; count the
              // broadcast itself as forward time (as the analytic model does).
              qs.fwd_s += to_seconds(broadcast_);
              if (traced(q)) {
                span(q, Stream::kComm, qs.step, "broadcast buffers", "", -1, start, engine_.now());
              }
              begin_forward(q);
            }
          },
          "broadcast");
      return;
    }
    begin_forward(r);
  }

  void begin_forward(int r) {
    RankState& rs = rank(r);
    rs.layer = 0;
    if (layers_ == 0) {
      end_backward(r);
      return;
    }
    run_forward_layer(r);
  }

  // One kernel's work: its nominal time on this rank (straggler factor, jitter).
  double kernel_work(RankState& rs, double nominal_s) {
    return nominal_s * rs.factor * jitter_(rs);
  }

  void run_forward_layer(int r) {
    RankState& rs = rank(r);
    const auto l = static_cast<std::size_t>(rs.layer);
    start_kernel(r, kernel_work(rs, plan_.layer_fwd_s[l]), true, Phase::kForward, engine_.now());
  }

  void end_forward_layer(int r) {
    RankState& s = rank(r);
    const SimTime begin = kernels_[static_cast<std::size_t>(r)].begin;
    s.fwd_s += to_seconds(engine_.now() - begin);
    if (traced(r)) {
      const std::string& name = layer_name(static_cast<std::size_t>(s.layer));
      span(r, Stream::kCompute, s.step, "fwd " + name, name, -1, begin, engine_.now());
    }
    if (++s.layer < layers_) {
      run_forward_layer(r);
    } else {
      s.layer = layers_ - 1;
      run_backward_layer(r);
    }
  }

  void run_backward_layer(int r) {
    RankState& rs = rank(r);
    const auto l = static_cast<std::size_t>(rs.layer);
    start_kernel(r, kernel_work(rs, plan_.layer_bwd_s[l]), true, Phase::kBackward, engine_.now());
  }

  void end_backward_layer(int r) {
    RankState& s = rank(r);
    const SimTime begin = kernels_[static_cast<std::size_t>(r)].begin;
    s.bwd_s += to_seconds(engine_.now() - begin);
    if (traced(r)) {
      const std::string& name = layer_name(static_cast<std::size_t>(s.layer));
      span(r, Stream::kCompute, s.step, "bwd " + name, name, -1, begin, engine_.now());
    }
    const int layer = s.layer;
    if (s.micro_batch + 1 == plan_.grad_accumulation) backward_done(s.step, layer);
    if (layer > 0) {
      --s.layer;
      run_backward_layer(r);
    } else {
      end_backward(r);
    }
  }

  const std::string& layer_name(std::size_t l) const {
    static const std::string unnamed = "layer";
    return plan_.workload && l < plan_.workload->layers.size() ? plan_.workload->layers[l].name
                                                               : unnamed;
  }

  // The last micro-batch's backward of `layer` ended on one rank: its buckets are ready there.
  void backward_done(int step, int layer) {
    // A straggler may still finish layers below the last bucket's after its step's collectives
    // ended: those notifications have nothing left to gate.
    if (step != comm_step_ || comm_done_through_ >= step) return;
    const auto l = static_cast<std::size_t>(layer);
    for (int c : readies_[l]) {
      auto& st = state_[static_cast<std::size_t>(c)];
      st.ready_max = std::max(st.ready_max, engine_.now());
    }
    bool any = false;
    for (int c : gates_[l]) {
      any |= ++state_[static_cast<std::size_t>(c)].gated == n_;
    }
    if (any) try_launch();
  }

  // Starts the next collectives, in order, while a lane is free and every rank has gated them.
  void try_launch() {
    const auto& cs = current();
    bool started = false;
    while (flights_.size() < lanes_ && next_ < cs.size() && state_[next_].gated >= n_) {
      state_[next_].start = engine_.now();
      Flight f;
      f.index = next_;
      f.left = to_seconds(cs[next_].duration);
      f.since = now_s();
      flights_.push_back(f);  // rate 0: retime_flights schedules its end
      ++next_;
      started = true;
    }
    if (!started) return;
    retime_flights();
    retime_kernels();
  }

  void end_collective(std::size_t index, std::uint64_t generation) {
    const auto it = std::find_if(flights_.begin(), flights_.end(),
                                 [&](const Flight& x) { return x.index == index; });
    if (it == flights_.end() || it->generation != generation) return;  // rescheduled since
    flights_.erase(it);
    const auto& cs = current();
    CollectiveState& st = state_[index];
    st.end = engine_.now();
    if (o_.record_timeline) {
      for (int q = 0; q < n_; ++q) {
        if (traced(q)) {
          span(q, Stream::kComm, comm_step_, cs[index].name, "", cs[index].bytes, st.start, st.end);
        }
      }
    }
    if (++ended_ < cs.size()) {
      try_launch();
      retime_flights();
      retime_kernels();
      return;
    }
    retime_kernels();
    // Every collective of the step has ended: record them, then release the waiting ranks.
    comm_end_ = engine_.now();
    done_states_ = state_;
    done_step_ = comm_step_;
    comm_done_through_ = comm_step_;
    // Every rank has notified all it will ever notify for this step with effect (a collective
    // only ends once every rank gated it), and no rank is in the next step yet (it needs this
    // release first), so the next step's state can start now.
    if (comm_step_ + 1 < o_.steps) begin_step_collectives(comm_step_ + 1);
    for (int q = 0; q < n_; ++q) {
      if (rank(q).waiting_for_comm) {
        rank(q).waiting_for_comm = false;
        finalize(q);
      }
    }
  }

  void end_backward(int r) {
    RankState& rs = rank(r);
    if (rs.micro_batch + 1 < plan_.grad_accumulation) {
      ++rs.micro_batch;  // no_sync: the next micro-batch starts at once
      start_micro_batch(r);
      return;
    }
    rs.bwd_end = engine_.now();
    compute_end_[static_cast<std::size_t>(rs.step)][static_cast<std::size_t>(r)] = rs.bwd_end;
    if (comm_done_through_ >= rs.step) {
      finalize(r);
    } else {
      rs.waiting_for_comm = true;
    }
  }

  // Reducer::finalize_backward once every collective of the rank's step has ended: bucket by
  // bucket in launch order, wait for its collective, then copy it back into .grad on the compute
  // stream. The collectives' end times are all known here, so the chain is laid out at once.
  void finalize(int r) {
    RankState& rs = rank(r);
    const auto& cs = o_.include_first_iteration && done_step_ == 0 ? first_ : steady_;
    SimTime t = rs.bwd_end, copied{0};
    for (std::size_t i = 0; i < cs.size(); ++i) {
      if (cs[i].copy_out == SimTime::zero()) continue;
      const SimTime start = std::max(t, done_states_[i].end);
      t = start + cs[i].copy_out;
      copied += cs[i].copy_out;
      rs.bwd_s += to_seconds(cs[i].copy_out);
      if (traced(r)) {
        span(r, Stream::kCompute, rs.step, "copy bucket to grad", "", -1, start, t);
      }
    }
    if (rs.step + 1 == o_.steps) {
      last_finalize_.resize(static_cast<std::size_t>(n_));
      last_finalize_[static_cast<std::size_t>(r)] = {t, copied};
    }
    if (t <= engine_.now()) {
      start_optimizer(r);
      return;
    }
    engine_.schedule_in(
        t - engine_.now(), [this, r] { start_optimizer(r); }, "finalize");
  }

  void start_optimizer(int r) {
    RankState& rs = rank(r);
    start_kernel(r, kernel_work(rs, plan_.optimizer_s), true, Phase::kOptimizer, engine_.now());
  }

  void end_optimizer(int r) {
    RankState& rs = rank(r);
    const SimTime begin = kernels_[static_cast<std::size_t>(r)].begin;
    rs.opt_s = to_seconds(engine_.now() - begin);
    if (traced(r)) span(r, Stream::kCompute, rs.step, "optimizer", "", -1, begin, engine_.now());
    const auto s = static_cast<std::size_t>(rs.step);
    step_end_[s] = std::max(step_end_[s], engine_.now());
    if (rs.step + 1 == o_.steps) {
      last_fwd_.resize(static_cast<std::size_t>(n_));
      last_fwd_[static_cast<std::size_t>(r)] = {rs.fwd_s, rs.bwd_s, rs.opt_s};
    }
    if (++opt_done_[s] == n_) engine_.report_progress(static_cast<double>(s + 1) / o_.steps);
    if (rs.step + 1 < o_.steps) {
      ++rs.step;
      rs.micro_batch = 0;
      start_micro_batch(r);
    }
  }

  EventResult result() {
    EventResult out;
    out.ranks = n_;
    out.events_processed = engine_.events_processed();
    out.end_time = engine_.now();
    const SimTime last_start =
        fill_step_statistics(out, n_, opt_done_, step_end_, compute_end_, last_fwd_);
    const SimTime slowest_end = compute_end_.back()[static_cast<std::size_t>(out.slowest_rank)];
    DDPSIM_ASSERT(done_step_ == o_.steps - 1, "the last step's collectives did not finish");
    const auto& cs = current();
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const CollectiveState& st = done_states_[i];
      out.comm_time_s += to_seconds(st.end - st.start);
      if (cs[i].bucket < 0) continue;
      BucketTiming bt = plan_.buckets[static_cast<std::size_t>(cs[i].bucket)].cost;
      bt.ready_s = to_seconds(st.ready_max - last_start);
      bt.start_s = to_seconds(st.start - last_start);
      bt.end_s = to_seconds(st.end - last_start);
      out.buckets.push_back(bt);
    }
    // The time the slowest rank's compute stream waited for communication: from the end of
    // its backward to the start of its optimizer, less its copies back into .grad.
    SimTime sync_end = comm_end_, copied{0};
    if (!last_finalize_.empty()) {
      const auto& [fin, c] = last_finalize_[static_cast<std::size_t>(out.slowest_rank)];
      sync_end = std::max(sync_end, fin);
      copied = c;
    }
    out.exposed_comm_s = std::max(0.0, to_seconds(sync_end - slowest_end - copied));

    if (o_.record_timeline) out.timeline = std::move(timeline_);
    return out;
  }

  const StepPlan& plan_;
  const EventOptions& o_;
  /// Per rank, the last step's finalize_backward: when it ended, and the copies it made.
  std::vector<std::pair<SimTime, SimTime>> last_finalize_;
  const int extra_traced_;
  const int n_;
  const int layers_;
  Engine engine_;
  SimTime broadcast_{0};
  std::vector<PlannedCollective> steady_, first_;
  std::vector<RankState> ranks_;
  Jitter jitter_{o_};
  int barrier_ = 0;
  // The gradient phase of step comm_step_.
  int comm_step_ = 0;
  std::vector<CollectiveState> state_;
  std::vector<std::vector<int>> gates_, readies_;  ///< per layer: collective indices
  std::size_t next_ = 0;                           ///< the next collective to start
  std::size_t ended_ = 0;                          ///< collectives of the step that have ended
  std::vector<Flight> flights_;
  const std::size_t lanes_ = static_cast<std::size_t>(std::max(1, plan_.comm_lanes));
  std::vector<Kernel> kernels_ = std::vector<Kernel>(static_cast<std::size_t>(n_));
  int computing_ = 0;  ///< ranks running a slowable kernel
  SimTime comm_end_{0};
  int comm_done_through_ = -1;  ///< the last step whose collectives have all ended
  std::vector<CollectiveState> done_states_;
  int done_step_ = -1;
  // Per step.
  std::vector<SimTime> step_end_;
  std::vector<int> opt_done_;
  std::vector<std::vector<SimTime>> compute_end_;
  std::vector<std::array<double, 3>> last_fwd_;
  std::vector<Span> timeline_;
};

}  // namespace

EventResult run_dp(const StepPlan& plan, const EventOptions& opts) {
  return run_model<DpModel>(plan, opts);
}

}  // namespace event_detail

}  // namespace ddpsim::sim
