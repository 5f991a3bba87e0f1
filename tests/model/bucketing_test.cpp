// PyTorch DDP bucket assignment on a toy model whose boundaries are worked out by hand from
// the rules in torch/nn/parallel/distributed.py and c10d's compute_bucket_assignment_by_size.
#include "model/workload/bucketing.hpp"

#include <gtest/gtest.h>

#include "model/builders/mlp.hpp"

namespace ddpsim::model {
namespace {

// Six layers, one fp32 tensor each: 400,000 / 800,000 / 1,200,000 / 200,000 / 28,000,000 /
// 4,000 bytes (1 MiB = 1,048,576; 25 MiB = 26,214,400).
Workload toy() {
  return build_from_layers({{"l0", 100000, 1, 0},
                            {"l1", 200000, 1, 0},
                            {"l2", 300000, 1, 0},
                            {"l3", 50000, 1, 0},
                            {"l4", 7000000, 1, 0},
                            {"l5", 1000, 1, 0}});
}

std::vector<std::vector<int>> tensors_of(const BucketPlan& p) {
  std::vector<std::vector<int>> out;
  for (const Bucket& b : p.buckets) out.push_back(b.tensors);
  return out;
}

TEST(BucketingTest, DefaultCapHasSmallFirstBucketInReadyOrder) {
  // Ready order is l5, l4, ...: l5 (4,000) < 1 MiB, + l4 -> 28,004,000 >= 1 MiB closes bucket 0
  // (overshooting by its last tensor). Then the limit is 25 MiB: l3+l2+l1+l0 = 2,600,000 never
  // reaches it, so the rest is bucket 1.
  const BucketPlan p = assign_buckets(toy(), {});
  EXPECT_EQ(tensors_of(p), (std::vector<std::vector<int>>{{5, 4}, {3, 2, 1, 0}}));
  EXPECT_EQ(p.buckets[0].bytes, 28004000);
  EXPECT_EQ(p.buckets[1].bytes, 2600000);
  EXPECT_EQ(p.buckets[0].ready_layer, 4);  // ready once layer 4's backward is done
  EXPECT_EQ(p.buckets[1].ready_layer, 0);
  EXPECT_EQ(p.total_bytes, 30604000);
}

TEST(BucketingTest, ExplicitCapHasNoSmallFirstBucket) {
  // bucket_cap_mb=1 set by the user: every limit is 1 MiB. l5+l4 closes; l3 (200,000) + l2
  // -> 1,400,000 closes; l1 + l0 -> 1,200,000 closes.
  BucketOptions o;
  o.cap_bytes = 1048576;
  o.cap_defaulted = false;
  EXPECT_EQ(tensors_of(assign_buckets(toy(), o)),
            (std::vector<std::vector<int>>{{5, 4}, {3, 2}, {1, 0}}));
}

TEST(BucketingTest, Torch113FirstBucketWhateverTheCap) {
  // torch 1.13 rebuilds with dist._DEFAULT_FIRST_BUCKET_BYTES even for an explicit cap. Cap
  // 100 MiB alone: every tensor (30,604,000 bytes) in one bucket; with first_bucket_bytes =
  // 1 MiB, l5+l4 (28,004,000 bytes) closes at 1 MiB and l3..l0 (2,600,000) form the second.
  BucketOptions o;
  o.cap_bytes = 100 * 1048576;
  o.cap_defaulted = false;
  EXPECT_EQ(tensors_of(assign_buckets(toy(), o)),
            (std::vector<std::vector<int>>{{5, 4, 3, 2, 1, 0}}));
  o.first_bucket_bytes = 1048576;
  EXPECT_EQ(tensors_of(assign_buckets(toy(), o)),
            (std::vector<std::vector<int>>{{5, 4}, {3, 2, 1, 0}}));
  o.cap_defaulted = true;
  EXPECT_EQ(tensors_of(assign_buckets(toy(), o)),
            (std::vector<std::vector<int>>{{5, 4}, {3, 2, 1, 0}}));
}

TEST(BucketingTest, FirstIterationIsOneBucket) {
  BucketOptions o;
  o.first_iteration = true;
  const BucketPlan p = assign_buckets(toy(), o);
  ASSERT_EQ(p.buckets.size(), 1u);
  EXPECT_EQ(p.buckets[0].bytes, 30604000);
}

TEST(BucketingTest, RebuiltBucketsFollowTheMeasuredReadyOrder) {
  // Gradients ready as l2, l5, l4, l3, l1, l0 (a model that runs l2 last): l2 (1,200,000)
  // closes the 1 MiB bucket alone; l5+l4 = 28,004,000 closes a 25 MiB one; l3+l1+l0 remain.
  Workload w = toy();
  w.grad_ready_order = {2, 5, 4, 3, 1, 0};
  EXPECT_EQ(tensors_of(assign_buckets(w, {})),
            (std::vector<std::vector<int>>{{2}, {5, 4}, {3, 1, 0}}));
  // Without a rebuild the order of parameters() is kept.
  BucketOptions o;
  o.find_unused_parameters = true;
  EXPECT_EQ(tensors_of(assign_buckets(w, o)),
            (std::vector<std::vector<int>>{{5}, {2, 3, 4}, {0, 1}}));
}

TEST(BucketingTest, FindUnusedParametersKeepsInitialReversedBuckets) {
  // No rebuild: parameters() order with limits [1 MiB, 25 MiB]: l0+l1 = 1,200,000 closes;
  // l2+l3+l4 = 29,400,000 >= 25 MiB closes; l5 alone. Handed to the Reducer reversed.
  BucketOptions o;
  o.find_unused_parameters = true;
  EXPECT_EQ(tensors_of(assign_buckets(toy(), o)),
            (std::vector<std::vector<int>>{{5}, {2, 3, 4}, {0, 1}}));
  // static_graph=True rebuilds even with find_unused_parameters.
  o.static_graph = true;
  EXPECT_EQ(tensors_of(assign_buckets(toy(), o)),
            (std::vector<std::vector<int>>{{5, 4}, {3, 2, 1, 0}}));
}

TEST(BucketingTest, HalfPrecisionGradientsHalveBytes) {
  // bf16 gradients: l5+l4 = 14,002,000 bytes still closes at the 1 MiB first limit.
  BucketOptions o;
  o.grad_bytes = 2;
  const BucketPlan p = assign_buckets(toy(), o);
  EXPECT_EQ(p.buckets[0].bytes, 14002000);
  EXPECT_EQ(p.total_bytes, 15302000);
}

TEST(BucketingTest, TiedTensorsHaveNoGradientOfTheirOwn) {
  Workload w = toy();
  w.tensors[5].tied_to = 0;  // pretend l5's weight is l0's
  const BucketPlan p = assign_buckets(w, {});
  for (const Bucket& b : p.buckets) {
    for (int t : b.tensors) EXPECT_NE(t, 5);
  }
  EXPECT_EQ(p.total_bytes, 30600000);
}

TEST(BucketingTest, ATensorBiggerThanTheCapFillsABucketAlone) {
  BucketOptions o;
  o.cap_bytes = 100000;
  o.cap_defaulted = false;
  const BucketPlan p = assign_buckets(toy(), o);
  // l5 (4,000) + l4 closes; l3 (200,000), l2, l1, l0 each reach the cap alone: 5 buckets.
  EXPECT_EQ(p.buckets.size(), 5u);
  EXPECT_EQ(tensors_of(p)[0], (std::vector<int>{5, 4}));
}

}  // namespace
}  // namespace ddpsim::model
