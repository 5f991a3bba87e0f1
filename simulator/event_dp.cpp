#include "simulator/event_dp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <utility>

#include "model/error.hpp"
#include "simulator/sharded.hpp"

namespace ddpsim::sim {

namespace {

/// What every model reports the same way once its steps are simulated: each step's time (from
/// the previous step's end; the first from t = 0), per-rank compute ends relative to that step's
/// start, the mean and the nearest-rank p50/p95/p99, and the slowest rank's forward, backward and
/// optimizer times of the last step (`last_times`, per rank). Returns the start of the last step.
SimTime fill_step_statistics(EventResult& out, int ranks, const std::vector<int>& opt_done,
                             const std::vector<SimTime>& step_end,
                             const std::vector<std::vector<SimTime>>& compute_end,
                             const std::vector<std::array<double, 3>>& last_times) {
  const std::size_t steps = step_end.size();
  DDPSIM_ASSERT(steps > 0, "no simulated step");
  SimTime prev{0};
  out.compute_end_s.resize(steps);
  for (std::size_t s = 0; s < steps; ++s) {
    DDPSIM_ASSERT(opt_done[s] == ranks, "a step did not finish on every rank");
    out.step_time_s.push_back(to_seconds(step_end[s] - prev));
    out.compute_end_s[s].reserve(compute_end[s].size());
    for (SimTime t : compute_end[s]) out.compute_end_s[s].push_back(to_seconds(t - prev));
    if (s + 1 < steps) prev = step_end[s];
  }
  double sum = 0;
  for (double t : out.step_time_s) sum += t;
  out.mean_step_time_s = sum / static_cast<double>(steps);
  std::vector<double> sorted = out.step_time_s;
  std::sort(sorted.begin(), sorted.end());
  auto nearest_rank = [&](double q) {
    const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(steps)));
    return sorted[std::clamp<std::size_t>(i, 1, steps) - 1];
  };
  out.p50_step_time_s = nearest_rank(0.50);
  out.p95_step_time_s = nearest_rank(0.95);
  out.p99_step_time_s = nearest_rank(0.99);
  const auto& last_compute = compute_end[steps - 1];
  const auto slowest = std::max_element(last_compute.begin(), last_compute.end());
  out.slowest_rank = static_cast<int>(slowest - last_compute.begin());
  const auto& lf = last_times[static_cast<std::size_t>(out.slowest_rank)];
  out.forward_time_s = lf[0];
  out.backward_time_s = lf[1];
  out.optimizer_time_s = lf[2];
  return prev;
}

// A collective of the gradient phase: a DDP bucket, the local_used_map all-reduce or the
// first iteration's single bucket.
struct PlannedCollective {
  SimTime duration{0};
  int ready_layer = 0;  ///< its gradients exist once this layer's backward ends
  int gate_layer = 0;   ///< it may launch once this layer's backward ends (0 without overlap)
  int bucket = -1;      ///< index in plan.buckets, -1 for the others
  std::int64_t bytes = -1;
  std::string name;
};

// What the last rank's notifications and the communication stream have done in this step.
struct CollectiveState {
  int gated = 0;  ///< ranks on which it may launch
  SimTime ready_max{0};
  SimTime start{0};
  SimTime end{0};
};

struct RankState {
  std::mt19937_64 rng;
  // Per rank: the distribution caches the second value of each pair it generates.
  std::normal_distribution<double> normal{0.0, 1.0};
  double factor = 1;  ///< straggler slowdown
  int step = 0;
  int micro_batch = 0;
  int layer = 0;
  bool waiting_for_comm = false;
  SimTime bwd_end{0};
  double fwd_s = 0;  ///< this step's forward (incl. broadcasts), backward, optimizer
  double bwd_s = 0;
  double opt_s = 0;
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
    DDPSIM_ASSERT(o.steps >= 1, "at least one step");
    DDPSIM_ASSERT(o.jitter_cv >= 0 && o.straggler_slowdown >= 0, "negative jitter or slowdown");
    DDPSIM_ASSERT(n_ >= 1, "at least one rank");
    DDPSIM_ASSERT(plan.layer_bwd_s.size() == plan.layer_fwd_s.size(), "layer times disagree");
    broadcast_ = to_sim_time(plan.buffer_broadcast_s);
    steady_ = collectives(false);
    first_ = collectives(true);
    ranks_.resize(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) {
      // seed_seq mixes (seed, rank) so rank r's samples depend on nothing else.
      std::seed_seq seq{static_cast<std::uint32_t>(o.seed),
                        static_cast<std::uint32_t>(o.seed >> 32), static_cast<std::uint32_t>(r)};
      ranks_[static_cast<std::size_t>(r)].rng.seed(seq);
      if (r == o.straggler_rank) ranks_[static_cast<std::size_t>(r)].factor += o.straggler_slowdown;
    }
    const auto steps = static_cast<std::size_t>(o.steps);
    step_end_.assign(steps, SimTime(0));
    opt_done_.assign(steps, 0);
    compute_end_.assign(steps, std::vector<SimTime>(static_cast<std::size_t>(n_)));
    if (o.jitter_distribution == model::JitterDistribution::kLogNormal && o.jitter_cv > 0) {
      const double s2 = std::log1p(o.jitter_cv * o.jitter_cv);
      ln_sigma_ = std::sqrt(s2);
      ln_mu_ = -0.5 * s2;
    }
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
      out.push_back(c);
    }
    if (plan_.used_map_allreduce_s > 0) {
      PlannedCollective c;
      c.duration = to_sim_time(plan_.used_map_allreduce_s);
      c.name = "allreduce local_used_map";
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
    comm_busy_ = false;
    if (cs.empty()) {
      // Nothing to reduce (no gradients): this step and, as every later step has the same
      // plan, all later ones are done with communication.
      comm_done_through_ = o_.steps - 1;
      done_step_ = o_.steps - 1;
      done_states_.clear();
    }
  }

  double jitter(RankState& rs) {
    if (o_.jitter_cv <= 0) return 1.0;
    const double z = rs.normal(rs.rng);
    if (o_.jitter_distribution == model::JitterDistribution::kLogNormal) {
      return std::exp(ln_mu_ + ln_sigma_ * z);
    }
    // Clipped so that a rare draw below -1/cv cannot make a kernel take no time (or less).
    return std::max(0.05, 1.0 + o_.jitter_cv * z);
  }

  // A kernel that starts while a collective is in flight on the communication stream runs
  // o_.interference times slower (SM and memory-bandwidth sharing with the NCCL kernels).
  SimTime compute_time(RankState& rs, double nominal_s) {
    const double slow = comm_busy_ ? o_.interference : 1.0;
    return to_sim_time(nominal_s * rs.factor * slow * jitter(rs));
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

  void run_forward_layer(int r) {
    RankState& rs = rank(r);
    const auto l = static_cast<std::size_t>(rs.layer);
    const SimTime d = compute_time(rs, plan_.layer_fwd_s[l]);
    rs.fwd_s += to_seconds(d);
    if (traced(r)) {
      const std::string& name = layer_name(l);
      span(r, Stream::kCompute, rs.step, "fwd " + name, name, -1, engine_.now(), engine_.now() + d);
    }
    engine_.schedule_in(
        d,
        [this, r] {
          RankState& s = rank(r);
          if (++s.layer < layers_) {
            run_forward_layer(r);
          } else {
            s.layer = layers_ - 1;
            run_backward_layer(r);
          }
        },
        "forward");
  }

  void run_backward_layer(int r) {
    RankState& rs = rank(r);
    const auto l = static_cast<std::size_t>(rs.layer);
    const SimTime d = compute_time(rs, plan_.layer_bwd_s[l]);
    rs.bwd_s += to_seconds(d);
    if (traced(r)) {
      const std::string& name = layer_name(l);
      span(r, Stream::kCompute, rs.step, "bwd " + name, name, -1, engine_.now(), engine_.now() + d);
    }
    engine_.schedule_in(
        d,
        [this, r] {
          RankState& s = rank(r);
          const int layer = s.layer;
          if (s.micro_batch + 1 == plan_.grad_accumulation) backward_done(s.step, layer);
          if (layer > 0) {
            --s.layer;
            run_backward_layer(r);
          } else {
            end_backward(r);
          }
        },
        "backward");
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

  void try_launch() {
    const auto& cs = current();
    if (comm_busy_ || next_ >= cs.size() || state_[next_].gated < n_) return;
    comm_busy_ = true;
    state_[next_].start = engine_.now();
    engine_.schedule_in(
        cs[next_].duration, [this] { end_collective(); }, "collective");
  }

  void end_collective() {
    const auto& cs = current();
    CollectiveState& st = state_[next_];
    st.end = engine_.now();
    if (o_.record_timeline) {
      for (int q = 0; q < n_; ++q) {
        if (traced(q)) {
          span(q, Stream::kComm, comm_step_, cs[next_].name, "", cs[next_].bytes, st.start, st.end);
        }
      }
    }
    comm_busy_ = false;
    ++next_;
    if (next_ < cs.size()) {
      try_launch();
      return;
    }
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
        start_optimizer(q);
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
      start_optimizer(r);
    } else {
      rs.waiting_for_comm = true;
    }
  }

  void start_optimizer(int r) {
    RankState& rs = rank(r);
    const SimTime d = compute_time(rs, plan_.optimizer_s);
    rs.opt_s = to_seconds(d);
    if (traced(r)) {
      span(r, Stream::kCompute, rs.step, "optimizer", "", -1, engine_.now(), engine_.now() + d);
    }
    engine_.schedule_in(
        d, [this, r] { end_optimizer(r); }, "optimizer");
  }

  void end_optimizer(int r) {
    RankState& rs = rank(r);
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
      out.comm_time_s += to_seconds(cs[i].duration);
      if (cs[i].bucket < 0) continue;
      BucketTiming bt = plan_.buckets[static_cast<std::size_t>(cs[i].bucket)].cost;
      bt.ready_s = to_seconds(st.ready_max - last_start);
      bt.start_s = to_seconds(st.start - last_start);
      bt.end_s = to_seconds(st.end - last_start);
      out.buckets.push_back(bt);
    }
    out.exposed_comm_s = std::max(0.0, to_seconds(comm_end_ - slowest_end));

    if (o_.record_timeline) out.timeline = std::move(timeline_);
    return out;
  }

  const StepPlan& plan_;
  const EventOptions& o_;
  const int extra_traced_;
  const int n_;
  const int layers_;
  Engine engine_;
  SimTime broadcast_{0};
  std::vector<PlannedCollective> steady_, first_;
  std::vector<RankState> ranks_;
  double ln_mu_ = 0, ln_sigma_ = 0;
  int barrier_ = 0;
  // The gradient phase of step comm_step_.
  int comm_step_ = 0;
  std::vector<CollectiveState> state_;
  std::vector<std::vector<int>> gates_, readies_;  ///< per layer: collective indices
  std::size_t next_ = 0;
  bool comm_busy_ = false;
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

// A sharded strategy's steps (StepPlan::schedule, simulator/sharded.hpp). Every rank runs its
// compute ops in order (per micro-batch the forward layers, then the backward layers in
// reverse; then the optimizer); op g starts once the previous op has ended and every collective
// that blocks g has ended. The collectives of the step (expand_schedule) run on one FIFO
// communication stream: each launches once every rank has arrived at its gate op and the
// previous one has ended. The step ends on a rank when its optimizer and the collectives that
// block the step end (ZeRO-1/2's parameter all-gather) have ended. Jitter, stragglers and the
// timeline follow DpModel.
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
    DDPSIM_ASSERT(o.steps >= 1, "at least one step");
    DDPSIM_ASSERT(o.jitter_cv >= 0 && o.straggler_slowdown >= 0, "negative jitter or slowdown");
    DDPSIM_ASSERT(n_ >= 1, "at least one rank");
    DDPSIM_ASSERT(plan.layer_bwd_s.size() == plan.layer_fwd_s.size(), "layer times disagree");
    DDPSIM_ASSERT(plan.buffer_broadcast_s == 0, "a sharded plan with a buffer broadcast");
    const std::size_t ops = static_cast<std::size_t>(end_) + 1;
    max_blocker_.assign(ops, -1);
    gated_.assign(ops, {});
    for (std::size_t i = 0; i < inst_.size(); ++i) {
      const ScheduleInstance& in = inst_[i];
      DDPSIM_ASSERT(in.gate >= 0 && in.gate <= in.block && in.block <= end_, "bad instance");
      max_blocker_[static_cast<std::size_t>(in.block)] = static_cast<int>(i);
      gated_[static_cast<std::size_t>(in.gate)].push_back(static_cast<int>(i));
      duration_.push_back(
          to_sim_time(plan.schedule[static_cast<std::size_t>(in.index)].duration_s()));
    }
    ranks_.resize(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) {
      std::seed_seq seq{static_cast<std::uint32_t>(o.seed),
                        static_cast<std::uint32_t>(o.seed >> 32), static_cast<std::uint32_t>(r)};
      ranks_[static_cast<std::size_t>(r)].rng.seed(seq);
      if (r == o.straggler_rank) ranks_[static_cast<std::size_t>(r)].factor += o.straggler_slowdown;
    }
    const auto steps = static_cast<std::size_t>(o.steps);
    step_end_.assign(steps, SimTime(0));
    opt_done_.assign(steps, 0);
    compute_end_.assign(steps, std::vector<SimTime>(static_cast<std::size_t>(n_)));
    last_.assign(static_cast<std::size_t>(n_), {0.0, 0.0, 0.0});
    if (o.jitter_distribution == model::JitterDistribution::kLogNormal && o.jitter_cv > 0) {
      const double s2 = std::log1p(o.jitter_cv * o.jitter_cv);
      ln_sigma_ = std::sqrt(s2);
      ln_mu_ = -0.5 * s2;
    }
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
    double j = 1.0;
    if (o_.jitter_cv > 0) {
      const double z = rs.normal(rs.rng);
      j = o_.jitter_distribution == model::JitterDistribution::kLogNormal
              ? std::exp(ln_mu_ + ln_sigma_ * z)
              : std::max(0.05, 1.0 + o_.jitter_cv * z);
    }
    // As DpModel: slower while a collective is in flight (EventOptions::interference).
    const double slow = busy_ ? o_.interference : 1.0;
    return to_sim_time(nominal_s * rs.factor * slow * j);
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
    next_ = 0;
    ended_through_ = -1;
    busy_ = false;
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
           max_blocker_[static_cast<std::size_t>(g)] > ended_through_;
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
    if (busy_ || next_ >= inst_.size() || arrived_[next_] < n_) return;
    busy_ = true;
    start_[next_] = engine_.now();
    engine_.schedule_in(
        duration_[next_], [this] { end_collective(); }, "collective");
  }

  void end_collective() {
    finish_[next_] = engine_.now();
    if (o_.record_timeline) {
      const ScheduledCollective& c = plan_.schedule[static_cast<std::size_t>(inst_[next_].index)];
      for (int q = 0; q < n_; ++q) {
        if (traced(q)) {
          timeline_.push_back(Span{q, Stream::kComm, comm_step_, c.name, "", c.cost.bytes,
                                   start_[next_], finish_[next_]});
        }
      }
    }
    ended_through_ = static_cast<int>(next_);
    busy_ = false;
    ++next_;
    if (next_ == inst_.size()) {
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
  std::vector<SimTime> duration_;        ///< per instance
  std::vector<int> max_blocker_;         ///< per op: the last instance blocking it, or -1
  std::vector<std::vector<int>> gated_;  ///< per op: instances gated there
  Engine engine_;
  std::vector<RankState> ranks_;
  double ln_mu_ = 0, ln_sigma_ = 0;
  // The communication of step comm_step_.
  int comm_step_ = 0;
  std::vector<int> arrived_;
  std::vector<SimTime> ready_, start_, finish_;
  std::size_t next_ = 0;
  int ended_through_ = -1;
  bool busy_ = false;
  std::vector<SimTime> done_ready_, done_start_, done_finish_;
  int done_step_ = -1;
  // Per step / rank.
  std::vector<SimTime> step_end_;
  std::vector<int> opt_done_;
  std::vector<std::vector<SimTime>> compute_end_;
  std::vector<std::array<double, 3>> last_;
  std::vector<Span> timeline_;
};

// Local SGD and stale-synchronous parallel on DDP plans (event_dp.hpp, "Relaxed
// synchronisation"). Each rank runs its steps' compute in order; the only collectives are the
// parameter average every local_sgd_period steps (local SGD) or each rank's own gradient exchange
// (SSP), both lasting exchange_ = the sum of the plan's bucket durations.
class RelaxedModel {
 public:
  RelaxedModel(const StepPlan& plan, const EventOptions& o, int extra_traced_rank = -1)
      : plan_(plan),
        o_(o),
        extra_traced_(extra_traced_rank),
        n_(plan.gpus),
        layers_(static_cast<int>(plan.layer_fwd_s.size())),
        ssp_(o.staleness > 0) {
    DDPSIM_ASSERT(o.steps >= 1, "at least one step");
    DDPSIM_ASSERT(o.jitter_cv >= 0 && o.straggler_slowdown >= 0, "negative jitter or slowdown");
    DDPSIM_ASSERT(n_ >= 1, "at least one rank");
    DDPSIM_ASSERT(plan.layer_bwd_s.size() == plan.layer_fwd_s.size(), "layer times disagree");
    DDPSIM_ASSERT(o.local_sgd_period >= 1 && o.staleness >= 0, "bad period or staleness");
    DDPSIM_ASSERT(!(ssp_ && o.local_sgd_period > 1), "local SGD and SSP together");
    DDPSIM_ASSERT(!model::is_sharded(plan.strategy), "relaxed synchronisation needs DDP");
    for (const PlannedBucket& b : plan.buckets) {
      exchange_ += to_sim_time(b.duration_s());
      bytes_ += b.cost.bytes;
    }
    broadcast_ = ssp_ ? SimTime(0) : to_sim_time(plan.buffer_broadcast_s);
    ranks_.resize(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) {
      std::seed_seq seq{static_cast<std::uint32_t>(o.seed),
                        static_cast<std::uint32_t>(o.seed >> 32), static_cast<std::uint32_t>(r)};
      ranks_[static_cast<std::size_t>(r)].rng.seed(seq);
      if (r == o.straggler_rank) ranks_[static_cast<std::size_t>(r)].factor += o.straggler_slowdown;
    }
    const auto steps = static_cast<std::size_t>(o.steps);
    step_end_.assign(steps, SimTime(0));
    opt_done_.assign(steps, 0);
    synced_.assign(steps, 0);
    exchanged_.assign(steps, 0);
    compute_end_.assign(steps, std::vector<SimTime>(static_cast<std::size_t>(n_)));
    comm_free_.assign(static_cast<std::size_t>(n_), SimTime(0));
    last_.assign(static_cast<std::size_t>(n_), {0.0, 0.0, 0.0});
    if (o.jitter_distribution == model::JitterDistribution::kLogNormal && o.jitter_cv > 0) {
      const double s2 = std::log1p(o.jitter_cv * o.jitter_cv);
      ln_sigma_ = std::sqrt(s2);
      ln_mu_ = -0.5 * s2;
    }
    engine_.set_observer(o.observer);
  }

  EventResult run() {
    for (int r = 0; r < n_; ++r) start_step(r);
    engine_.run();
    return result();
  }

 private:
  RankState& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }

  bool traced(int r) const {
    return o_.record_timeline &&
           (o_.timeline_max_ranks <= 0 || r < o_.timeline_max_ranks || r == extra_traced_);
  }

  bool sync_step(int step) const { return !ssp_ && (step + 1) % o_.local_sgd_period == 0; }

  SimTime compute_time(int r, double nominal_s) {
    RankState& rs = rank(r);
    double j = 1.0;
    if (o_.jitter_cv > 0) {
      const double z = rs.normal(rs.rng);
      j = o_.jitter_distribution == model::JitterDistribution::kLogNormal
              ? std::exp(ln_mu_ + ln_sigma_ * z)
              : std::max(0.05, 1.0 + o_.jitter_cv * z);
    }
    // As DpModel; only SSP overlaps a rank's compute with its own exchange.
    const double slow =
        comm_free_[static_cast<std::size_t>(r)] > engine_.now() ? o_.interference : 1.0;
    return to_sim_time(nominal_s * rs.factor * slow * j);
  }

  const std::string& layer_name(std::size_t l) const {
    static const std::string unnamed = "layer";
    return plan_.workload && l < plan_.workload->layers.size() ? plan_.workload->layers[l].name
                                                               : unnamed;
  }

  // SSP: step k may start once every rank's exchange of step k - s - 1 has ended.
  bool may_start(const RankState& rs) const {
    if (!ssp_) return true;
    const int need = rs.step - o_.staleness - 1;
    return need < 0 || exchanged_[static_cast<std::size_t>(need)] == n_;
  }

  void start_step(int r) {
    RankState& rs = rank(r);
    if (!may_start(rs)) {
      rs.waiting_for_comm = true;
      return;
    }
    rs.fwd_s = rs.bwd_s = rs.opt_s = 0;
    rs.micro_batch = 0;
    start_micro_batch(r);
  }

  void start_micro_batch(int r) {
    if (broadcast_ > SimTime::zero()) {
      // Every rank broadcasts before every forward in the same order, so the n-th arrival
      // completes the matching broadcast of all of them.
      waiting_broadcast_.push_back(r);
      if (static_cast<int>(waiting_broadcast_.size()) < n_) return;
      std::vector<int> all;
      all.swap(waiting_broadcast_);
      const SimTime start = engine_.now();
      engine_.schedule_in(
          broadcast_,
          [this, all, start] {
            for (int q : all) {
              rank(q).fwd_s += to_seconds(broadcast_);
              if (traced(q)) {
                timeline_.push_back(Span{q, Stream::kComm, rank(q).step, "broadcast buffers", "",
                                         -1, start, engine_.now()});
              }
              run_layer(q, 0, true);
            }
          },
          "broadcast");
      return;
    }
    run_layer(r, 0, true);
  }

  void run_layer(int r, int layer, bool forward) {
    if (layers_ == 0) {
      end_backward(r);
      return;
    }
    RankState& rs = rank(r);
    const auto l = static_cast<std::size_t>(layer);
    const SimTime d = compute_time(r, forward ? plan_.layer_fwd_s[l] : plan_.layer_bwd_s[l]);
    (forward ? rs.fwd_s : rs.bwd_s) += to_seconds(d);
    if (traced(r)) {
      const std::string& name = layer_name(l);
      timeline_.push_back(Span{r, Stream::kCompute, rs.step, (forward ? "fwd " : "bwd ") + name,
                               name, -1, engine_.now(), engine_.now() + d});
    }
    engine_.schedule_in(
        d,
        [this, r, layer, forward] {
          if (forward && layer + 1 < layers_) {
            run_layer(r, layer + 1, true);
          } else if (forward) {
            run_layer(r, layers_ - 1, false);
          } else if (layer > 0) {
            run_layer(r, layer - 1, false);
          } else {
            end_backward(r);
          }
        },
        forward ? "forward" : "backward");
  }

  void end_backward(int r) {
    RankState& rs = rank(r);
    if (rs.micro_batch + 1 < plan_.grad_accumulation) {
      ++rs.micro_batch;
      start_micro_batch(r);
      return;
    }
    rs.bwd_end = engine_.now();
    compute_end_[static_cast<std::size_t>(rs.step)][static_cast<std::size_t>(r)] = rs.bwd_end;
    if (ssp_) send_exchange(r, rs.step);
    const SimTime d = compute_time(r, plan_.optimizer_s);
    rs.opt_s = to_seconds(d);
    if (traced(r)) {
      timeline_.push_back(Span{r, Stream::kCompute, rs.step, "optimizer", "", -1, engine_.now(),
                               engine_.now() + d});
    }
    engine_.schedule_in(
        d, [this, r] { end_optimizer(r); }, "optimizer");
  }

  // SSP: the rank's gradients of `step` go out on its communication stream (FIFO).
  void send_exchange(int r, int step) {
    auto& free = comm_free_[static_cast<std::size_t>(r)];
    const SimTime start = std::max(engine_.now(), free);
    free = start + exchange_;
    if (traced(r)) {
      timeline_.push_back(
          Span{r, Stream::kComm, step, "gradient exchange", "", bytes_, start, free});
    }
    engine_.schedule(
        free,
        [this, step] {
          if (++exchanged_[static_cast<std::size_t>(step)] < n_) return;
          for (int q = 0; q < n_; ++q) {
            if (rank(q).waiting_for_comm) {
              rank(q).waiting_for_comm = false;
              start_step(q);
            }
          }
        },
        "exchange");
  }

  void end_optimizer(int r) {
    RankState& rs = rank(r);
    if (!sync_step(rs.step)) {
      end_step(r);
      return;
    }
    // Local SGD's parameter average: one all-reduce once the last rank's optimizer has ended.
    const auto s = static_cast<std::size_t>(rs.step);
    if (++synced_[s] < n_) return;
    const SimTime start = engine_.now();
    const int step = rs.step;
    engine_.schedule_in(
        exchange_,
        [this, start, step] {
          for (int q = 0; q < n_; ++q) {
            if (traced(q)) {
              timeline_.push_back(Span{q, Stream::kComm, step, "allreduce parameters", "", bytes_,
                                       start, engine_.now()});
            }
          }
          for (int q = 0; q < n_; ++q) end_step(q);
        },
        "collective");
  }

  void end_step(int r) {
    RankState& rs = rank(r);
    const auto s = static_cast<std::size_t>(rs.step);
    step_end_[s] = std::max(step_end_[s], engine_.now());
    if (rs.step + 1 == o_.steps)
      last_[static_cast<std::size_t>(r)] = {rs.fwd_s, rs.bwd_s, rs.opt_s};
    if (++opt_done_[s] == n_) engine_.report_progress(static_cast<double>(s + 1) / o_.steps);
    if (rs.step + 1 < o_.steps) {
      ++rs.step;
      start_step(r);
    }
  }

  EventResult result() {
    EventResult out;
    out.ranks = n_;
    out.events_processed = engine_.events_processed();
    out.end_time = engine_.now();
    fill_step_statistics(out, n_, opt_done_, step_end_, compute_end_, last_);
    const auto& lf = last_[static_cast<std::size_t>(out.slowest_rank)];
    // The last step's collectives: SSP's exchange, or the average when that step syncs.
    if (ssp_ || sync_step(o_.steps - 1)) out.comm_time_s = to_seconds(exchange_);
    out.exposed_comm_s = std::max(0.0, out.step_time_s.back() - lf[0] - lf[1] - lf[2]);
    if (o_.record_timeline) out.timeline = std::move(timeline_);
    return out;
  }

  const StepPlan& plan_;
  const EventOptions& o_;
  const int extra_traced_;
  const int n_;
  const int layers_;
  const bool ssp_;
  SimTime exchange_{0};
  std::int64_t bytes_ = 0;
  SimTime broadcast_{0};
  Engine engine_;
  std::vector<RankState> ranks_;
  double ln_mu_ = 0, ln_sigma_ = 0;
  std::vector<int> waiting_broadcast_;
  std::vector<SimTime> comm_free_;  ///< per rank: when its communication stream is free (SSP)
  std::vector<SimTime> step_end_;
  std::vector<int> opt_done_, synced_, exchanged_;  ///< per step: ranks done / averaging / sent
  std::vector<std::vector<SimTime>> compute_end_;
  std::vector<std::array<double, 3>> last_;
  std::vector<Span> timeline_;
};

// Without jitter and without a straggler every rank does the same thing at the same time, so
// one rank stands for all: the collectives' durations are already costed for plan.gpus ranks,
// and the per-rank results are copies. This makes the symmetric case O(events of one rank)
// instead of O(ranks x events).
bool symmetric(const StepPlan& plan, const EventOptions& o) {
  const bool straggler =
      o.straggler_rank >= 0 && o.straggler_rank < plan.gpus && o.straggler_slowdown > 0;
  return plan.gpus > 1 && o.jitter_cv == 0 && !straggler;
}

EventResult widen(EventResult one, const EventOptions& o, int ranks) {
  one.ranks = ranks;
  for (auto& v : one.compute_end_s) v.assign(static_cast<std::size_t>(ranks), v.at(0));
  if (o.record_timeline) {
    const int shown = o.timeline_max_ranks > 0 ? std::min(ranks, o.timeline_max_ranks) : ranks;
    std::vector<Span> all;
    all.reserve(one.timeline.size() * static_cast<std::size_t>(shown));
    for (int r = 0; r < shown; ++r) {
      for (Span sp : one.timeline) {
        sp.rank = r;
        all.push_back(sp);
      }
    }
    one.timeline = std::move(all);
  }
  return one;
}

template <class Model>
EventResult run_model(const StepPlan& plan, const EventOptions& opts) {
  DDPSIM_ASSERT(opts.interference >= 1.0, "interference factor below 1");
  if (symmetric(plan, opts)) {
    StepPlan one = plan;
    one.gpus = 1;
    EventOptions o1 = opts;
    o1.straggler_rank = -1;
    EventResult r = Model(one, o1).run();
    return widen(std::move(r), opts, plan.gpus);
  }
  if (opts.record_timeline && opts.timeline_max_ranks > 0 && plan.gpus > opts.timeline_max_ranks) {
    // The slowest rank is known only at the end: find it with a run that records nothing (runs
    // are deterministic, so the second one is identical), then record only the ranks kept.
    EventOptions quiet = opts;
    quiet.record_timeline = false;
    quiet.observer = nullptr;
    const int slowest = Model(plan, quiet).run().slowest_rank;
    return Model(plan, opts, slowest).run();
  }
  return Model(plan, opts).run();
}

}  // namespace

EventResult simulate_event(const StepPlan& plan, const EventOptions& opts) {
  if (opts.local_sgd_period > 1 || opts.staleness > 0) return run_model<RelaxedModel>(plan, opts);
  return model::is_sharded(plan.strategy) ? run_model<ShardedModel>(plan, opts)
                                          : run_model<DpModel>(plan, opts);
}

void apply_event_result(Prediction& p, const EventResult& r, const EventOptions& opts) {
  DDPSIM_ASSERT(r.mean_step_time_s > 0, "an event result without a step time");
  const double ratio = p.step_time_s / r.mean_step_time_s;  // analytic / event
  p.step_time_s = r.mean_step_time_s;
  if (opts.steps > 1 || opts.jitter_cv > 0) {
    p.p50_step_time_s = r.p50_step_time_s;
    p.p99_step_time_s = r.p99_step_time_s;
    p.p95_step_time_s = r.p95_step_time_s;
  } else {
    p.p50_step_time_s.reset();
    p.p99_step_time_s.reset();
    p.p95_step_time_s.reset();
  }
  p.forward_time_s = r.forward_time_s;
  p.backward_time_s = r.backward_time_s;
  p.optimizer_time_s = r.optimizer_time_s;
  p.comm_time_s = r.comm_time_s;
  p.exposed_comm_s = r.exposed_comm_s;
  p.buckets = r.buckets;
  // Everything below is (something fixed) / step time or x step time.
  p.throughput_samples_per_s = static_cast<double>(p.global_batch) / p.step_time_s;
  p.weak_scaling_efficiency *= ratio;
  p.strong_scaling_efficiency *= ratio;
  if (p.time_to_train_s) *p.time_to_train_s /= ratio;
  if (p.gpu_hours) *p.gpu_hours /= ratio;
  if (p.cost_usd) *p.cost_usd /= ratio;
  std::string w = "engine event: step timings from the event-driven simulator (" +
                  std::to_string(opts.steps) + " steps, " + std::to_string(r.ranks) + " ranks, " +
                  std::to_string(r.events_processed) +
                  " events); memory, lr and first_step_time_s from the analytic model";
  p.warnings.push_back(std::move(w));
  if (opts.local_sgd_period > 1 || opts.staleness > 0) {
    // The step time is simulated; how many more steps the relaxed synchronisation needs to
    // reach the same quality is not (Lin et al. 2020 and Ho et al. 2013 measure it per task).
    const std::string mode =
        opts.local_sgd_period > 1
            ? "local SGD (period " + std::to_string(opts.local_sgd_period) + ")"
            : "stale-synchronous (staleness " + std::to_string(opts.staleness) + ")";
    if (opts.target_steps_multiplier) {
      const double m = *opts.target_steps_multiplier;
      if (p.time_to_train_s) *p.time_to_train_s *= m;
      if (p.gpu_hours) *p.gpu_hours *= m;
      if (p.cost_usd) *p.cost_usd *= m;
      p.warnings.push_back(mode + ": time to train uses training.target.steps_multiplier " +
                           fmt::format("{}", m) + " (user-given)");
    } else {
      p.time_to_train_s.reset();
      p.gpu_hours.reset();
      p.cost_usd.reset();
      p.warnings.push_back(mode +
                           ": step time only; its convergence penalty is not modelled "
                           "(give training.target.steps_multiplier for a time to train)");
    }
    if (opts.local_sgd_period > 1 && opts.steps % opts.local_sgd_period != 0) {
      p.warnings.push_back(
          "simulation.steps is not a multiple of local_sgd_period: the mean "
          "step time over-weights steps without the parameter average");
    }
  }
}

}  // namespace ddpsim::sim
