// The analytic DDP layout (simulator/analytic/ddp_timeline.hpp) on a plan small enough to lay out
// by hand.
#include "simulator/analytic/ddp_timeline.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ddpsim::sim
