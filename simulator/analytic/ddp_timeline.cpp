#include "simulator/analytic/ddp_timeline.hpp"

#include <algorithm>
#include <limits>

namespace ddpsim::sim {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The communication stream of one DDP step: buckets launched in order, up to
// StepPlan::comm_lanes in flight, each progressing at collective_rate (slowed while the backward
// computes beside it). Processor sharing: between two events (a compute segment or a collective
// ending) every rate is constant, so the layout advances from event to event.
class CommStream {
 public:
  CommStream(const StepPlan& sp, const std::vector<PlannedBucket>& buckets, DdpTimeline& tl)
      : sp_(sp), buckets_(buckets), tl_(tl), lanes_(std::max(1, sp.comm_lanes)) {
    tl_.buckets.reserve(buckets.size());
  }

  bool busy() const { return !flight_.empty(); }
  bool all_launched() const { return launched_ == buckets_.size(); }
  std::size_t launched() const { return launched_; }
  double last_end() const { return last_end_; }

  /// Bucket `launched()` is ready at `ready` (<= now): it starts now when a lane is free.
  void launch(double ready, double now) {
    const PlannedBucket& pb = buckets_[launched_++];
    BucketTiming& bt = tl_.buckets.emplace_back(pb.cost);  // in place: one copy per bucket
    bt.ready_s = ready;
    fill(now);
  }

  /// The compute's slowdown now: the largest of the collectives in flight, 1 when none is.
  double compute_factor() const {
    double f = 1;
    for (const Flight& x : flight_) f = std::max(f, x.compute_slowdown);
    return f;
  }

  /// Seconds until the first collective in flight ends at today's rates (infinity when none).
  double next_end(bool computing) const {
    double dt = kInfinity;
    for (const Flight& x : flight_) dt = std::min(dt, x.left / rate(x, computing));
    return dt;
  }

  /// Advances every collective in flight by `dt` seconds ending at `now`; those whose end falls
  /// there end, and waiting buckets take their lanes.
  void advance(double dt, bool computing, double now) {
    bool ended = false;
    for (Flight& x : flight_) {
      const double r = rate(x, computing);
      if (x.left / r <= dt * (1 + 1e-12)) {
        x.left = 0;
        end(x.bucket, now);
        ended = true;
      } else {
        x.left -= dt * r;
      }
    }
    if (!ended) return;
    std::erase_if(flight_, [](const Flight& x) { return x.left <= 0; });
    fill(now);
  }

 private:
  struct Flight {
    std::size_t bucket;
    double left;              ///< seconds of its time alone still to run
    double compute_slowdown;  ///< compute_slowdown_of its bucket
  };

  void end(std::size_t bucket, double now) {
    BucketTiming& bt = tl_.buckets[bucket];
    bt.end_s = now;
    tl_.comm_sum += bt.end_s - bt.start_s;
    last_end_ = std::max(last_end_, now);
  }

  double rate(const Flight& x, bool computing) const {
    return collective_rate(buckets_[x.bucket], static_cast<int>(flight_.size()), computing);
  }

  void fill(double now) {
    while (flight_.size() < lanes_ && started_ < launched_) {
      // The collectives in flight keep what they have done; the rates change from now.
      BucketTiming& bt = tl_.buckets[started_];
      bt.start_s = now;
      flight_.push_back({started_, buckets_[started_].duration_s(),
                         compute_slowdown_of(sp_, buckets_[started_])});
      ++started_;
    }
  }

  const StepPlan& sp_;
  const std::vector<PlannedBucket>& buckets_;
  DdpTimeline& tl_;
  const std::size_t lanes_;
  std::size_t launched_ = 0, started_ = 0;
  std::vector<Flight> flight_;
  double last_end_ = 0;
};

}  // namespace

namespace {

// One lane, every collective at rate 1 and every one slowing the compute by the plan's
// interference (NCCL on a GPU: the analytic engine's hot path). Then a collective's timing does
// not depend on the compute, and the processor sharing below reduces to a closed form: the
// stream is a FIFO (a bucket starts when it is launched and the previous one has ended) and a
// layer's backward runs interfered_s(work, the stream's busy time left, interference).
bool one_lane_closed_form(const StepPlan& sp, const std::vector<PlannedBucket>& buckets) {
  if (std::max(1, sp.comm_lanes) != 1) return false;
  return std::all_of(buckets.begin(), buckets.end(), [&](const PlannedBucket& b) {
    return b.collective_slowdown == 1.0 && compute_slowdown_of(sp, b) == sp.interference;
  });
}

void lay_out_one_lane(const StepPlan& sp, double f, const std::vector<PlannedBucket>& buckets,
                      double bwd_start, bool copies, DdpTimeline& tl) {
  const std::size_t nl = sp.layer_bwd_s.size();
  tl.comm_free = sp.overlap ? 0.0 : kInfinity;
  tl.buckets.reserve(buckets.size());
  std::size_t next = 0;
  // finalize_backward's chain, f = max(f, end_b) + copy_out_b from f = bwd_end, folded into the
  // launches: from -inf it gives max_b (end_b + the copies from b on); the bwd_end term
  // (bwd_end + every copy) is added once the backward's end is known.
  double chain = -kInfinity;
  const auto launch = [&](double ready) {
    const PlannedBucket& pb = buckets[next++];
    BucketTiming& bt = tl.buckets.emplace_back(pb.cost);  // in place: one copy per bucket
    bt.ready_s = ready;
    bt.start_s = std::max(bt.ready_s, tl.comm_free);
    bt.end_s = bt.start_s + pb.duration_s();
    tl.comm_free = bt.end_s;
    tl.comm_sum += pb.duration_s();
    chain = std::max(chain, bt.end_s) + pb.copy_out_s;
    tl.copy_out += pb.copy_out_s;
  };
  std::vector<double> layer_end(nl, bwd_start);  // when each layer's backward (and copy) ends
  double t = bwd_start, copy_in = 0, slowed = 0;
  for (std::size_t i = nl; i-- > 0;) {
    const double nominal = f * sp.layer_bwd_s[i];
    const double d =
        sp.overlap ? interfered_s(nominal, tl.comm_free - t, sp.interference) : nominal;
    slowed += d - nominal;
    const double c = copies ? sp.layer_grad_copy_s[i] : 0.0;
    t += d + c;
    copy_in += c;
    layer_end[i] = t;
    if (sp.overlap) {
      while (next < buckets.size() && static_cast<std::size_t>(buckets[next].ready_layer) >= i) {
        launch(layer_end[static_cast<std::size_t>(buckets[next].ready_layer)]);
      }
    }
  }
  tl.bwd_end = t;
  tl.copy_in = copy_in;
  tl.slowed = slowed;
  if (!sp.overlap) tl.comm_free = tl.bwd_end;
  while (next < buckets.size())
    launch(layer_end[static_cast<std::size_t>(buckets[next].ready_layer)]);
  if (buckets.empty()) tl.comm_free = sp.overlap ? 0.0 : tl.bwd_end;
  tl.finalize_end = std::max(chain, tl.bwd_end + tl.copy_out);
}

// The general case: processor sharing event to event.
void lay_out_shared(const StepPlan& sp, double f, const std::vector<PlannedBucket>& buckets,
                    double bwd_start, bool copies, DdpTimeline& tl) {
  const std::size_t nl = sp.layer_bwd_s.size();
  CommStream comm(sp, buckets, tl);
  double t = bwd_start;
  // Runs `work` seconds of compute from t; returns how long it took.
  const auto compute = [&](double work, bool slowable) {
    const double begin = t;
    while (work > 0) {
      if (!comm.busy()) {  // nothing in flight: the work runs at full speed
        t += work;
        break;
      }
      const double factor = slowable ? comm.compute_factor() : 1.0;
      const double dc = work * factor;
      const double db = comm.next_end(slowable);
      const double dt = dc <= db ? dc : db;
      work = dc <= db ? 0.0 : work - db / factor;
      t += dt;
      comm.advance(dt, slowable, t);
    }
    return t - begin;
  };
  std::vector<double> layer_end(nl, bwd_start);  // when each layer's backward (and copy) ends
  double copy_in = 0, slowed = 0;
  for (std::size_t i = nl; i-- > 0;) {
    const double nominal = f * sp.layer_bwd_s[i];
    slowed += compute(nominal, sp.overlap) - nominal;
    const double c = copies ? sp.layer_grad_copy_s[i] : 0.0;
    compute(c, false);
    copy_in += c;
    layer_end[i] = t;
    if (sp.overlap) {
      while (!comm.all_launched() &&
             static_cast<std::size_t>(buckets[comm.launched()].ready_layer) >= i) {
        comm.launch(layer_end[static_cast<std::size_t>(buckets[comm.launched()].ready_layer)], t);
      }
    }
  }
  tl.bwd_end = t;
  tl.copy_in = copy_in;
  tl.slowed = slowed;
  while (!comm.all_launched()) {
    comm.launch(layer_end[static_cast<std::size_t>(buckets[comm.launched()].ready_layer)], t);
  }
  while (comm.busy()) {  // the backward is done: nothing computes beside the rest
    const double dt = comm.next_end(false);
    t += dt;
    comm.advance(dt, false, t);
  }
  tl.comm_free = buckets.empty() ? (sp.overlap ? 0.0 : tl.bwd_end) : comm.last_end();
}

}  // namespace

DdpTimeline ddp_timeline(const StepPlan& sp, double f, const std::vector<PlannedBucket>& buckets) {
  const int k = sp.grad_accumulation;
  double fwd_total = 0, bwd_total = 0;
  for (double t : sp.layer_fwd_s) fwd_total += t;
  for (double t : sp.layer_bwd_s) bwd_total += t;
  const std::size_t nl = sp.layer_bwd_s.size();
  const bool copies = sp.layer_grad_copy_s.size() == nl;
  DdpTimeline tl;
  tl.fwd_mb = f * fwd_total + sp.buffer_broadcast_s;
  tl.bwd_mb = f * bwd_total;
  // Backward of the last micro-batch starts here and runs from the last layer down; each
  // layer's gradients are copied into their buckets as they are produced (on the compute
  // stream, not jittered), and a bucket's collective is launched, in bucket order, once its
  // last gradient is in (ready_layer done); it starts when one of the stream's lanes is free.
  // While collectives are in flight the layer's compute runs their compute_slowdown slower and
  // they run their collective_slowdown slower (processor sharing, as the event engine lays it
  // out); the copies neither are slowed nor slow the collectives.
  const double bwd_start = (k - 1) * (tl.fwd_mb + tl.bwd_mb) + tl.fwd_mb;
  if (one_lane_closed_form(sp, buckets)) {
    lay_out_one_lane(sp, f, buckets, bwd_start, copies, tl);  // finalize_end folded in
  } else {
    lay_out_shared(sp, f, buckets, bwd_start, copies, tl);
    // finalize_backward: bucket by bucket, wait for its collective, then copy it back.
    tl.finalize_end = tl.bwd_end;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      tl.finalize_end = std::max(tl.finalize_end, tl.buckets[b].end_s) + buckets[b].copy_out_s;
      tl.copy_out += buckets[b].copy_out_s;
    }
  }
  if (sp.used_map_allreduce_s > 0) {
    tl.comm_free = std::max(tl.comm_free, tl.bwd_end) + sp.used_map_allreduce_s;
    tl.comm_sum += sp.used_map_allreduce_s;
  }
  return tl;
}

}  // namespace ddpsim::sim
