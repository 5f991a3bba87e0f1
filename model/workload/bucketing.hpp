// bucketing.hpp: PyTorch DDP's gradient bucket assignment, shared by the simulator and the
// executor (calibrate/) so that both reduce exactly the same buckets.
//
// Rules (torch/nn/parallel/distributed.py and c10d reducer.cpp, see docs/DESIGN.md):
//  - bucket_bytes_cap = int(bucket_cap_mb * 2^20); the default cap is 25 MiB.
//  - A small first bucket (1 MiB, kDefaultFirstBucketBytes) is used only when bucket_cap_mb is
//    left at its default; otherwise every bucket has the user's cap. torch 1.13 (no
//    bucket_cap_mb=None yet) always rebuilds with the 1 MiB first bucket (measured with
//    calibrate/torch/ddp_runner.py: a 1024-4096-1024 MLP at bucket_cap_mb=25 and 100 gives
//    buckets of 16,781,312 and 16,793,600 bytes): BucketOptions::first_bucket_bytes says so.
//  - Tensors are walked in order; a tensor is appended, then the bucket closes once its size
//    reaches the current limit (>=), so a bucket overshoots by its last tensor and a tensor
//    bigger than the cap fills a bucket alone. A tensor is never split. The limit moves from the
//    first-bucket limit to the cap after the first bucket closes.
//  - Steady state (after the first iteration, when find_unused_parameters is false or
//    static_graph is true): buckets are rebuilt in gradient-ready order, the workload's
//    grad_ready_order when it has one (an exported model), else the reverse of
//    model.parameters() order, so bucket 0 holds the last layers' gradients and is reduced first.
//  - The first iteration (same condition) runs with one single bucket holding every gradient.
//  - With find_unused_parameters=true and no static_graph there is no rebuild: tensors are
//    walked in model.parameters() order and the resulting bucket list is reversed, so the small
//    first bucket (the first layers' parameters) is the last one reduced.
//  - Buckets are keyed by dtype; tied tensors (same Parameter) have no gradient of their own.
//
//   BucketPlan p = assign_buckets(workload, {.grad_bytes = 4, .cap_bytes = 25 << 20,
//                                            .cap_defaulted = true});
//   p.buckets[0].bytes  // <= ~1 MiB + one tensor
#pragma once

#include <cstdint>
#include <vector>

#include "model/workload/workload.hpp"

namespace ddpsim::model {

inline constexpr std::int64_t kDefaultFirstBucketBytes = 1024 * 1024;
inline constexpr std::int64_t kDefaultBucketBytesCap = 25 * 1024 * 1024;

struct BucketOptions {
  int grad_bytes = 4;                               ///< bytes per gradient element in the bucket
  std::int64_t cap_bytes = kDefaultBucketBytesCap;  ///< bucket_bytes_cap
  bool cap_defaulted = true;                        ///< bucket_cap_mb left at its default
  /// > 0: the first bucket's limit whatever cap_defaulted says (torch 1.13 rebuilds with
  /// dist._DEFAULT_FIRST_BUCKET_BYTES always; scenario key parallelism.first_bucket_mb).
  std::int64_t first_bucket_bytes = 0;
  bool find_unused_parameters = false;
  bool static_graph = false;
  bool first_iteration = false;  ///< the assignment used in iteration 1 (before the rebuild)
};

struct Bucket {
  std::vector<int> tensors;  ///< indices into Workload::tensors, in the order they were added
  std::int64_t elements = 0;
  std::int64_t bytes = 0;  ///< elements * grad_bytes
  /// Smallest layer index among its tensors: backward reaches layers in reverse, so the bucket's
  /// last gradient is ready when that layer's backward finishes.
  int ready_layer = 0;
};

struct BucketPlan {
  std::vector<Bucket> buckets;  ///< in reduction (launch) order
  std::int64_t total_bytes = 0;
};

/// Assigns the workload's gradients to buckets. The workload must pass Workload::check().
BucketPlan assign_buckets(const Workload& w, const BucketOptions& opts);

}  // namespace ddpsim::model
