// The analytic DDP layout (simulator/analytic/ddp_timeline.hpp) on a plan small enough to lay out
// by hand.
#include "simulator/analytic/ddp_timeline.hpp"

#include <gtest/gtest.h>

#include "simulator/event/simulate.hpp"
#include "tests/simulator/round_machine.hpp"

namespace ddpsim::sim {
namespace {

// Two layers of 1 s forward and 1 s backward, one bucket of 0.5 s ready after layer 1's
// backward (the first in backward order), no copies, no optimizer.
StepPlan hand_plan() { return fixtures::one_bucket_plan(2, {1.0, 1.0}, {1.0, 1.0}, 0.5, 1); }

TEST(DdpTimelineTest, OverlappedBucketByHand) {
  // Forward 0-2, layer 1's backward 2-3, the bucket 3-3.5 beside layer 0's backward 3-4:
  // nothing exposed, the step's sync at 4.
  const StepPlan plan = hand_plan();
  const DdpTimeline t = ddp_timeline(plan, 1.0, plan.buckets);
  ASSERT_EQ(t.buckets.size(), 1u);
  EXPECT_DOUBLE_EQ(t.fwd_mb, 2.0);
  EXPECT_DOUBLE_EQ(t.buckets[0].ready_s, 3.0);
  EXPECT_DOUBLE_EQ(t.buckets[0].end_s, 3.5);
  EXPECT_DOUBLE_EQ(t.bwd_end, 4.0);
  EXPECT_DOUBLE_EQ(t.exposed(), 0.0);
  EXPECT_DOUBLE_EQ(t.sync_end(), 4.0);
  // Compute twice as slow (f = 2): forward 0-4, layer 1 4-6, bucket 6-6.5, layer 0 6-8.
  const DdpTimeline slow = ddp_timeline(plan, 2.0, plan.buckets);
  EXPECT_DOUBLE_EQ(slow.buckets[0].start_s, 6.0);
  EXPECT_DOUBLE_EQ(slow.bwd_end, 8.0);
}

TEST(DdpTimelineTest, InterferenceAndNoOverlapByHand) {
  // Interference 1.2: layer 0 starts at 3 with the bucket in flight until 3.5; 0.5 s at rate
  // 1/1.2 do 0.41667 s of work, the other 0.58333 s at full rate: it ends at 4.08333.
  StepPlan plan = hand_plan();
  plan.interference = 1.2;
  const DdpTimeline t = ddp_timeline(plan, 1.0, plan.buckets);
  EXPECT_NEAR(t.bwd_end, 3.0 + 0.5 + (1.0 - 0.5 / 1.2), 1e-12);
  EXPECT_NEAR(t.slowed, 0.5 - 0.5 / 1.2, 1e-12);
  // Without overlap the bucket waits for the whole backward: 4-4.5, 0.5 s exposed.
  plan.interference = 1.0;
  plan.overlap = false;
  const DdpTimeline n = ddp_timeline(plan, 1.0, plan.buckets);
  EXPECT_DOUBLE_EQ(n.buckets[0].start_s, 4.0);
  EXPECT_DOUBLE_EQ(n.sync_end(), 4.5);
  EXPECT_DOUBLE_EQ(n.exposed(), 0.5);
}

// The event engine's step on the same plan (one step, no jitter): the two layouts must agree.
EventResult event_step(const StepPlan& plan) {
  EventOptions o;
  o.steps = 1;
  return simulate_event(plan, o);
}

TEST(DdpTimelineTest, ContentionSlowsBothSidesByHand) {
  // Layers of 10 ms backward (no forward); layer 1's backward (0-10 ms) makes the 4 ms bucket
  // ready; beside layer 0 both run at half speed (compute_slowdown = collective_slowdown = 2)
  // until the bucket has done its 4 ms of work: 8 ms later, at 18 ms, with 4 ms of the layer
  // done; the layer's other 6 ms run alone: the backward ends at 24 ms.
  StepPlan plan = fixtures::one_bucket_plan(2, {0.0, 0.0}, {10e-3, 10e-3}, 4e-3, 1);
  plan.buckets[0].compute_slowdown = 2.0;
  plan.buckets[0].collective_slowdown = 2.0;
  const DdpTimeline t = ddp_timeline(plan, 1.0, plan.buckets);
  EXPECT_NEAR(t.buckets[0].start_s, 10e-3, 1e-15);
  EXPECT_NEAR(t.buckets[0].end_s, 18e-3, 1e-15);
  EXPECT_NEAR(t.bwd_end, 24e-3, 1e-15);
  EXPECT_NEAR(t.slowed, 4e-3, 1e-15);    // 14 ms for 10 ms of work
  EXPECT_NEAR(t.comm_sum, 8e-3, 1e-15);  // as laid out, not its 4 ms alone
  EXPECT_NEAR(t.exposed(), 0.0, 1e-15);
  // The event engine lays out the same processor sharing: to the nanosecond.
  const EventResult e = event_step(plan);
  EXPECT_NEAR(e.step_time_s[0], 24e-3, 1e-9);
  EXPECT_NEAR(e.buckets[0].end_s, 18e-3, 1e-9);
  EXPECT_NEAR(e.comm_time_s, 8e-3, 1e-9);
  // Only the collective slowed (compute_slowdown 1): the bucket takes 8 ms beside the layer,
  // which runs alone: 20 ms, the bucket ends at 18 ms.
  plan.buckets[0].compute_slowdown = 1.0;
  const DdpTimeline c = ddp_timeline(plan, 1.0, plan.buckets);
  EXPECT_NEAR(c.bwd_end, 20e-3, 1e-15);
  EXPECT_NEAR(c.buckets[0].end_s, 18e-3, 1e-15);
  EXPECT_NEAR(event_step(plan).step_time_s[0], 20e-3, 1e-9);
  // A bucket that outlasts the compute: 12 ms alone. Beside layer 0 it does 5 ms in the 10 ms
  // the layer takes (half speed), the other 7 ms alone: it ends at 27 ms, 7 ms exposed.
  plan.buckets[0].collective_s = 12e-3;
  const DdpTimeline l = ddp_timeline(plan, 1.0, plan.buckets);
  EXPECT_NEAR(l.buckets[0].end_s, 27e-3, 1e-15);
  EXPECT_NEAR(l.exposed(), 7e-3, 1e-15);
  EXPECT_NEAR(event_step(plan).step_time_s[0], 27e-3, 1e-9);
}

TEST(DdpTimelineTest, TwoLanesRunAPairAtItsRateByHand) {
  // gloo's two workers (comm_lanes 2), overlap off: two buckets ready when the 2 ms backward
  // ends. A: 10 ms alone, 7 ms per all-reduce in a pair (rate 10 / 14); B: 4 ms alone, 3 ms
  // in a pair (rate 4 / 6). B ends after 4 / (4/6) = 6 ms, when A has done 6 x 10/14 =
  // 4.2857 ms; A's other 5.7143 ms alone: it ends at 2 + 6 + 5.7143 = 13.7143 ms.
  StepPlan plan = fixtures::one_bucket_plan(2, {0.0, 0.0}, {1e-3, 1e-3}, 10e-3, 1);
  plan.overlap = false;
  plan.comm_lanes = 2;
  plan.buckets[0].paired_s = 7e-3;
  PlannedBucket b = plan.buckets[0];
  b.collective_s = 4e-3;
  b.paired_s = 3e-3;
  b.ready_layer = 0;
  plan.buckets.push_back(b);
  const DdpTimeline t = ddp_timeline(plan, 1.0, plan.buckets);
  const double a_end = 2e-3 + 6e-3 + (10e-3 - 6e-3 * 10.0 / 14.0);
  EXPECT_NEAR(t.buckets[0].start_s, 2e-3, 1e-15);
  EXPECT_NEAR(t.buckets[1].start_s, 2e-3, 1e-15);
  EXPECT_NEAR(t.buckets[1].end_s, 8e-3, 1e-15);
  EXPECT_NEAR(t.buckets[0].end_s, a_end, 1e-15);
  EXPECT_NEAR(t.exposed(), a_end - 2e-3, 1e-15);
  const EventResult e = event_step(plan);
  EXPECT_NEAR(e.step_time_s[0], a_end, 2e-9);
  EXPECT_NEAR(e.buckets[1].end_s, 8e-3, 2e-9);
  // One lane: one after the other, 2 + 10 + 4 = 16 ms.
  plan.comm_lanes = 1;
  EXPECT_NEAR(ddp_timeline(plan, 1.0, plan.buckets).sync_end(), 16e-3, 1e-15);
  EXPECT_NEAR(event_step(plan).step_time_s[0], 16e-3, 1e-9);
}

}  // namespace
}  // namespace ddpsim::sim
