// Local SGD and stale-synchronous steps on the event engine (RelaxedModel; contract:
// simulator/event/simulate.hpp).
#include "simulator/event/detail/relaxed_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "model/error.hpp"
#include "simulator/event/detail/model_common.hpp"

namespace ddpsim::sim::event_detail {

namespace {

// Local SGD and stale-synchronous parallel on DDP plans (simulate.hpp, "Relaxed
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
    check_plan(plan, o);
    DDPSIM_ASSERT(o.local_sgd_period >= 1 && o.staleness >= 0, "bad period or staleness");
    DDPSIM_ASSERT(!(ssp_ && o.local_sgd_period > 1), "local SGD and SSP together");
    DDPSIM_ASSERT(!model::is_sharded(plan.strategy), "relaxed synchronisation needs DDP");
    for (const PlannedBucket& b : plan.buckets) {
      exchange_ += to_sim_time(b.duration_s());
      bytes_ += b.cost.bytes;
    }
    broadcast_ = ssp_ ? SimTime(0) : to_sim_time(plan.buffer_broadcast_s);
    ranks_ = seeded_ranks(o, n_);
    const auto steps = static_cast<std::size_t>(o.steps);
    step_end_.assign(steps, SimTime(0));
    opt_done_.assign(steps, 0);
    synced_.assign(steps, 0);
    exchanged_.assign(steps, 0);
    compute_end_.assign(steps, std::vector<SimTime>(static_cast<std::size_t>(n_)));
    comm_free_.assign(static_cast<std::size_t>(n_), SimTime(0));
    last_.assign(static_cast<std::size_t>(n_), {0.0, 0.0, 0.0});
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
    const double j = jitter_(rs);
    // As DpModel; only SSP overlaps a rank's compute with its own exchange.
    const double slow =
        comm_free_[static_cast<std::size_t>(r)] > engine_.now() ? plan_.interference : 1.0;
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
  Jitter jitter_{o_};
  std::vector<int> waiting_broadcast_;
  std::vector<SimTime> comm_free_;  ///< per rank: when its communication stream is free (SSP)
  std::vector<SimTime> step_end_;
  std::vector<int> opt_done_, synced_, exchanged_;  ///< per step: ranks done / averaging / sent
  std::vector<std::vector<SimTime>> compute_end_;
  std::vector<std::array<double, 3>> last_;
  std::vector<Span> timeline_;
};

}  // namespace

EventResult run_relaxed(const StepPlan& plan, const EventOptions& opts) {
  return run_model<RelaxedModel>(plan, opts);
}

}  // namespace ddpsim::sim::event_detail
