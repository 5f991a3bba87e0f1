#include "simulator/analytic/ddp_timeline.hpp"

#include <limits>

namespace ddpsim::sim {

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
  // stream, not jittered), and a bucket's collective is launched, in bucket order, when its
  // last gradient is in (ready_layer done) and the previous collective has ended. A layer runs
  // sp.interference times slower while a collective is in flight (interfered_s, as the event
  // engine does); the copies do not.
  const double bwd_start = (k - 1) * (tl.fwd_mb + tl.bwd_mb) + tl.fwd_mb;
  tl.comm_free = sp.overlap ? 0.0 : std::numeric_limits<double>::infinity();
  tl.buckets.reserve(buckets.size());
  std::size_t next = 0;
  auto launch = [&](double ready) {
    const PlannedBucket& pb = buckets[next++];
    BucketTiming& bt = tl.buckets.emplace_back(pb.cost);  // in place: one copy per bucket
    bt.ready_s = ready;
    bt.start_s = std::max(bt.ready_s, tl.comm_free);
    bt.end_s = bt.start_s + pb.duration_s();
    tl.comm_free = bt.end_s;
    tl.comm_sum += pb.duration_s();
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
  while (next < buckets.size()) {
    launch(layer_end[static_cast<std::size_t>(buckets[next].ready_layer)]);
  }
  // finalize_backward: bucket by bucket, wait for its collective, then copy it back.
  tl.finalize_end = tl.bwd_end;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    tl.finalize_end = std::max(tl.finalize_end, tl.buckets[b].end_s) + buckets[b].copy_out_s;
    tl.copy_out += buckets[b].copy_out_s;
  }
  if (sp.used_map_allreduce_s > 0) {
    tl.comm_free = std::max(tl.comm_free, tl.bwd_end) + sp.used_map_allreduce_s;
    tl.comm_sum += sp.used_map_allreduce_s;
  }
  return tl;
}

}  // namespace ddpsim::sim
