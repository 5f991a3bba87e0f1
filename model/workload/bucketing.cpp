#include "model/workload/bucketing.hpp"

#include <algorithm>
#include <limits>

#include "model/error.hpp"

namespace ddpsim::model {

BucketPlan assign_buckets(const Workload& w, const BucketOptions& opts) {
  DDPSIM_ASSERT(opts.grad_bytes > 0, "gradient element size must be positive");
  DDPSIM_ASSERT(opts.cap_bytes > 0, "bucket cap must be positive");
  const bool rebuilt = opts.static_graph || !opts.find_unused_parameters;

  // Limits in the order compute_bucket_assignment_by_size uses them.
  std::vector<std::int64_t> limits;
  if (rebuilt && opts.first_iteration) {
    limits = {std::numeric_limits<std::int64_t>::max()};
  } else if (opts.first_bucket_bytes > 0) {
    limits = {opts.first_bucket_bytes, opts.cap_bytes};
  } else if (opts.cap_defaulted) {
    limits = {kDefaultFirstBucketBytes, opts.cap_bytes};
  } else {
    limits = {opts.cap_bytes};
  }

  // Walk order: gradient-ready order for rebuilt buckets (Reducer::rebuild_buckets walks
  // rebuilt_params_, appended by autograd_hook as gradients become ready: the workload's
  // measured order when it has one, else the reverse of parameters()), parameters() order for
  // the initial assignment that is kept when there is no rebuild.
  std::vector<int> order;
  order.reserve(w.tensors.size());
  for (int i = 0; i < static_cast<int>(w.tensors.size()); ++i) {
    if (w.tensors[static_cast<std::size_t>(i)].tied_to < 0) order.push_back(i);
  }
  const bool walk_reverse = rebuilt;
  if (walk_reverse && !w.grad_ready_order.empty()) {
    order = w.grad_ready_order;
  } else if (walk_reverse) {
    std::reverse(order.begin(), order.end());
  }

  BucketPlan plan;
  std::size_t limit_index = 0;
  Bucket current;
  current.ready_layer = std::numeric_limits<int>::max();
  auto close = [&]() {
    plan.total_bytes += current.bytes;
    plan.buckets.push_back(std::move(current));
    current = Bucket{};
    current.ready_layer = std::numeric_limits<int>::max();
    if (limit_index + 1 < limits.size()) ++limit_index;
  };
  for (int t : order) {
    const ParamTensor& p = w.tensors[static_cast<std::size_t>(t)];
    current.tensors.push_back(t);
    current.elements += p.numel();
    current.bytes += p.numel() * opts.grad_bytes;
    current.ready_layer = std::min(current.ready_layer, p.layer);
    if (current.bytes >= limits[limit_index]) close();
  }
  if (!current.tensors.empty()) close();

  // Without a rebuild the buckets were formed in parameters() order and DDP hands them to the
  // Reducer reversed ("approximate the order in which their gradients are produced").
  if (!walk_reverse) std::reverse(plan.buckets.begin(), plan.buckets.end());
  return plan;
}

}  // namespace ddpsim::model
