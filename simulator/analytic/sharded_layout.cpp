#include "simulator/analytic/sharded_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "model/error.hpp"

namespace ddpsim::sim {

std::vector<ScheduleInstance> expand_schedule(const StepPlan& sp) {
  const int L = static_cast<int>(sp.layer_fwd_s.size());
  const int per = micro_batch_end_op(L);
  const int k = sp.grad_accumulation;
  const int end = per * k + 1;
  std::vector<ScheduleInstance> out;
  std::vector<int> instance_of(sp.schedule.size(), -1);  // this micro-batch's, per entry
  auto after = [&](const ScheduledCollective& c) {
    if (c.after < 0) return -1;
    const int a = instance_of[static_cast<std::size_t>(c.after)];
    DDPSIM_ASSERT(a >= 0, "a collective after one that does not run before it");
    return a;
  };
  for (int m = 0; m < k; ++m) {
    std::fill(instance_of.begin(), instance_of.end(), -1);
    for (std::size_t i = 0; i < sp.schedule.size(); ++i) {
      const ScheduledCollective& c = sp.schedule[i];
      if (c.scope == CommScope::kAfterOptimizer) continue;
      if (c.scope == CommScope::kLastMicroBatch && m + 1 != k) continue;
      out.push_back(
          {static_cast<int>(i), m, m * per + c.gate_op, m * per + c.block_op, c.stream, after(c)});
      instance_of[i] = static_cast<int>(out.size()) - 1;
    }
  }
  std::fill(instance_of.begin(), instance_of.end(), -1);
  for (std::size_t i = 0; i < sp.schedule.size(); ++i) {
    const ScheduledCollective& c = sp.schedule[i];
    if (c.scope == CommScope::kAfterOptimizer) {
      out.push_back({static_cast<int>(i), -1, end, end, c.stream, after(c)});
      instance_of[i] = static_cast<int>(out.size()) - 1;
    }
  }
  return out;
}

void check_sharded_layout(const std::string& file, const StepPlan& sp) {
  const double k = sp.grad_accumulation;
  double per_micro_batch = 0, once = 0;
  for (const ScheduledCollective& c : sp.schedule) {
    (c.scope == CommScope::kEveryMicroBatch ? per_micro_batch : once) += 1;
  }
  const double collectives = k * per_micro_batch + once;
  const double slots = k * (2.0 * static_cast<double>(sp.layer_fwd_s.size()) + 1);
  if (collectives > kMaxStepCollectives || slots > kMaxStepComputeSlots) {
    throw InputError(
        file, "/training/grad_accumulation",
        fmt::format("a step of at most {:.0f} collective launches and {:.0f} compute slots, "
                    "every micro-batch laid out (lower training.grad_accumulation or raise "
                    "per_gpu_batch)",
                    kMaxStepCollectives, kMaxStepComputeSlots),
        fmt::format("{:.0f} micro-batches x {:.0f} collectives + {:.0f} = {:.3g} launches, "
                    "{:.3g} compute slots",
                    k, per_micro_batch, once, collectives, slots));
  }
}

ShardedTimeline sharded_timeline(const StepPlan& sp, double f) {
  const int L = static_cast<int>(sp.layer_fwd_s.size());
  const int per = micro_batch_end_op(L);
  const int k = sp.grad_accumulation;
  const int opt = per * k;
  const int end = opt + 1;
  const std::vector<ScheduleInstance> inst = expand_schedule(sp);
  ShardedTimeline out;
  out.collectives.reserve(inst.size());
  auto duration = [&](int g) {
    if (g == opt) return sp.optimizer_s;
    const int j = g % per;
    return f * (j < L ? sp.layer_fwd_s[static_cast<std::size_t>(j)]
                      : sp.layer_bwd_s[static_cast<std::size_t>(per - 1 - j)]);
  };
  std::vector<double> block_end(static_cast<std::size_t>(end) + 1, 0.0);
  double t = 0;
  std::array<double, kCommStreams> stream_free{};  // per communicator, FIFO
  double comm_free = 0;                            // the last end on any of them
  std::size_t ci = 0;
  for (int g = 0; g <= end; ++g) {
    // Every collective gated here launches in FIFO order once its stream is free (and the one
    // it must follow has ended).
    for (; ci < inst.size() && inst[ci].gate == g; ++ci) {
      const ScheduledCollective& c = sp.schedule[static_cast<std::size_t>(inst[ci].index)];
      DDPSIM_ASSERT(inst[ci].stream >= 0 && inst[ci].stream < kCommStreams, "bad stream");
      double& free = stream_free[static_cast<std::size_t>(inst[ci].stream)];
      BucketTiming bt = c.cost;
      bt.micro_batch = inst[ci].micro_batch;
      bt.ready_s = t;
      bt.start_s = std::max(t, free);
      if (inst[ci].after >= 0) {
        bt.start_s =
            std::max(bt.start_s, out.collectives[static_cast<std::size_t>(inst[ci].after)].end_s);
      }
      bt.end_s = bt.start_s + c.duration_s();
      free = bt.end_s;
      comm_free = std::max(comm_free, bt.end_s);
      out.comm_sum_s += c.duration_s();
      auto& b = block_end[static_cast<std::size_t>(inst[ci].block)];
      b = std::max(b, bt.end_s);
      out.collectives.push_back(bt);
    }
    DDPSIM_ASSERT(ci == inst.size() || inst[ci].gate > g, "schedule gates out of order");
    if (g == end) {
      out.step_s = std::max(t, block_end[static_cast<std::size_t>(end)]);
      break;
    }
    if (g == opt) out.backward_end_s = t;
    // Compute overlapping the collectives runs StepPlan::interference times slower while the
    // communication stream is busy (interfered_s): the op starts once its blockers are done, and
    // the stream stays busy until every collective launched so far ends.
    const double start = std::max(t, block_end[static_cast<std::size_t>(g)]);
    const double d = interfered_s(duration(g), comm_free - start, sp.interference);
    if (g == opt) {
      out.optimizer_s += d;
    } else if (g % per < L) {
      out.forward_s += d;
    } else {
      out.backward_s += d;
    }
    t = start + d;
  }
  return out;
}

}  // namespace ddpsim::sim
